#!/usr/bin/env python3
"""Regenerate the AMD CDNA3 (MI300) FP8 v_mfma vectors of this folder with MMA-Sim.

    python3 gen_cdna3_fp8.py [OUTDIR]      (needs `pip install mmasim==2.1.1`, PyTorch)

Instructions: v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} (K = 32, the set fnuz_k32_f32:
two blocks of 16 chained inside the instruction) and v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}
(K = 16, fnuz_k16_f32), fp8 = E4M3FNUZ, bf8 = E5M2FNUZ, binary32 C and D, through
mmasim.amd.MFMA("CDNA3", suffix) (MMA_GTR_FDPA). The file layout is generate.py's: one
block per category of 20 rows of A and 50 columns of B; A and B are byte codes shared by
the four operand pairs (column j of a block holds instruction j's outputs: fp8_fp8,
fp8_bf8, bf8_fp8, bf8_bf8, each reading the same bytes in its own formats). Categories:
  0 random bytes (0x80, the one NaN, among them), c random bits
  1 random finite codes, c finite
  2 edge codes (0x80, largest, smallest, subnormals, zeros), c +-0, +-inf, NaN, extremes
  3 cancelling pairs (a[l+1] = -a[l], b[l+1] = b[l] or its neighbour), c zero or finite
  4 even/odd spread: one parity of k near the top exponent, the other lower
  5 c on and around the alignment grid of the largest product (2^(E - 25 +- 2), both signs)
  6 subnormal and smallest codes, c zero or tiny
  7 exact cancellation to zero, c = +-0
The stream is seeded: a rerun with the same versions writes the same files.
"""
import gzip
import os
import random
import struct
import sys

import torch
import mmasim.amd as amd

TORCH = {"fp8": torch.float8_e4m3fnuz, "bf8": torch.float8_e5m2fnuz}
MBITS = {"fp8": 3, "bf8": 2}
PAIRS = [("fp8", "fp8"), ("fp8", "bf8"), ("bf8", "fp8"), ("bf8", "bf8")]
R, CC = 20, 50
NCAT = 8


def f32bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def code(e7, m, neg):
    """a code from its 7 magnitude bits; a zero stays +0 (0x80 is NaN)"""
    c = e7 & 0x7F
    return c | (0x80 if neg and c else 0)


def codes(rng, n, cat, hi_parity=None):
    if cat == 0:
        return [rng.getrandbits(8) for _ in range(n)]
    if cat == 2:
        mags = [0, 1, 2, 3, 4, 7, 8, 0x7F, 0x7E, 0x40, rng.getrandbits(7)]
        return [code(rng.choice(mags), 0, rng.getrandbits(1)) if rng.random() > 0.08 else 0x80 for _ in range(n)]
    if cat == 4:
        out = []
        for l in range(n):
            top = (l & 1) == hi_parity
            mag = rng.randint(0x70, 0x7F) if top else rng.randint(0x08, 0x60)
            out.append(code(mag, 0, rng.getrandbits(1)))
        return out
    if cat == 6:
        return [code(rng.randint(0, 12), 0, rng.getrandbits(1)) for _ in range(n)]
    # finite codes around the middle of both formats' ranges
    return [code(rng.randint(0x28, 0x58), 0, rng.getrandbits(1)) for _ in range(n)]


def values(bits, t):
    return torch.tensor(bits, dtype=torch.uint8).view(TORCH[t]).double()


def block(rng, cat, K):
    if cat == 4:
        A = [codes(rng, K, 4, rng.getrandbits(1)) for _ in range(R)]
        B = [codes(rng, K, 1) for _ in range(CC)]
    else:
        A = [codes(rng, K, cat) for _ in range(R)]
        B = [codes(rng, K, cat) for _ in range(CC)]
    if cat in (3, 7):
        for a in A:
            for l in range(0, K - 1, 2):
                a[l + 1] = a[l] ^ 0x80 if a[l] else 0
        for b in B:
            for l in range(0, K - 1, 2):
                b[l + 1] = b[l] if cat == 7 or rng.random() < 0.5 else code(b[l] + 1, 0, b[l] >> 7)
    C = [[0] * CC for _ in range(R)]
    if cat == 5:
        pa, pb = values(A, "fp8"), values(B, "fp8")
        pmax = (pa[:, None, :] * pb[None, :, :]).abs().amax(-1)
    for i in range(R):
        for j in range(CC):
            if cat == 0:
                c = rng.getrandbits(32)
            elif cat == 2:
                c = rng.choice([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F7FFFFF, 0xFF7FFFFF, 1,
                                0x80000001, 0x00800000, f32bits(1.0), f32bits(-1.0)])
            elif cat == 5 and pmax[i, j] > 0:
                e = int(torch.floor(torch.log2(pmax[i, j]))) + rng.randint(-1, 1) - 25 + rng.randint(-2, 2)
                v = (1 + rng.getrandbits(23) * 2.0 ** -23) * 2.0 ** max(e, -126)
                c = f32bits(-v if rng.getrandbits(1) else v)
            elif cat == 6:
                c = rng.choice([0, 0x80000000, 1, 0x80000001, f32bits(2.0 ** -126), f32bits(-(2.0 ** -30))])
            elif cat == 7 or (cat == 3 and rng.random() < 0.5):
                c = rng.choice([0, 0x80000000])
            else:
                v = (1 + rng.getrandbits(23) * 2.0 ** -23) * 2.0 ** rng.randint(-20, 20)
                c = f32bits(-v if rng.getrandbits(1) else v)
            C[i][j] = c
    return A, B, C


def run(rng, shape, K):
    sims = [amd.MFMA("CDNA3", f"f32_{shape}_{ta}_{tb}") for ta, tb in PAIRS]
    assert all(s.k == K for s in sims)
    lines = [f"4d4d4153 {K:x} 0 {NCAT:x} {len(PAIRS):x}"]
    for j in range(len(PAIRS)):
        lines.append(f"{j:x} 1 {IDS[shape] + j:x}")
    for cat in range(NCAT):
        A, B, C = block(rng, cat, K)
        c = torch.tensor(C, dtype=torch.int64).to(torch.int32).view(torch.float32)
        outs = []
        for (ta, tb), s in zip(PAIRS, sims):
            a = torch.tensor(A, dtype=torch.uint8).view(TORCH[ta])
            b = torch.tensor(B, dtype=torch.uint8).view(TORCH[tb]).T.contiguous()
            outs.append(s(a, b, c.clone()).view(torch.int32).reshape(-1).tolist())
        lines.append(f"{R:x} {CC:x} {cat:x}")
        for row in A + B:
            lines.append(" ".join(f"{x:02x}" for x in row))
        flat = [x for row in C for x in row]
        for o, cv in enumerate(flat):
            lines.append(" ".join(f"{x & 0xFFFFFFFF:08x}" for x in [cv] + [d[o] for d in outs]))
    return ("\n".join(lines) + "\n").encode()


IDS = {"16x16x32": 240, "32x32x16": 244}   # index.txt ids of fp8_fp8; +1 fp8_bf8, +2 bf8_fp8, +3 bf8_bf8


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    torch.set_num_threads(1)
    rng = random.Random(20261128)
    for shape, K in [("16x16x32", 32), ("32x32x16", 16)]:
        with open(os.path.join(out, f"fnuz_k{K}_f32.txt.gz"), "wb") as fh:
            with gzip.GzipFile(filename="", mode="wb", fileobj=fh, compresslevel=9, mtime=0) as gz:
                gz.write(run(rng, shape, K))


if __name__ == "__main__":
    main()
