#!/usr/bin/env python3
"""Regenerate the block-scaled MMA vectors of this folder with MMA-Sim.

    python3 gen_scaled.py [OUTDIR]      (needs `pip install mmasim==2.1.1`, PyTorch)

Writes one gzip file per instruction family (see README.md): random-bit inputs
as MMA-Sim's own validation draws them, realistic MX scales, and adversarial
sets (exponent edges, ties at the truncation grid, cancellation, subnormal
elements, zero and NaN scales, zero and special C). The stream is seeded, so a
rerun with the same MMA-Sim version gives the same files. Nothing in `make
check` runs this script; the tests read the committed files.
"""
import gzip
import os
import random
import struct
import sys

import torch
import mmasim.nv_ptx as nv

BITS = {"e4m3": 8, "e5m2": 8, "e3m2": 6, "e2m3": 6, "e2m1": 4}
TORCH = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
TYPES = ["e4m3", "e5m2", "e3m2", "e2m3", "e2m1"]
MPE_TYPE = {"e4m3": 5, "e5m2": 6, "e2m3": 12, "e3m2": 13, "e2m1": 14}   # mpe_type values


def f32bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def rand_c(rng, mode):
    """c as binary32 bits"""
    if mode == "bits":
        return rng.getrandbits(32)
    pick = rng.random()
    if mode == "edge":
        choices = [0, 0x80000000, 1, 0x80000001, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
                   0xFF800000, 0x7FC00000, f32bits(2.0 ** -126 * 1.5), f32bits(-(2.0 ** -140)),
                   f32bits(1.0), f32bits(-1.0), f32bits(3.0 * 2.0 ** -25), f32bits(2.0 ** 100)]
        return rng.choice(choices)
    if pick < 0.25:
        return 0
    e = rng.randint(-40, 40)
    return f32bits((-1) ** rng.getrandbits(1) * (1 + rng.getrandbits(23) * 2.0 ** -23) * 2.0 ** e)


def elem_codes(rng, t, k, mode):
    nb = BITS[t]
    top = (1 << nb) - 1
    if mode == "bits":
        return [rng.getrandbits(nb) for _ in range(k)]
    if mode == "edge":
        sgn = 1 << (nb - 1)
        mag = [0, 1, 2, (1 << (nb - 1)) - 1, (1 << (nb - 1)) - 2, 1 << (nb - 1 - (3 if nb == 8 else 2)),
               rng.getrandbits(nb - 1)]
        if t == "e4m3":
            mag[3] = 0x7E   # the largest finite; 0x7F is NaN
        if t == "e5m2":
            mag[3] = 0x7B   # the largest finite; 0x7C inf
        return [rng.choice(mag) | (sgn if rng.getrandbits(1) else 0) for _ in range(k)]
    return [rng.getrandbits(nb) & top for _ in range(k)]


def scale_codes(rng, n, mode, ue4m3=False):
    if mode == "bits":
        return [rng.getrandbits(8) for _ in range(n)]
    if mode == "edge":
        if ue4m3:
            return [rng.choice([0x00, 0x80, 0x01, 0x08, 0x7E, 0xFE, 0x38, 0xB8, 0x7F, 0x37]) for _ in range(n)]
        return [rng.choice([0, 1, 2, 126, 127, 128, 200, 253, 254, 255, 60, 10]) for _ in range(n)]
    if ue4m3:
        return [rng.randint(0x20, 0x50) | (0x80 if rng.random() < 0.1 else 0) for _ in range(n)]
    return [127 + rng.randint(-12, 12) for _ in range(n)]


def cancel(rng, a, b, nb):
    """pairs that cancel: a[l+1] = -a[l], b[l+1] = b[l]"""
    sgn = 1 << (nb - 1)
    for l in range(0, len(a) - 1, 2):
        a[l + 1] = a[l] ^ sgn
        b[l + 1] = b[l]


def decode_small(code, t):
    """FP6/FP4 codes as MMA-Sim's kind::mxf8f6f4 holds them in a byte: FP6 in
    bits 5:0, FP4 in bits 5:2"""
    return code << 2 if t == "e2m1" else code


FP4 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def fp4_value(code):
    v = FP4[code & 7]
    return -v if code & 8 else v


