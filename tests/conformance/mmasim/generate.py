#!/usr/bin/env python3
"""Regenerate the MMA-Sim conformance vectors of tests/conformance/mmasim.

MMA-Sim (Microsoft, https://github.com/microsoft/MMA-Sim, `pip install mmasim`,
arXiv:2511.10909) is a bit-accurate simulator of NVIDIA's mma, wgmma and
tcgen05.mma instructions and AMD's v_mfma that its authors validated against
real GPUs. This script runs it on every instruction that both it and mpemu
model (same-type FP16, BF16, TF32/xf32, E4M3, E5M2 operands with an FP32 or
FP16 accumulator; FP64 operands and accumulator) and writes the
inputs with MMA-Sim's outputs, for tests/check_tc.c to compare with mpemu's
built-in models in `make check`. `make check` never runs this script.

Usage (where mmasim and torch are installed):
    python3 tests/conformance/mmasim/generate.py [--seed N] [--out DIR]

Files: one per operand set `<in>_k<K>_<out>.txt.gz` (in: fp16 bf16 tf32 e4m3
e5m2 f64; K: the instruction's k; out: f32, f16 or f64), every line hex words:
  line 1:            4d4d4153 K out nblocks ncols   (out: 0 f32, 1 f16, 2 f64)
  ncols lines:       column nids id1 id2 ...   (the instructions, by the ids of
                                                INSTRS below, whose MMA-Sim
                                                output is that column)
  then nblocks blocks, each:
    R Cc category    (category: the index into CATEGORIES)
    R lines of K words: the rows of A (bit patterns of the input format;
                        TF32 as the raw binary32 word the instruction reads)
    Cc lines of K words: the columns of B
    R*Cc lines:      c d_0 .. d_{ncols-1}  for output (i, j), i major: c and d
                     as binary32 (f32), binary16 (f16) or binary64 (f64)
                     bit patterns (A and B of f64 sets: binary64)
Instructions whose outputs are identical on a whole set share a column.
index.txt lists every instruction with its id, set, column and mpemu model.
"""
import argparse
import datetime
import gzip
import math
import os
import sys

import torch
import mmasim
from mmasim import amd, nv_ptx

# ---------------------------------------------------------------- formats

FMT = {
    # name: (torch dtype, bits, exponent bits, mantissa bits, bias)
    "fp16": (torch.float16, 16, 5, 10, 15),
    "bf16": (torch.bfloat16, 16, 8, 7, 127),
    "tf32": (torch.float32, 32, 8, 23, 127),   # the raw binary32 word
    "e4m3": (torch.float8_e4m3fn, 8, 4, 3, 7),
    "e5m2": (torch.float8_e5m2, 8, 5, 2, 15),
    "f32": (torch.float32, 32, 8, 23, 127),
    "f16": (torch.float16, 16, 5, 10, 15),
    "f64": (torch.float64, 64, 11, 52, 1023),
}
INT_VIEW = {8: torch.uint8, 16: torch.int16, 32: torch.int32, 64: torch.int64}


def max_finite(f):
    dt = FMT[f][0]
    return torch.finfo(dt).max


def tensor_of_bits(f, bits):
    """int64 tensor of bit patterns -> tensor of format f"""
    dt, nb = FMT[f][0], FMT[f][1]
    if nb == 64:   # int64 patterns (negative above 2^63) are the bits already
        return bits.view(dt)
    b = bits & ((1 << nb) - 1)
    if nb == 8:
        return b.to(torch.uint8).view(dt)
    if nb == 16:
        b = torch.where(b >= 1 << 15, b - (1 << 16), b)
        return b.to(torch.int16).view(dt)
    b = torch.where(b >= 1 << 31, b - (1 << 32), b)
    return b.to(torch.int32).view(dt)


def bits_of(f, t):
    nb = FMT[f][1]
    v = t.view(INT_VIEW[nb]).to(torch.int64)
    return v if nb == 64 else v & ((1 << nb) - 1)


