# Writes the hand-made H.265 stream of slice_header/tests.rs (HAND_MADE_HEVC) from the
# syntax tables of H.265 7.3.2 and 7.3.6; prints it in hex. Run: python3 gen_hevc.py
import os
exec(open(os.path.join(os.path.dirname(__file__), 'bitwriter.py')).read())
def hdr(w,t): w.u(1,0); w.u(6,t); w.u(6,0); w.u(3,1)
def ptl(w):
    w.u(2,0); w.u(1,0); w.u(5,1); w.u(32,0x60000000); w.u(4,0b1001); w.u(43,0); w.u(1,0); w.u(8,93)
nals=[]
w=W(); hdr(w,32); w.u(4,0); w.u(1,1); w.u(1,1); w.u(6,0); w.u(3,0); w.u(1,1); w.u(16,0xffff); ptl(w)
w.u(1,1); w.ue(4); w.ue(0); w.ue(0); w.u(6,0); w.ue(0); w.u(1,0); w.u(1,0); w.trailing(); nals.append(w.bytes())
# SPS
w=W(); hdr(w,33); w.u(4,0); w.u(3,0); w.u(1,1); ptl(w); w.ue(0); w.ue(1); w.ue(352); w.ue(288); w.f(0)
w.ue(0); w.ue(0); w.ue(4); w.f(1); w.ue(4); w.ue(0); w.ue(0)
w.ue(0); w.ue(3); w.ue(0); w.ue(3); w.ue(0); w.ue(0); w.f(0); w.f(0); w.f(1); w.f(0)
w.ue(3)
# set0: S0 -1 used, -3 unused; S1 +1 used
w.ue(2); w.ue(1); w.ue(0); w.f(1); w.ue(1); w.f(0); w.ue(0); w.f(1)
# set1: predicted from set0, delta_rps -1
w.f(1); w.f(1); w.ue(0)
w.f(1)            # j0 used
w.f(0); w.f(1)    # j1 unused, use_delta
w.f(1)            # j2 used (poc 0, dropped)
w.f(1)            # j3 delta_rps used
# set2: one negative
w.f(0); w.ue(1); w.ue(0); w.ue(1); w.f(1)
w.f(1); w.ue(3)
for lsb,used in [(10,1),(20,0),(30,1)]: w.u(8,lsb); w.f(used)
w.f(1); w.f(0); w.f(0); w.f(0); w.trailing(); nals.append(w.bytes())
# PPS
w=W(); hdr(w,34); w.ue(0); w.ue(0); w.f(1); w.f(1); w.u(3,2); w.f(0); w.f(1); w.ue(1); w.ue(0); w.se(0)
w.f(0); w.f(0); w.f(0); w.se(0); w.se(0); w.f(1); w.f(1); w.f(1); w.f(0); w.f(1); w.f(0)
w.ue(1); w.ue(1); w.f(1); w.f(1)
w.f(1); w.f(1); w.f(1); w.f(0); w.se(0); w.se(0); w.f(0); w.f(1); w.ue(0); w.f(1)
w.f(1); w.f(1); w.f(0); w.f(0); w.f(0); w.u(4,0)
w.f(0); w.f(1); w.ue(0); w.ue(0); w.se(0); w.se(0); w.ue(0); w.ue(0)
w.trailing(); nals.append(w.bytes())
data=bytes([0x80,0x12,0x34,0x56,0x78])
# slice A: P, sps set 1, long-term, list modification, weights, tiles entry points, extension
w=W(); hdr(w,1); w.f(1); w.ue(0); w.u(2,0); w.ue(1); w.f(1); w.u(8,5); w.f(1); w.u(2,1)
w.ue(1); w.ue(1); w.u(2,2); w.f(1); w.ue(0); w.u(8,3); w.f(1); w.f(0)
w.f(1)  # slice_temporal_mvp
w.f(1); w.f(0)  # sao
w.f(1); w.ue(2)  # override l0 = 2 (3 refs)
w.f(1); w.u(2,1); w.u(2,3); w.u(2,0)  # list_entry_l0 x3, NumPicTotalCurr 4
w.f(1)  # cabac_init_flag
w.ue(1)  # collocated_ref_idx
w.ue(6); w.se(-1); w.f(1); w.f(0); w.f(1); w.f(0); w.f(1); w.f(0)
w.se(2); w.se(-3); w.se(1); w.se(0); w.se(-2); w.se(5); w.se(0); w.se(0)
w.ue(2); w.se(3); w.se(1); w.se(-1); w.f(1); w.f(1); w.f(0); w.se(1); w.se(-1); w.f(1)
w.ue(3); w.ue(9); w.u(10,100); w.u(10,0); w.u(10,1023)
w.ue(3); w.u(8,0); w.u(8,0); w.u(8,1)
w.align(); nals.append(w.bytes()+data)
# slice B: dependent segment
w=W(); hdr(w,1); w.f(0); w.ue(0); w.f(1); w.u(5,15); w.ue(0); w.ue(0); w.align(); nals.append(w.bytes()+data)
# slice C: B, inter-predicted set coded in the slice (delta_idx_minus1 1)
w=W(); hdr(w,1); w.f(0); w.ue(0); w.f(0); w.u(5,20); w.u(2,3); w.ue(0); w.f(0); w.u(8,5); w.f(0)
w.f(1); w.ue(1); w.f(0); w.ue(1); w.f(1); w.f(0); w.f(0); w.f(1); w.f(0); w.f(1)
w.ue(0); w.ue(0)  # long-term: none
w.f(0)  # slice_temporal_mvp off
w.f(0); w.f(0)  # sao
w.f(1); w.ue(1); w.ue(1)
w.f(0); w.f(1); w.u(1,1); w.u(1,0)  # list modification: l1 only, 1 bit each
w.f(1)  # mvd_l1_zero
w.f(0)  # cabac_init
w.ue(0); w.se(0); w.f(0); w.f(0); w.f(0); w.f(0); w.f(1); w.f(0); w.f(0); w.f(0); w.se(4); w.se(-4)
w.ue(0); w.se(0); w.se(0); w.se(0); w.f(0); w.f(1); w.f(1)
w.ue(0); w.ue(0); w.align(); nals.append(w.bytes()+data)
# IDR slice: no POC, no refs; I slice
w=W(); hdr(w,19); w.f(1); w.f(0); w.ue(0); w.u(2,0); w.ue(2); w.f(1); w.f(1); w.f(1); w.se(-2); w.se(0); w.se(0); w.f(0); w.f(0); w.f(1); w.ue(0); w.ue(0); w.align(); nals.append(w.bytes()+data)
out=b''.join(b'\x00\x00\x00\x01'+esc(n) for n in [nals[0],nals[1],nals[2],nals[6],nals[3],nals[4],nals[5]])
# out is the stream; its hex goes into tests.rs (HAND_MADE_HEVC)
print(out.hex())
