#!/usr/bin/env python3
"""Regenerate the mixed FP8 (E4M3 x E5M2, E5M2 x E4M3) vectors of this folder
with MMA-Sim: Ada's mma.sync m16n8k32 and Hopper's wgmma m64nNk32, binary32
output, K = 64. Same row kinds, seeding and file layout as gen_scaled.py
(without scales); see README.md.

    python3 gen_mixed.py [OUTDIR]      (needs `pip install mmasim==2.1.1`, PyTorch)
"""
import os
import random
import sys

import torch
import mmasim.nv_ptx as nv

from gen_scaled import MPE_TYPE, TORCH, cancel, elem_codes, rand_c, write


def gen(rng, op_of, K, rows):
    for ta, tb in [("e4m3", "e5m2"), ("e5m2", "e4m3")]:
        op = op_of(ta, tb).arithmetic_op
        A, B, C = [], [], []
        for r in range(rows):
            mode = ["bits", "real", "edge", "cancel"][r % 4]
            em = "real" if mode == "cancel" else mode
            a = elem_codes(rng, ta, K, em)
            b = elem_codes(rng, tb, K, em)
            if mode == "cancel":
                cancel(rng, a, b, 8)
            A.append(a)
            B.append(b)
            C.append(rand_c(rng, em))
        a = torch.tensor(A, dtype=torch.uint8).view(TORCH[ta])
        b = torch.tensor(B, dtype=torch.uint8).view(TORCH[tb])
        c = torch.tensor(C, dtype=torch.int64).to(torch.int32).view(torch.float32)
        d = op.dpa(a, b, c).view(torch.int32).tolist()
        for r in range(rows):
            words = [MPE_TYPE[ta], MPE_TYPE[tb]] + A[r] + B[r] + [C[r], d[r] & 0xFFFFFFFF]
            yield " ".join("%x" % w for w in words)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(20261128)
    write(os.path.join(out, "mma_ada_fp8_mixed_k64.txt.gz"),
          gen(rng, lambda ta, tb: nv.MMA("Ada Lovelace", f"m16n8k32.f32.{ta}.{tb}.f32"), 64, 2500))
    write(os.path.join(out, "wgmma_hopper_fp8_mixed_k64.txt.gz"),
          gen(rng, lambda ta, tb: nv.WGMMA("Hopper", f"m64n8k32.f32.{ta}.{tb}"), 64, 2500))


if __name__ == "__main__":
    main()