def gen_st(rng, ta, tb, K, rows):
    op = nv.TCGen05MMABlockScale("Blackwell", f"m128n8k32.kind::mxf8f6f4.block32.f32.{ta}.{tb}.ue8m0").arithmetic_op
    nbk = K // 32
    A, B, SA, SB, C = [], [], [], [], []
    for r in range(rows):
        mode = ["bits", "real", "edge", "cancel"][r % 4]
        em = "real" if mode == "cancel" else mode
        a = elem_codes(rng, ta, K, em)
        b = elem_codes(rng, tb, K, em)
        if mode == "cancel" and BITS[ta] == BITS[tb]:
            cancel(rng, a, b, BITS[ta])
        A.append(a)
        B.append(b)
        SA.append(scale_codes(rng, nbk, "real" if mode == "cancel" else mode))
        SB.append(scale_codes(rng, nbk, "real" if mode == "cancel" else mode))
        C.append(rand_c(rng, "real" if mode == "cancel" else mode))

    def operand(codes, t):
        x = torch.tensor(codes, dtype=torch.uint8)
        if t in TORCH:
            return x.view(TORCH[t])
        return x.apply_(lambda v: decode_small(v, t))

    a = torch.stack([operand(x, ta) for x in A])
    b = torch.stack([operand(x, tb) for x in B])
    sa = torch.tensor(SA, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    sb = torch.tensor(SB, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    c = torch.tensor(C, dtype=torch.int64).to(torch.int32).view(torch.float32)
    # one instruction per 32 elements, each result the next one's c (MMA-Sim's
    # MMA_ST_FDPA.dpa takes the scales of one instruction)
    for i in range(0, K, 32):
        c = op.dpa(a[:, i:i + 32], b[:, i:i + 32], c, sa[:, i // 32:i // 32 + 1], sb[:, i // 32:i // 32 + 1])
    d = c.view(torch.int32).tolist()
    for r in range(rows):
        words = [MPE_TYPE[ta], MPE_TYPE[tb]] + A[r] + B[r] + SA[r] + SB[r] + [C[r], d[r] & 0xFFFFFFFF]
        yield " ".join("%x" % w for w in words)


def gen_gst(rng, kind, block, st, K, rows):
    op = nv.TCGen05MMABlockScale("Blackwell", f"m128n8k64.kind::{kind}.block{block}.f32.e2m1.e2m1.{st}").arithmetic_op
    nbk = K // block
    ue4m3 = st == "ue4m3"
    A, B, SA, SB, C = [], [], [], [], []
    for r in range(rows):
        mode = ["bits", "real", "edge", "cancel"][r % 4]
        em = "real" if mode == "cancel" else mode
        a = elem_codes(rng, "e2m1", K, em)
        b = elem_codes(rng, "e2m1", K, em)
        if mode == "cancel":
            cancel(rng, a, b, 4)
        if mode == "edge" and rng.random() < 0.3:   # whole groups of zero products
            g = rng.randrange(K // 16)
            for l in range(16 * g, 16 * g + 16):
                a[l] = rng.choice([0, 8])
        A.append(a)
        B.append(b)
        SA.append(scale_codes(rng, nbk, em, ue4m3))
        SB.append(scale_codes(rng, nbk, em, ue4m3))
        C.append(rand_c(rng, em))
    a = torch.tensor([[fp4_value(v) for v in x] for x in A], dtype=torch.float32)
    b = torch.tensor([[fp4_value(v) for v in x] for x in B], dtype=torch.float32)
    sdt = torch.float8_e4m3fn if ue4m3 else torch.float8_e8m0fnu
    sa = torch.tensor(SA, dtype=torch.uint8).view(sdt)
    sb = torch.tensor(SB, dtype=torch.uint8).view(sdt)
    c = torch.tensor(C, dtype=torch.int64).to(torch.int32).view(torch.float32)
    d = op.dpa(a, b, c, sa, sb).view(torch.int32).tolist()
    for r in range(rows):
        words = [14, 14] + A[r] + B[r] + SA[r] + SB[r] + [C[r], d[r] & 0xFFFFFFFF]
        yield " ".join("%x" % w for w in words)


def write(path, lines):
    with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as f:
        for line in lines:
            f.write((line + "\n").encode())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = random.Random(20261127)

    def st_lines():
        for ta in TYPES:
            for tb in TYPES:
                yield from gen_st(rng, ta, tb, 32, 400)

    write(os.path.join(out, "tcgen05_mxf8f6f4_k32.txt.gz"), st_lines())
    write(os.path.join(out, "tcgen05_mxf8f6f4_k96.txt.gz"),
          (l for ta, tb in [("e4m3", "e4m3"), ("e5m2", "e2m1"), ("e3m2", "e2m3")]
           for l in gen_st(rng, ta, tb, 96, 400)))
    for kind, block, st in [("mxf4", 32, "ue8m0"), ("mxf4nvf4", 32, "ue8m0"), ("mxf4nvf4", 16, "ue8m0"),
                            ("mxf4nvf4", 16, "ue4m3")]:
        write(os.path.join(out, f"tcgen05_{kind}_block{block}_{st}_k128.txt.gz"),
              gen_gst(rng, kind, block, st, 128, 2500))


if __name__ == "__main__":
    main()
