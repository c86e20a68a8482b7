"""The encoders and GEMMs beyond round/gemm (integer, 2:4 sparse, block-scaled MX/NVFP4, INT8
quantisation, 16-bit fixed point) against references written here from the rules in their
manual pages: exact integer products, NumPy arithmetic, the OCP MX scale rule; and the
error messages for bad names."""
import numpy as np
import pytest

import mpemu


def rng(seed):
    return np.random.default_rng(seed)


def test_gemm_int_exact_wraps_modulo_2_32():
    r = rng(1)
    A = r.integers(-128, 128, (9, 70)).astype(np.int8)
    B = r.integers(-128, 128, (70, 5)).astype(np.int8)
    C = r.integers(-2**31, 2**31, (9, 5)).astype(np.int32)
    exact = A.astype(np.int64) @ B.astype(np.int64)
    for model in ("t4", "a100", "h100", "b200", "exact"):
        assert np.array_equal(mpemu.gemm_int(A, B, model=model), exact.astype(np.int32))
    D = mpemu.gemm_int(A, B, C, model="a100", alpha=3, beta=-2)
    ref = ((3 * exact - 2 * C.astype(np.int64)) % 2**32).astype(np.uint32).view(np.int32)
    assert np.array_equal(D, ref)
    U = r.integers(0, 256, (70, 5)).astype(np.uint8)
    assert np.array_equal(mpemu.gemm_int(A, U, model="h100"), A.astype(np.int64) @ U.astype(np.int64))
    A4 = r.integers(-8, 8, (4, 64)).astype(np.int8)
    B4 = r.integers(-8, 8, (64, 3)).astype(np.int8)
    assert np.array_equal(mpemu.gemm_int(A4, B4, model="a100", input="int4"), A4.astype(np.int64) @ B4)
    with pytest.raises(ValueError, match=r"has no int4 tensor cores \(valid: .*a100"):
        mpemu.gemm_int(A4, B4, model="h100", input="int4")
    with pytest.raises(TypeError):
        mpemu.gemm_int(A.astype(np.float32), B)


def test_prune_and_sparse_gemm():
    r = rng(2)
    A = r.standard_normal((6, 40)).astype(np.float32)
    P = mpemu.prune_2_4(A)
    g = P.reshape(6, 10, 4)
    assert np.all((g != 0).sum(axis=2) <= 2)
    a = np.abs(A.reshape(6, 10, 4))
    kept = np.sort(a, axis=2)[:, :, 2:]                      # the two largest magnitudes
    assert np.array_equal(np.sort(np.abs(g), axis=2)[:, :, 2:], kept)
    B = r.standard_normal((40, 7)).astype(np.float32)
    # the exact model: zeros add nothing, so the sparse product equals the dense one on P
    assert np.array_equal(mpemu.gemm_sp(P, B, model="exact", input="fp16"), mpemu.gemm(P, B, model="exact"))
    D = mpemu.gemm_sp(P, B, model="a100", input="fp16")
    assert np.allclose(D, P.astype(np.float64) @ B, rtol=1e-2, atol=1e-2)
    with pytest.raises(mpemu.MpemuError, match="not 2:4"):
        mpemu.gemm_sp(A, B, model="a100")


def mx_ref(x, emax_elem, fmt):
    """OCP MX: scale 2^(floor(log2 amax) - emax_elem) per block of 32, elements RNE saturating"""
    out = np.empty_like(x)
    for i in range(0, x.size, 32):
        blk = x[i:i + 32]
        amax = float(np.abs(blk).max())
        e = int(np.floor(np.log2(amax))) - emax_elem if amax > 0 else -127
        s = 2.0 ** max(min(e, 127), -127)
        q = mpemu.round((blk / s).astype(np.float32), fmt, saturate=True)
        out[i:i + 32] = q * np.float32(s)
    return out


def test_mx_quantize_follows_the_ocp_rule():
    r = rng(3)
    x = (r.standard_normal(32 * 8) * np.exp(r.uniform(-8, 8, 32 * 8))).astype(np.float32)
    for kind, emax, fmt in (("mxfp8_e4m3", 8, "e4m3"), ("mxfp8_e5m2", 15, "e5m2")):
        e, s = mpemu.mx_quantize(x, kind)
        assert e.shape == x.shape and s.shape == (8,) and e.dtype == s.dtype == np.uint8
        y = mpemu.mx_dequantize(e, s, kind)
        assert np.array_equal(y, mx_ref(x, emax, fmt))
        assert np.array_equal(mpemu.mx_round(x, kind), y)
    # rows whose length is not a whole number of blocks: each row quantised on its own
    x2 = x[:3 * 50].reshape(3, 50)
    e2, s2 = mpemu.mx_quantize(x2, "mxfp8_e4m3")
    assert s2.shape == (3, 2)
    for i in range(3):
        ei, si = mpemu.mx_quantize(x2[i], "mxfp8_e4m3")
        assert np.array_equal(e2[i], ei) and np.array_equal(s2[i], si)
    e3, s3 = mpemu.mx_quantize(x[:64].reshape(4, 16), "nvfp4")
    assert s3.shape == (4, 1)
    assert np.abs(mpemu.mx_dequantize(e3, s3, "nvfp4") - x[:64].reshape(4, 16)).max() <= \
        np.abs(x[:64]).max() / 6 * 1.2
    with pytest.raises(ValueError, match="unknown block-scaled format 'mxfp9'.*nvfp4"):
        mpemu.mx_quantize(x, "mxfp9")
    with pytest.raises(mpemu.MpemuError):
        mpemu.mx_quantize(x, "mxint8")   # not implemented in the library (MPE_EUNSUP)