def bits_of_values(f, v):
    """float64 values (finite, inf, nan) -> bit patterns of format f (nearest)"""
    dt = FMT[f][0]
    m = max_finite(f)
    if f in ("e4m3",):   # no infinity: keep finite values finite
        v = torch.where(torch.isinf(v), torch.sign(v) * m, v)
    fin = torch.isfinite(v)
    v = torch.where(fin, v.clamp(-m, m), v)
    if f in ("fp16", "f16", "e4m3", "e5m2"):
        # float64 -> float16/float8 through float32 is correctly rounded only
        # when the float32 step is exact; values here have few bits
        t = v.to(torch.float32).to(dt)
    else:
        t = v.to(dt)
    return bits_of(f, t)


# ---------------------------------------------------------------- instructions

# id: (MMA-Sim class, arch, shape_and_type, set: (in, K, out), mpemu model, note)
# note "late-c": compared against mpemu's b200:mma.sync, whose FP8 model the
# real B200 mma.sync rows decide (tests/conformance/tensor-cores): a documented
# difference, counted and printed, not a mismatch.
INSTRS = {}


def add(i, cls, arch, shape, in_, k, out, model, note=""):
    INSTRS[i] = (cls, arch, shape, (in_, k, out), model, note)


def mma_common(base, arch, model, fp8=False, split=False):
    """the sm_75/sm_80 mma shapes (and sm_89 FP8) on arch"""
    i = base
    for k, out in ((8, "f32"), (8, "f16"), (16, "f32"), (16, "f16")):
        add(i, "MMA", arch, f"m16n8k{k}.{out}.f16.f16.{out}", "fp16", k, out, model)
        i += 1
    for k in (8, 16):
        add(i, "MMA", arch, f"m16n8k{k}.f32.bf16.bf16.f32", "bf16", k, "f32", model)
        i += 1
    for k in (4, 8):
        add(i, "MMA", arch, f"m16n8k{k}.f32.tf32.tf32.f32", "tf32", k, "f32", model)
        i += 1
    if fp8:
        for t in ("e4m3", "e5m2"):
            for k in (16, 32):
                for out in ("f32", "f16"):
                    add(i, "MMA", arch, f"m16n8k{k}.{out}.{t}.{t}.{out}", t, k, out, model)
                    i += 1
    return i


add(1, "MMA", "Volta", "m8n8k4.f32.f16.f16.f32", "fp16", 4, "f32", "v100")
add(2, "MMA", "Volta", "m8n8k4.f16.f16.f16.f16", "fp16", 4, "f16", "v100")
add(3, "MMA", "Turing", "m16n8k8.f32.f16.f16.f32", "fp16", 8, "f32", "t4")
add(4, "MMA", "Turing", "m16n8k8.f16.f16.f16.f16", "fp16", 8, "f16", "t4")
mma_common(10, "Ampere", "a100")
mma_common(20, "Ada Lovelace", "ada", fp8=True)
mma_common(40, "Hopper", "h100:mma.sync")
add(50, "WGMMA", "Hopper", "m64n8k8.f32.tf32.tf32", "tf32", 8, "f32", "h100")
add(51, "WGMMA", "Hopper", "m64n8k16.f32.f16.f16", "fp16", 16, "f32", "h100")
add(52, "WGMMA", "Hopper", "m64n8k16.f16.f16.f16", "fp16", 16, "f16", "h100")
add(53, "WGMMA", "Hopper", "m64n8k16.f32.bf16.bf16", "bf16", 16, "f32", "h100")
i = 54
for t in ("e4m3", "e5m2"):
    for out in ("f32", "f16"):
        add(i, "WGMMA", "Hopper", f"m64n8k32.{out}.{t}.{t}", t, 32, out, "h100")
        i += 1
