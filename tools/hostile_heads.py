#!/usr/bin/env python3
# tools/hostile_heads.py PORT N -- N hostile request heads, one connection each, against a running
# vodpack on 127.0.0.1:PORT: the seeds of tests/corpus/http1/ mutated (bytes flipped, inserted,
# cut, header lines of up to 20 KB), seeded, so two runs send the same bytes. Watch the
# server's VmRSS before and after (docs/performance.md, the RSS over hostile heads).
import socket, random, sys, os, glob
port=int(sys.argv[1]); n=int(sys.argv[2])
seeds=[open(f,'rb').read() for f in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'corpus', 'http1', '*.http')))]
rng=random.Random(7)
def mutate(b):
    b=bytearray(b)
    for _ in range(rng.randint(1,4)):
        k=rng.randint(0,3); at=rng.randint(0,len(b))
        if k==0 and at<len(b): b[at]=rng.randint(0,255)
        elif k==1: b[at:at]=bytes([rng.choice(b'\r\n\0 :,;\t-=0123456789/?*Hh')])
        elif k==2: b=b[:at]
        else: b[at:at]=b'X-Pad: '+b'a'*rng.randint(0,20000)+b'\r\n'
    return bytes(b)
for i in range(n):
    s=socket.create_connection(('127.0.0.1',port)); s.settimeout(2)
    try:
        s.sendall(mutate(rng.choice(seeds)))
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536): pass
    except Exception: pass
    finally: s.close()
