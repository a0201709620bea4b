# A tiny MSB-first bit writer (u, ue, se, rbsp trailing bits) and emulation prevention,
# for the hand-made H.264 and H.265 streams of the slice header tests.
class W:
    def __init__(s): s.b=[]
    def u(s,n,v):
        for i in range(n-1,-1,-1): s.b.append((v>>i)&1)
    def f(s,v): s.u(1,1 if v else 0)
    def ue(s,v):
        v+=1; n=v.bit_length(); s.u(n-1,0); s.u(n,v)
    def se(s,v): s.ue(2*v-1 if v>0 else -2*v)
    def trailing(s):
        s.b.append(1)
        while len(s.b)%8: s.b.append(0)
    def align(s):
        s.b.append(1)
        while len(s.b)%8: s.b.append(0)
    def bytes(s):
        assert len(s.b)%8==0
        return bytes(int(''.join(map(str,s.b[i:i+8])),2) for i in range(0,len(s.b),8))
def esc(b):
    out=bytearray(); z=0
    for x in b:
        if z>=2 and x<=3: out.append(3); z=0
        out.append(x); z = z+1 if x==0 else 0
    return bytes(out)
