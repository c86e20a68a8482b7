"""The FNUZ FP8 formats (AMD CDNA3) from Python: codes decoded from the formats' definition
written here, encoding against exact fractions, and mi300's FP8 MFMA through gemm."""
from fractions import Fraction

import numpy as np
import pytest

import mpemu

FMT = {"e4m3fnuz": (3, 8), "e5m2fnuz": (2, 16)}   # fraction bits, exponent bias


def value_of(code: int, fmt: str):
    """the value of an FNUZ code, from the definition: 0x80 NaN, no -0, no inf"""
    m_bits, bias = FMT[fmt]
    if code == 0x80:
        return None
    s = -1 if code & 0x80 else 1
    e = (code >> m_bits) & ((1 << (7 - m_bits)) - 1)
    m = code & ((1 << m_bits) - 1)
    if e == 0:
        return s * Fraction(m, 1 << m_bits) * Fraction(2) ** (1 - bias)
    return s * (1 + Fraction(m, 1 << m_bits)) * Fraction(2) ** (e - bias)


@pytest.mark.parametrize("fmt", sorted(FMT))
def test_decode_every_code(fmt):
    got = mpemu.decode(np.arange(256, dtype=np.uint8), fmt)
    for code in range(256):
        v = value_of(code, fmt)
        if v is None:
            assert np.isnan(got[code]), hex(code)
        else:
            assert Fraction(float(got[code])) == v, hex(code)
            assert not (got[code] == 0 and np.signbit(got[code])), "FNUZ has no -0"


@pytest.mark.parametrize("fmt", sorted(FMT))
def test_encode_nearest_even(fmt):
    vals = {c: value_of(c, fmt) for c in range(256) if c != 0x80}
    finite = sorted(set(vals.values()))
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(4000).astype(np.float32) * np.float32(4.0) ** rng.integers(-6, 6, 4000),
                        np.array([float(v) for v in finite], np.float32),
                        np.array([float((a + b) / 2) for a, b in zip(finite, finite[1:])], np.float32),
                        np.array([-1e-30, 1e-30, -0.0, 0.0], np.float32)])
    codes = mpemu.encode(x, fmt, saturate=True)
    top = finite[-1]
    for xi, c in zip(x.tolist(), codes.tolist()):
        fx = Fraction(xi)
        # nearest, ties to the even code; beyond the largest: saturated
        best = min(finite, key=lambda v: (abs(v - fx), 0))
        ties = [v for v in finite if abs(v - fx) == abs(best - fx)]
        if len(ties) > 1:
            best = next(v for v in ties if [k for k, w in vals.items() if w == v][0] % 2 == 0)
        if fx > top:
            best = top
        if fx < -top:
            best = -top
        assert vals[c] == best, (xi, hex(c))
        assert c != 0x80
    assert mpemu.encode(np.array([np.nan, -np.nan], np.float32), fmt).tolist() == [0x80, 0x80]
    assert mpemu.encode(np.array([1e6], np.float32), fmt).tolist() == [0x80]   # no inf: NaN


def test_mi300_fp8_worked_example():
    """mpe_tc_model_get(3)'s example: the even and odd k summed apart, 16384 - 2^-10 (MMA-Sim's)"""
    a = np.array([[2.0 ** 7, -2.0 ** -10]], np.float32)
    b = np.array([[2.0 ** 7], [2.0 ** -10]], np.float32)
    d = mpemu.gemm(a, b, model="mi300", input="e4m3fnuz")
    assert d.view(np.uint32)[0, 0] == 0x467FFFFF
    assert mpemu.gemm(a, b, model="exact", input="fp16")[0, 0] == np.float32(16384 - 2.0 ** -20)


def test_mi300_fp8_mixed_pairs():
    rng = np.random.default_rng(3)
    a = rng.integers(-8, 9, (5, 32)).astype(np.float32)
    b = rng.integers(-8, 9, (32, 6)).astype(np.float32)
    for ia, ib in (("e4m3fnuz", "e5m2fnuz"), ("e5m2fnuz", "e4m3fnuz")):
        d = mpemu.gemm(a, b, model="mi300", input=ia, input_b=ib)
        assert np.array_equal(d, a @ b)   # small integers: every sum exact
    with pytest.raises(ValueError):
        mpemu.gemm(a, b, model="mi300", input="e4m3fnuz", input_b="e5m2")
    assert "e4m3fnuz" in mpemu.models()["mi300"]
