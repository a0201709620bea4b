# Writes the hand-made H.264 stream of slice_header/tests.rs (HAND_MADE_AVC) from the
# syntax tables of H.264 7.3.2 and 7.3.3; prints it in hex. Run: python3 gen_avc.py
import os
exec(open(os.path.join(os.path.dirname(__file__), 'bitwriter.py')).read())
def hdr(w,ref,t): w.u(1,0); w.u(2,ref); w.u(5,t)
def cavlc_end(w): w.trailing()  # slice data stand-in starts with the stop bit
nals=[]
# SPS id 0: High, 4:4:4 separate colour planes, POC type 1, fields
w=W(); hdr(w,3,7); w.u(8,100); w.u(8,0); w.u(8,40); w.ue(0); w.ue(3); w.f(1); w.ue(0); w.ue(0); w.f(0); w.f(0)
w.ue(2); w.ue(1); w.f(0); w.se(0); w.se(0); w.ue(1); w.se(2); w.ue(4); w.f(0); w.ue(21); w.ue(8); w.f(0); w.f(0); w.f(1); w.f(0); w.f(0); w.trailing(); nals.append(w.bytes())
# SPS id 3: Extended, POC type 0, frames
w=W(); hdr(w,3,7); w.u(8,88); w.u(8,0); w.u(8,30); w.ue(3); w.ue(0); w.ue(0); w.ue(2); w.ue(2); w.f(0); w.ue(10); w.ue(8); w.f(1); w.f(1); w.f(0); w.f(0); w.trailing(); nals.append(w.bytes())
# PPS 0 -> SPS 0: CAVLC, bottom field POC, weights, deblocking, redundant_pic_cnt
w=W(); hdr(w,3,8); w.ue(0); w.ue(0); w.f(0); w.f(1); w.ue(0); w.ue(2); w.ue(1); w.f(1); w.u(2,1); w.se(0); w.se(0); w.se(0); w.f(1); w.f(0); w.f(1); w.trailing(); nals.append(w.bytes())
# PPS 7 -> SPS 3: two slice groups, map type 4, change rate 5
w=W(); hdr(w,3,8); w.ue(7); w.ue(3); w.f(0); w.f(0); w.ue(1); w.ue(4); w.f(1); w.ue(4); w.ue(0); w.ue(0); w.f(0); w.u(2,0); w.se(0); w.se(0); w.se(0); w.f(0); w.f(0); w.f(0); w.trailing(); nals.append(w.bytes())
# PPS 9 -> SPS 3: CABAC, explicit P weights, implicit B weights
w=W(); hdr(w,3,8); w.ue(9); w.ue(3); w.f(1); w.f(0); w.ue(0); w.ue(0); w.ue(0); w.f(1); w.u(2,2); w.se(0); w.se(0); w.se(0); w.f(1); w.f(0); w.f(0); w.trailing(); nals.append(w.bytes())
data=bytes([0x9a,0xbc,0xde])
def cavlc(w): w.trailing(); return w.bytes()+data
def cabac(w):
    while len(w.b)%8: w.b.append(1)
    return w.bytes()+data
# S1 IDR I field, colour plane 1
w=W(); hdr(w,3,5); w.ue(0); w.ue(7); w.ue(0); w.u(2,1); w.u(6,0); w.f(1); w.f(1); w.ue(3); w.se(-2); w.ue(0)
w.f(0); w.f(1); w.se(-3); w.ue(0); w.se(1); w.se(-1); nals.append(cavlc(w))
# S2 P frame: POC deltas, redundant, list modification, weights (no chroma), every MMCO
w=W(); hdr(w,2,1); w.ue(22); w.ue(0); w.ue(0); w.u(2,2); w.u(6,1); w.f(0); w.se(4); w.se(-1); w.ue(1)
w.f(1); w.ue(4)
w.f(1); w.ue(0); w.ue(3); w.ue(2); w.ue(1); w.ue(1); w.ue(0); w.ue(3)
w.ue(5)
for f in [1,0,0,1,0]:
    w.f(f)
    if f: w.se(3); w.se(-7)
w.f(1); w.ue(1); w.ue(0); w.ue(2); w.ue(1); w.ue(3); w.ue(0); w.ue(1); w.ue(4); w.ue(2); w.ue(5); w.ue(6); w.ue(0); w.ue(0)
w.se(2); w.ue(1); nals.append(cavlc(w))
# S3 B field, non-reference, 21 and 32 references, explicit bi-pred weights
w=W(); hdr(w,0,1); w.ue(0); w.ue(6); w.ue(0); w.u(2,0); w.u(6,2); w.f(1); w.f(0); w.se(1); w.ue(0); w.f(1)
w.f(1); w.ue(20); w.ue(31)
w.f(0); w.f(1); w.ue(2); w.ue(0); w.ue(3)
w.ue(0)
for i in range(21): w.f(0)
for i in range(32):
    w.f(1 if i==0 else 0)
    if i==0: w.se(1); w.se(1)
w.se(0); w.ue(2); w.se(0); w.se(0); nals.append(cavlc(w))
# S4 P in slice groups: slice_group_change_cycle of 5 bits
w=W(); hdr(w,1,1); w.ue(0); w.ue(5); w.ue(7); w.u(4,3); w.u(6,9); w.f(0); w.f(0); w.f(0); w.se(1); w.u(5,17); nals.append(cavlc(w))
# S5 SP
w=W(); hdr(w,0,1); w.ue(3); w.ue(3); w.ue(7); w.u(4,4); w.u(6,10); w.f(1); w.ue(1); w.f(0); w.se(0); w.f(1); w.se(-1); w.u(5,3); nals.append(cavlc(w))
# S6 SI
w=W(); hdr(w,1,1); w.ue(0); w.ue(9); w.ue(7); w.u(4,5); w.u(6,11); w.f(0); w.se(0); w.se(2); w.u(5,4); nals.append(cavlc(w))
# S7 CABAC B, implicit weights
w=W(); hdr(w,0,1); w.ue(0); w.ue(1); w.ue(9); w.u(4,6); w.u(6,12); w.f(0); w.f(0); w.f(0); w.f(0); w.ue(2); w.se(-1); w.ue(0); w.se(2); w.se(-2); nals.append(cabac(w))
# S8 CABAC P, explicit weights with chroma
w=W(); hdr(w,2,1); w.ue(0); w.ue(0); w.ue(9); w.u(4,7); w.u(6,13); w.f(0); w.f(0); w.ue(2); w.ue(1); w.f(1); w.se(-5); w.se(6); w.f(1); w.se(1); w.se(2); w.se(3); w.se(4); w.f(0); w.ue(0); w.se(0); w.ue(1); nals.append(cabac(w))
out=b''.join(b'\x00\x00\x00\x01'+esc(n) for n in nals)
# out is the stream; its hex goes into tests.rs (HAND_MADE_AVC)
print(out.hex())