mma_common(60, "Blackwell", "b200:mma.sync")
add(70, "TCGen05MMA", "Blackwell", "m64n8k8.kind::tf32.f32.tf32.tf32", "tf32", 8, "f32", "b200")
add(71, "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f32.f16.f16", "fp16", 16, "f32", "b200")
add(72, "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f16.f16.f16", "fp16", 16, "f16", "b200")
add(73, "TCGen05MMA", "Blackwell", "m64n8k16.kind::f16.f32.bf16.bf16", "bf16", 16, "f32", "b200")
i = 74
for t in ("e4m3", "e5m2"):
    for out in ("f32", "f16"):
        add(i, "TCGen05MMA", "Blackwell", f"m64n8k32.kind::f8f6f4.{out}.{t}.{t}", t, 32, out, "b200")
        add(i + 10, "TCGen05MMA", "Blackwell", f"m64n8k32.kind::f8f6f4.{out}.{t}.{t}", t, 32, out,
            "b200:mma.sync", "late-c")
        i += 1
i = mma_common(100, "RTX Blackwell", "rtx-pro-6000", fp8=True)
for t in ("e4m3", "e5m2"):
    for out in ("f32", "f16"):
        add(i, "MMA", "RTX Blackwell", f"m16n8k32.kind::f8f6f4.{out}.{t}.{t}.{out}", t, 32, out, "rtx-pro-6000")
        i += 1


# FP64: mma.sync .f64 (DMMA) from sm_80 on, and Hopper's m16n8kK shapes
add(150, "MMA", "Ampere", "m8n8k4.f64.f64.f64.f64", "f64", 4, "f64", "a100")
add(151, "MMA", "Ada Lovelace", "m8n8k4.f64.f64.f64.f64", "f64", 4, "f64", "ada")
add(152, "MMA", "Hopper", "m8n8k4.f64.f64.f64.f64", "f64", 4, "f64", "h100")
add(153, "MMA", "Hopper", "m16n8k4.f64.f64.f64.f64", "f64", 4, "f64", "h100")
add(154, "MMA", "Hopper", "m16n8k8.f64.f64.f64.f64", "f64", 8, "f64", "h100")
add(155, "MMA", "Hopper", "m16n8k16.f64.f64.f64.f64", "f64", 16, "f64", "h100")
add(156, "MMA", "Blackwell", "m8n8k4.f64.f64.f64.f64", "f64", 4, "f64", "b200")
add(157, "MMA", "RTX Blackwell", "m8n8k4.f64.f64.f64.f64", "f64", 4, "f64", "rtx-pro-6000")

# AMD CDNA matrix cores (mmasim.amd.MFMA, class "MFMA": the shape is the
# v_mfma suffix): MI100 (CDNA1), MI250 (CDNA2), MI300 (CDNA3)
for i, (suffix, in_, k) in enumerate([
        ("f32_4x4x4f16", "fp16", 4), ("f32_32x32x8f16", "fp16", 8), ("f32_16x16x16f16", "fp16", 16),
        ("f32_4x4x2bf16", "bf16", 2), ("f32_32x32x4bf16", "bf16", 4), ("f32_16x16x8bf16", "bf16", 8)]):
    add(200 + i, "MFMA", "CDNA1", suffix, in_, k, "f32", "mi100")
    # CDNA2 runs CDNA1's instructions; its bf16 ones without _1k are "mi250:bf16"
    add(210 + i, "MFMA", "CDNA2", suffix, in_, k, "f32", "mi250:bf16" if in_ == "bf16" else "mi250")
for i, (suffix, in_, k) in enumerate([
        ("f32_4x4x4bf16_1k", "bf16", 4), ("f32_32x32x8bf16_1k", "bf16", 8),
        ("f32_16x16x16bf16_1k", "bf16", 16), ("f64_16x16x4f64", "f64", 4)]):
    add(220 + i, "MFMA", "CDNA2", suffix, in_, k, "f64" if in_ == "f64" else "f32", "mi250")