def test_gemm_mx_near_the_product():
    r = rng(4)
    A = r.standard_normal((5, 96)).astype(np.float32)
    B = r.standard_normal((96, 6)).astype(np.float32)
    exact = A.astype(np.float64) @ B
    # the same operands dequantised, multiplied exactly: the block-scaled GEMM differs only by its
    # accumulation, far less than the quantisation error
    for kind, tol in (("mxfp8_e4m3", 1e-4), ("mxfp6_e2m3", 1e-4), ("mxfp4", 1e-4), ("nvfp4", 1e-4)):
        D = mpemu.gemm_mx(A, B, kind=kind)
        deq = mpemu.mx_round(A, kind).astype(np.float64) @ mpemu.mx_round(np.ascontiguousarray(B.T), kind).T
        assert np.abs(D - deq).max() <= tol * np.abs(deq).max(), kind
        assert np.abs(D - exact).max() < 0.5 * np.abs(exact).max()
    with pytest.raises(ValueError):
        mpemu.gemm_mx(A, B, kind="mxfp8_e4m3", kind_b="nvfp4")


def test_quantize_int_symmetric_rows():
    r = rng(5)
    x = r.standard_normal((4, 33)).astype(np.float32)
    q, s, z = mpemu.quantize_int(x, "int8", "rows")
    ref_s = (np.abs(x).max(axis=1).astype(np.float64) / 127).astype(np.float32)
    assert np.array_equal(s, ref_s) and np.all(z == 0)
    ref_q = np.clip(np.rint(x.astype(np.float64) / ref_s[:, None].astype(np.float64)), -128, 127).astype(np.int8)
    assert np.array_equal(q, ref_q)
    y = mpemu.dequantize_int(q, s, z, "int8", "rows")
    assert np.array_equal(y, (q.astype(np.float32) * s[:, None]).astype(np.float32))
    qa, sa, za = mpemu.quantize_int(x, "uint8", symmetric=False)
    assert qa.dtype == np.uint8 and sa.shape == (1,) and 0 <= za[0] <= 255
    with pytest.raises(ValueError, match="unknown integer type 'int7'"):
        mpemu.quantize_int(x, "int7")
    with pytest.raises(mpemu.MpemuError):
        mpemu.quantize_int(np.array([1.0, np.nan], np.float32))


def test_fx16_and_q16():
    r = rng(6)
    x = r.standard_normal(100).astype(np.float32)
    q, s = mpemu.fx16_encode(x, block=32)
    assert q.dtype == np.int16 and s.shape == (4,)
    for b in range(4):
        blk = x[32 * b:32 * b + 32]
        m = np.float32(np.abs(blk).max())
        inv = np.float32(32767.0) / m
        assert np.array_equal(q[32 * b:32 * b + 32], np.rint(blk * inv).astype(np.int16))
        assert s[b] == np.float32(m * np.float32(3.0518509476e-5))
    assert np.array_equal(mpemu.fx16_decode(q, s, block=32), (q.astype(np.float32) * np.repeat(s, 32)[:100]))
    v = np.array([0.5, -1.25, 1000.0, 1 / 3], np.float32)
    c = mpemu.q16_encode(v, 8)
    assert list(c) == [128, -320, 32767, 85]
    assert np.array_equal(mpemu.q16_decode(c, 8), c.astype(np.float32) / 256)


def test_error_lists_name_what_is_valid():
    A = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match=r"unknown model 'h10' \(valid: .*h100.*fma-chain"):
        mpemu.gemm(A, A, model="h10")
    with pytest.raises(ValueError, match="model 'v100' has no e4m3 tensor cores .*h100"):
        mpemu.gemm(A, A, model="v100", input="e4m3")
    with pytest.raises(ValueError, match="unknown format 'e9m9'.*e2m1.*e8m0"):
        mpemu.round(A, "e9m9")
    assert np.array_equal(mpemu.round(np.float32([1.7]), "fp4"), np.float32([1.5]))   # an alias works
    assert "nvfp4" in mpemu.mx_kinds()
