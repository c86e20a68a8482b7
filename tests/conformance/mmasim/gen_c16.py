#!/usr/bin/env python3
"""Regenerate the Volta mma.sync.m8n8k4 .f32.f16.f16.f16 vectors (binary16 C,
binary32 D) of this folder with MMA-Sim, K = 16 (four chained blocks of 4).
Same row kinds and file layout as gen_scaled.py (no scales); c is a binary16
bit pattern. See README.md.

    python3 gen_c16.py [OUTDIR]      (needs `pip install mmasim==2.1.1`, PyTorch)
"""
import os
import random
import sys

import torch
import mmasim.nv_ptx as nv

import gen_scaled
from gen_scaled import cancel, elem_codes, write

gen_scaled.BITS["f16"] = 16


def gen(rng, K, rows):
    op = nv.MMA("Volta", "m8n8k4.f32.f16.f16.f16").arithmetic_op
    A, B, C = [], [], []
    for r in range(rows):
        mode = ["bits", "real", "edge", "cancel"][r % 4]
        em = "real" if mode == "cancel" else mode
        a = elem_codes(rng, "f16", K, em)
        b = elem_codes(rng, "f16", K, em)
        if mode == "real":   # binary16 values near 1 and C anywhere, subnormals included
            a = [(rng.getrandbits(1) << 15) | rng.randint(0x3000, 0x4800) for _ in range(K)]
            b = [(rng.getrandbits(1) << 15) | rng.randint(0x0400, 0x4800) for _ in range(K)]
        if mode == "cancel":
            cancel(rng, a, b, 16)
        c = elem_codes(rng, "f16", 1, "edge" if r % 8 == 2 else "bits")[0]
        if r % 8 == 5:   # a binary16 subnormal C above small products: its exponent's floor -14 decides
            a = [(rng.getrandbits(1) << 15) | rng.randint(0x0c00, 0x2000) for _ in range(K)]
            b = [(rng.getrandbits(1) << 15) | rng.randint(0x0c00, 0x2000) for _ in range(K)]
            c = (rng.getrandbits(1) << 15) | rng.randint(1, 0x3ff)
        A.append(a)
        B.append(b)
        C.append(c)
    a = torch.tensor(A, dtype=torch.int32).to(torch.int16).view(torch.float16)
    b = torch.tensor(B, dtype=torch.int32).to(torch.int16).view(torch.float16)
    c = torch.tensor(C, dtype=torch.int32).to(torch.int16).view(torch.float16)
    d = op.dpa(a, b, c).view(torch.int32).tolist()
    for r in range(rows):
        words = [3, 3] + A[r] + B[r] + [C[r], d[r] & 0xFFFFFFFF]   # 3: MPE_FP16
        yield " ".join("%x" % w for w in words)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(20261129)
    write(os.path.join(out, "mma_volta_m8n8k4_f32_f16c_k16.txt.gz"), gen(rng, 16, 4000))


if __name__ == "__main__":
    main()