for i, (suffix, in_, k) in enumerate([
        ("f32_4x4x4_16b_f16", "fp16", 4), ("f32_32x32x8_f16", "fp16", 8), ("f32_16x16x16_f16", "fp16", 16),
        ("f32_4x4x4_16b_bf16", "bf16", 4), ("f32_32x32x8_bf16", "bf16", 8), ("f32_16x16x16_bf16", "bf16", 16),
        ("f32_32x32x4_xf32", "tf32", 4), ("f32_16x16x8_xf32", "tf32", 8), ("f64_16x16x4_f64", "f64", 4)]):
    add(230 + i, "MFMA", "CDNA3", suffix, in_, k, "f64" if in_ == "f64" else "f32", "mi300")

# the operand sets of generate.py's first version keep their seeds (their
# files do not change); sets added later are seeded after them
FIRST_SETS = sorted((f, k, o) for f, k, o in [
    ("fp16", 4, "f32"), ("fp16", 4, "f16"), ("fp16", 8, "f32"), ("fp16", 8, "f16"), ("fp16", 16, "f32"),
    ("fp16", 16, "f16"), ("bf16", 8, "f32"), ("bf16", 16, "f32"), ("tf32", 4, "f32"), ("tf32", 8, "f32"),
    ("e4m3", 16, "f32"), ("e4m3", 16, "f16"), ("e4m3", 32, "f32"), ("e4m3", 32, "f16"),
    ("e5m2", 16, "f32"), ("e5m2", 16, "f16"), ("e5m2", 32, "f32"), ("e5m2", 32, "f16")])


def set_seed(seed, key, keys):
    if key in FIRST_SETS:
        return seed * 1000 + FIRST_SETS.index(key)
    later = sorted(k for k in keys if k not in FIRST_SETS)
    return seed * 1000 + 100 + later.index(key)


def simulator(cls, arch, shape):
    if cls == "MFMA":
        return amd.MFMA(arch, shape)
    return getattr(nv_ptx, cls)(arch, shape)


# ---------------------------------------------------------------- inputs

CATEGORIES = [
    "random bits",            # 0: uniform bit patterns (inf/NaN as they come)
    "random finite bits",     # 1: the same without inf/NaN
    "normal data",            # 2: N(0, 1) values, c N(0, 1)
    "exponent spread",        # 3: exponents over the whole range of the format
    "cancellation",           # 4: a = [x, -x, ...], b = [u, u(1+d), ...]
    "extremes",               # 5: largest finite, smallest normal/subnormal
    "special c",              # 6: c = +-0, +-inf, NaN, extremes, subnormals
    "ties at the cut",        # 7: one large product and small ones on and around the grid
    "subnormals",             # 8: subnormal operands and c
    "tiny products, c = 0",   # 9: products far below c's exponent floor, c = +-0
    "inf and nan",            # 10: sparse inf/NaN operands (inf * 0 included)
    "zero results",           # 11: exact and near cancellation to (signed) zero
]
R, CC = 20, 50   # rows of A and columns of B per block: 1,000 outputs


class Gen:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def bits(self, n, shape):
        if n == 64:   # two 32-bit halves; int64 arithmetic wraps to the same pattern
            hi = torch.randint(0, 1 << 32, shape, generator=self.g, dtype=torch.int64)
            lo = torch.randint(0, 1 << 32, shape, generator=self.g, dtype=torch.int64)
            return (hi << 32) | lo
        return torch.randint(0, 1 << n, shape, generator=self.g, dtype=torch.int64)

    def uniform(self, shape):
        return torch.rand(shape, generator=self.g, dtype=torch.float64)

    def normal(self, shape):
        return torch.randn(shape, generator=self.g, dtype=torch.float64)

    def choice(self, vals, shape):
        idx = torch.randint(0, len(vals), shape, generator=self.g)
        return torch.tensor(vals, dtype=torch.float64)[idx]

    def sign(self, shape):
        return torch.where(self.uniform(shape) < 0.5, -1.0, 1.0)


def fmt_range(f):
    _, nb, eb, mb, bias = FMT[f]
    emin = 1 - bias
    emax = (1 << eb) - 2 - bias if f != "e4m3" else 8
    return emin, emax, mb


def finite_bits(gen, f, shape):
    b = gen.bits(FMT[f][1], shape)
    t = tensor_of_bits(f, b).to(torch.float64)
    bad = ~torch.isfinite(t)
    while bad.any():
        b[bad] = gen.bits(FMT[f][1], (int(bad.sum()),))
        t = tensor_of_bits(f, b).to(torch.float64)
        bad = ~torch.isfinite(t)
    return b


def spread_values(gen, f, shape, lo=None, hi=None):
    emin, emax, mb = fmt_range(f)
    lo = emin - mb if lo is None else lo
    hi = emax if hi is None else hi
    e = torch.randint(lo, hi + 1, shape, generator=gen.g).to(torch.float64)
    m = 1 + gen.uniform(shape)
    return gen.sign(shape) * m * torch.exp2(e)


def block_inputs(gen, cat, fin, k, fout):
    """bit patterns: A (R x k), B (CC x k), C (R x CC)"""
    emin, emax, mb = fmt_range(fin)
    cemin, cemax, cmb = fmt_range(fout)
    nbi, nbo = FMT[fin][1], FMT[fout][1]
    sa, sb, sc = (R, k), (CC, k), (R, CC)
    bv = lambda v: bits_of_values(fin, v)
    cv = lambda v: bits_of_values(fout, v)
    if cat == 0:
        return gen.bits(nbi, sa), gen.bits(nbi, sb), gen.bits(nbo, sc)
    if cat == 1:
        return finite_bits(gen, fin, sa), finite_bits(gen, fin, sb), finite_bits(gen, fout, sc)
    if cat == 2:
        return bv(gen.normal(sa)), bv(gen.normal(sb)), cv(gen.normal(sc))
    if cat == 3:
        c = spread_values(gen, fout, sc)
        c = torch.where(gen.uniform(sc) < 0.2, 0.0, c)
        return bv(spread_values(gen, fin, sa)), bv(spread_values(gen, fin, sb)), cv(c)
    if cat == 4:
        x = spread_values(gen, fin, sa, emin // 2, emax // 2)
        x[:, 1::2] = -x[:, 0::2][:, : x[:, 1::2].shape[1]]
        u = spread_values(gen, fin, sb, emin // 2, emax // 2).abs()
        d = 1 + torch.exp2(-torch.randint(1, mb + 2, sb, generator=gen.g).to(torch.float64))
        keep = gen.uniform(sb) < 0.5
        u2 = torch.where(keep, u, u * d)
        u[:, 1::2] = u2[:, 0::2][:, : u[:, 1::2].shape[1]]
        c = torch.where(gen.uniform(sc) < 0.5, 0.0, spread_values(gen, fout, sc, cemin, 0))
        return bv(x), bv(u), cv(c)
    if cat == 5:
        m = max_finite(fin)
        vals = [m, -m, 2.0 ** emin, -(2.0 ** emin), 2.0 ** (emin - mb), -(2.0 ** (emin - mb)),
                m / 2, 1.0, -1.0, 2.0 ** (emin + 1)]
        mc = max_finite(fout)
        cvals = [mc, -mc, 2.0 ** cemin, -(2.0 ** cemin), 2.0 ** (cemin - cmb), 0.0, -0.0, 1.0]
        return bv(gen.choice(vals, sa)), bv(gen.choice(vals, sb)), cv(gen.choice(cvals, sc))
    if cat == 6:
        mc = max_finite(fout)
        cvals = [0.0, -0.0, math.inf, -math.inf, math.nan, mc, -mc, 2.0 ** (cemin - cmb),
                 -(2.0 ** (cemin - cmb)), 2.0 ** cemin, 1.0, -1.0]
        c = gen.choice(cvals, sc)
        return bv(gen.normal(sa)), bv(gen.normal(sb)), cv(c)
    if cat == 7:
        # one product near 1, the others 2^-j with j around the cut of F = 13..26
        a = gen.sign(sa) * torch.exp2(-torch.randint(8, 30, sa, generator=gen.g).to(torch.float64))
        a[:, 0] = 1.0 + torch.randint(0, 1 << min(mb, 3), (R,), generator=gen.g) * 2.0 ** -min(mb, 3)
        b = gen.sign(sb) * (1 + torch.randint(0, 1 << min(mb, 3), sb, generator=gen.g) * 2.0 ** -min(mb, 3))
        b = b * torch.exp2(-torch.randint(0, 4, sb, generator=gen.g).to(torch.float64))
        b[:, 0] = 1.0
        lo = max(emin, -20)
        a = torch.where(a.abs() < 2.0 ** lo, torch.sign(a) * 2.0 ** lo, a)
        c = gen.choice([0.0, 1.0, -1.0, 0.5, -0.5, 3.0, 2.0 ** -24, -(2.0 ** -24)], sc)
        return bv(a), bv(b), cv(c)
    if cat == 8:
        def sub(shape):
            m = torch.randint(1, 1 << mb, shape, generator=gen.g).to(torch.float64)
            v = gen.sign(shape) * m * 2.0 ** (emin - mb)
            n = spread_values(gen, fin, shape, emin, emin + 3)
            return torch.where(gen.uniform(shape) < 0.7, v, n)
        cm = torch.randint(1, 1 << cmb, sc, generator=gen.g).to(torch.float64)
        c = gen.sign(sc) * cm * 2.0 ** (cemin - cmb)
        c = torch.where(gen.uniform(sc) < 0.3, 0.0, c)
        return bv(sub(sa)), bv(sub(sb)), cv(c)
    if cat == 9:
        a = spread_values(gen, fin, sa, emin - mb, min(emin + 8, emax))
        b = spread_values(gen, fin, sb, emin - mb, min(emin + 8, emax))
        c = gen.choice([0.0, -0.0], sc)
        return bv(a), bv(b), cv(c)
    if cat == 10:
        a = gen.normal(sa)
        b = gen.normal(sb)
        specials = [math.inf, -math.inf, math.nan, 0.0]
        if fin == "e4m3":
            specials = [math.nan, 0.0, max_finite(fin)]
        ma = gen.uniform(sa) < 0.08
        mb_ = gen.uniform(sb) < 0.08
        a = torch.where(ma, gen.choice(specials, sa), a)
        b = torch.where(mb_, gen.choice(specials, sb), b)
        c = torch.where(gen.uniform(sc) < 0.1, gen.choice([math.inf, -math.inf, math.nan], sc),
                        gen.normal(sc))
        ab, bb = bv(a), bv(b)
        if fin == "tf32":
            # NaNs whose payload lies only in the 13 bits the instruction drops
            low = gen.bits(13, sa) | 1
            ab = torch.where(gen.uniform(sa) < 0.03, (ab & 0x80000000) | 0x7F800000 | low, ab)
        return ab, bb, cv(c)
    if cat == 11:
        x = spread_values(gen, fin, sa, emin, emin + 6)
        x[:, 1::2] = -x[:, 0::2][:, : x[:, 1::2].shape[1]]
        u = spread_values(gen, fin, sb, emin, emin + 6).abs()
        d = torch.where(gen.uniform(sb) < 0.5, 1.0, 1 + 2.0 ** -mb)
        u[:, 1::2] = (u[:, 0::2] * d[:, 0::2])[:, : u[:, 1::2].shape[1]]
        c = gen.choice([0.0, -0.0], sc)
        return bv(x), bv(u), cv(c)
    raise ValueError(cat)


# ---------------------------------------------------------------- driver

def run_set(key, ids, gen):
    fin, k, fout = key
    sims = {i: simulator(*INSTRS[i][:3]) for i in ids}
    blocks = []
    for cat in range(len(CATEGORIES)):
        A, B, C = block_inputs(gen, cat, fin, k, fout)
        a = tensor_of_bits(fin, A)[:, None, :].expand(R, CC, k).contiguous()
        b = tensor_of_bits(fin, B)[None, :, :].expand(R, CC, k).contiguous()
        c = tensor_of_bits(fout, C).contiguous()
        outs = {}
        for i in ids:
            d = sims[i].dpa(a.clone(), b.clone(), c.clone())
            assert d.dtype == FMT[fout][0], (i, d.dtype)
            outs[i] = bits_of(fout, d.contiguous())
        blocks.append((cat, A, B, C, outs))
    # columns: instructions with identical outputs on the whole set share one
    cols = []
    for i in ids:
        for col in cols:
            j = col[0]
            if all(torch.equal(bl[4][i], bl[4][j]) for bl in blocks):
                col.append(i)
                break
        else:
            cols.append([i])
    return blocks, cols


def write_set(path, key, blocks, cols):
    fin, k, fout = key
    wi = FMT[fin][1] // 4
    wo = FMT[fout][1] // 4
    mask_in = (1 << FMT[fin][1]) - 1
    mask = (1 << FMT[fout][1]) - 1
    out_kind = {"f32": 0, "f16": 1, "f64": 2}[fout]
    lines = [f"4d4d4153 {k:x} {out_kind:x} {len(blocks):x} {len(cols):x}"]
    for j, col in enumerate(cols):
        lines.append(" ".join(f"{x:x}" for x in [j, len(col)] + col))
    for cat, A, B, C, outs in blocks:
        lines.append(f"{R:x} {CC:x} {cat:x}")
        for row in A.tolist():
            lines.append(" ".join(f"{x & mask_in:0{wi}x}" for x in row))
        for row in B.tolist():
            lines.append(" ".join(f"{x & mask_in:0{wi}x}" for x in row))
        d = torch.stack([outs[col[0]].reshape(-1) for col in cols], 1).tolist()
        for cval, drow in zip(C.reshape(-1).tolist(), d):
            lines.append(" ".join(f"{x & mask:0{wo}x}" for x in [cval] + drow))
    data = ("\n".join(lines) + "\n").encode()
    with open(path, "wb") as fh:
        # mtime 0: the same inputs give the same bytes
        with gzip.GzipFile(filename="", mode="wb", fileobj=fh, compresslevel=9, mtime=0) as gz:
            gz.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = ap.parse_args()
    torch.set_num_threads(1)
    sets = {}
    for i, ins in sorted(INSTRS.items()):
        sets.setdefault(ins[3], []).append(i)
    index = []
    for n, (key, ids) in enumerate(sorted(sets.items())):
        gen = Gen(set_seed(args.seed, key, sets))
        blocks, cols = run_set(key, ids, gen)
        name = f"{key[0]}_k{key[1]}_{key[2]}.txt.gz"
        write_set(os.path.join(args.out, name), key, blocks, cols)
        for j, col in enumerate(cols):
            for i in col:
                cls, arch, shape, _, model, note = INSTRS[i]
                index.append((i, name, j, cls, arch, shape, model, note))
        print(f"{name}: {len(ids)} instructions, {len(cols)} distinct output columns, "
              f"{len(blocks) * R * CC} outputs each", file=sys.stderr)
    with open(os.path.join(args.out, "index.txt"), "w") as fh:
        fh.write("# id  file  column  MMA-Sim class  arch  shape_and_type  mpemu model  note\n")
        for row in sorted(index):
            fh.write("  ".join(str(x) for x in row).rstrip() + "\n")
    import importlib.metadata as md
    with open(os.path.join(args.out, "PROVENANCE"), "w") as fh:
        fh.write(f"generator: tests/conformance/mmasim/generate.py --seed {args.seed}\n")
        fh.write(f"mmasim: {md.version('mmasim')} (pip install mmasim)\n")
        fh.write(f"torch: {torch.__version__}\n")
        fh.write(f"python: {sys.version.split()[0]}\n")
        fh.write(f"date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}\n")


if __name__ == "__main__":
    main()
