"""mpemu.mma_scaled and mpemu.gemm_scaled (mpe_mma_scaled(3), mpe_gemm_scaled(3)) on element and
scale codes: against exact products of the codes decoded here from the OCP MX and NVFP4 encodings
(inputs whose answer binary32 holds exactly, whatever the accumulation), against the C library
called directly through ctypes (the GEMM through its column-major, transposed path), against
gemm_mx on mx_quantize's codes; the error cases; and a swapped binding that these checks catch."""
import ctypes

import numpy as np
import pytest

import mpemu

_C = mpemu._L   # the library itself, for the direct calls (the swap test replaces mpemu._L)

# (ebits, mbits, bias) of the element formats, from the OCP MX specification
_LAYOUT = {"e4m3": (4, 3, 7), "e5m2": (5, 2, 15), "e2m3": (2, 3, 1), "e3m2": (3, 2, 3), "e2m1": (2, 1, 1)}
_TYPE = {"e4m3": 5, "e5m2": 6, "e2m3": 12, "e3m2": 13, "e2m1": 14}
_STYPE = {"ue8m0": 15, "ue4m3": 5}

# (model, A's format, B's format, scale format, block): every pairing the models take
CASES = [("b200:mxf8f6f4", "e4m3", "e4m3", "ue8m0", 32), ("b200:mxf8f6f4", "e5m2", "e2m3", "ue8m0", 32),
         ("b200:mxf8f6f4", "e3m2", "e2m1", "ue8m0", 32), ("b200:mxf8f6f4", "e2m1", "e2m1", "ue8m0", 32),
         ("b200:mxf4", "e2m1", "e2m1", "ue8m0", 32), ("b200:mxf4nvf4", "e2m1", "e2m1", "ue8m0", 32),
         ("b200:mxf4nvf4", "e2m1", "e2m1", "ue8m0", 16), ("b200:mxf4nvf4", "e2m1", "e2m1", "ue4m3", 16)]


def decode(codes, fmt):
    """element codes to float64: sign, biased exponent, fraction; subnormals at exponent 0;
    E4M3's S.1111.111 and E5M2's exponent 31 are its specials"""
    e_bits, m_bits, bias = _LAYOUT[fmt]
    c = np.asarray(codes, np.int64)
    e = (c >> m_bits) & ((1 << e_bits) - 1)
    f = (c & ((1 << m_bits) - 1)).astype(np.float64)
    v = np.where(e == 0, f / 2**m_bits * 2.0**(1 - bias), (1 + f / 2**m_bits) * 2.0**(e - bias))
    if fmt == "e4m3":
        v = np.where((c & 0x7f) == 0x7f, np.nan, v)
    if fmt == "e5m2":
        v = np.where(e == 31, np.where(f == 0, np.inf, np.nan), v)
    return np.where((c >> (e_bits + m_bits)) & 1, -v, v)


def decode_scale(codes, sfmt):
    c = np.asarray(codes, np.int64)
    if sfmt == "ue8m0":
        return np.where(c == 255, np.nan, 2.0**(c - 127))
    return decode(c & 0x7f, "e4m3")   # UE4M3: the sign bit is not read


def codes_in(fmt, lo, hi):
    """the codes of fmt whose values are 0 or of magnitude in [lo, hi]"""
    n = 1 << sum(_LAYOUT[fmt][:2]) + 1
    v = np.abs(decode(np.arange(n), fmt))
    return np.nonzero((v == 0) | ((v >= lo) & (v <= hi)))[0].astype(np.uint8)


def exact_operands(r, fa, fb, sfmt, block, m, n, k):
    """codes of magnitude 0 or in [1, 2] (e2m1: 0, 1, 1.5, 2), scales in [1/2, 2] (UE4M3: [1, 2),
    three fraction bits): every product a multiple of 2^-8 below 2^5, every sum below 2^11, so
    each partial sum, and the result, is exact in binary32 and within the alignment window"""
    kb = -(-k // block)
    A = r.choice(codes_in(fa, 1, 2), (m, k))
    B = r.choice(codes_in(fb, 1, 2), (k, n))
    sc = np.arange(126, 129) if sfmt == "ue8m0" else np.arange(0x38, 0x40) | (r.integers(0, 2, 8) << 7)
    SA = r.choice(sc, (m, kb)).astype(np.uint8)
    SB = r.choice(sc, (kb, n)).astype(np.uint8)
    return A, B, SA, SB


def exact_product(A, fa, B, fb, SA, SB, sfmt, block):
    k = A.shape[1]
    a = decode(A, fa) * np.repeat(decode_scale(SA, sfmt), block, axis=1)[:, :k]
    b = decode(B, fb) * np.repeat(decode_scale(SB, sfmt), block, axis=0)[:k]
    return a @ b


def bits(x):
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


@pytest.mark.parametrize("model,fa,fb,sfmt,block", CASES)
def test_exact_when_binary32_holds_the_answer(model, fa, fb, sfmt, block):
    r = np.random.default_rng(CASES.index((model, fa, fb, sfmt, block)))
    m, n, k = 5, 3, 80   # k: a short last scale block, a partial last instruction
    A, B, SA, SB = exact_operands(r, fa, fb, sfmt, block, m, n, k)
    C = (r.integers(-2**14, 2**14, (m, n)) * 2.0**-8).astype(np.float32)
    ref = exact_product(A, fa, B, fb, SA, SB, sfmt, block)
    assert np.abs(ref).max() > 0 and np.array_equal(ref.astype(np.float32), ref)   # the premise
    kw = dict(model=model, fmt=fa, fmt_b=fb, scale_fmt=sfmt, block=block)
    D = mpemu.mma_scaled(A, B, SA, SB, C, **kw)
    assert D.dtype == np.float32 and np.array_equal(D, ref + C)
    assert np.array_equal(mpemu.mma_scaled(A, B, SA, SB, **kw), ref)
    G = mpemu.gemm_scaled(A, B, SA, SB, C, alpha=2.0, beta=-0.5, **kw)
    assert np.array_equal(G, 2 * ref - 0.5 * C)
    if model != "b200:mxf8f6f4" or fa != "e2m1":   # a bare GPU name picks this model
        bare = dict(kw, model="b200")
        assert np.array_equal(mpemu.gemm_scaled(A, B, SA, SB, **bare), ref)


def direct_mma(model, A, fa, B, fb, SA, SB, sfmt, block, C):
    m, k = A.shape
    n = B.shape[1]
    kb = SA.shape[1]
    mod = _C.mpe_tc_model_get(model.encode(), _TYPE[fa])
    D = np.empty((m, n), np.float32)
    c = np.ascontiguousarray(C, np.float32)
    rc = _C.mpe_mma_scaled(mod, m, n, k, A.ctypes.data, _TYPE[fa], max(k, 1), B.ctypes.data, _TYPE[fb], n,
                           SA.ctypes.data, max(kb, 1), SB.ctypes.data, n, _STYPE[sfmt], block, c.ctypes.data, n,
                           D.ctypes.data, 1, n)
    assert rc == 0
    return D


def direct_gemm(model, A, fa, B, fb, SA, SB, sfmt, block, C, alpha, beta):
    """mpe_gemm_scaled in column-major storage with both operands transposed: A (m x k
    row-major) is a column-major k x m matrix, its scales a column-major m x kb matrix read
    from SA^T; the result comes back column-major"""
    m, k = A.shape
    n = B.shape[1]
    kb = SA.shape[1]
    mod = _C.mpe_tc_model_get(model.encode(), _TYPE[fa])
    sat, sbt = np.ascontiguousarray(SA.T), np.ascontiguousarray(SB.T)
    ct = np.ascontiguousarray(np.asarray(C, np.float32).T)
    rc = _C.mpe_gemm_scaled(mod, 1, 1, 1, m, n, k, alpha, A.ctypes.data, _TYPE[fa], max(k, 1), B.ctypes.data,
                            _TYPE[fb], n, sat.ctypes.data, m, sbt.ctypes.data, max(kb, 1), _STYPE[sfmt], block, beta,
                            ct.ctypes.data, 1, m)
    assert rc == 0
    return ct.T


def random_operands(r, fa, fb, sfmt, block, m, n, k):
    """every element code (NaN, inf, subnormals, maxima); scales near 1 with some extremes and NaNs"""
    kb = -(-k // block)
    A = r.integers(0, 1 << sum(_LAYOUT[fa][:2]) + 1, (m, k)).astype(np.uint8)
    B = r.integers(0, 1 << sum(_LAYOUT[fb][:2]) + 1, (k, n)).astype(np.uint8)

    def scales(shape):
        if sfmt == "ue8m0":
            s = r.integers(117, 138, shape)
        else:   # UE4M3 around 1, the sign bit set at random (not read)
            s = r.integers(0x20, 0x60, shape) | 0x80 * r.integers(0, 2, shape)
        s[r.random(shape) < 0.05] = r.choice([0, 1, 254, 255, 0x7f, 0xff], 1)[0]
        return s.astype(np.uint8)

    return A, B, scales((m, kb)), scales((kb, n))


def agrees_with_c(r, model, fa, fb, sfmt, block, m, n, k):
    """the binding's D and C against the library called directly, bit for bit"""
    A, B, SA, SB = random_operands(r, fa, fb, sfmt, block, m, n, k)
    C = r.standard_normal((m, n)).astype(np.float32)
    kw = dict(model=model, fmt=fa, fmt_b=fb, scale_fmt=sfmt, block=block)
    D = mpemu.mma_scaled(A, B, SA, SB, C, **kw)
    G = mpemu.gemm_scaled(A, B, SA, SB, C, alpha=1.5, beta=-1.0, **kw)
    dref = direct_mma(model, A, fa, B, fb, SA, SB, sfmt, block, C)
    gref = direct_gemm(model, A, fa, B, fb, SA, SB, sfmt, block, C, 1.5, -1.0)
    return np.array_equal(bits(D), bits(dref)) and np.array_equal(bits(G), bits(gref))


@pytest.mark.parametrize("model,fa,fb,sfmt,block", CASES)
def test_bits_equal_the_library_called_directly(model, fa, fb, sfmt, block):
    r = np.random.default_rng(7 + CASES.index((model, fa, fb, sfmt, block)))
    for m, n, k in ((1, 1, 1), (7, 9, 200), (4, 6, 64), (3, 2, 0)):
        assert agrees_with_c(r, model, fa, fb, sfmt, block, m, n, k), (m, n, k)


def test_the_man_page_example_puts_c_in_the_block():
    """mpe_mma_scaled(3): 1 x 1 with c = 3 * 2^-25 entering the block, cut toward zero to 1;
    mpe_gemm_scaled adds beta * C after the block, to nearest: 1 + 2^-23"""
    a = np.zeros((1, 32), np.uint8)
    a[0, 0] = 0x38
    s = np.array([[127]], np.uint8)
    c = np.array([[3 * 2.0**-25]], np.float32)
    assert mpemu.mma_scaled(a, a.T, s, s, c, model="b200:mxf8f6f4")[0, 0] == 1.0
    assert mpemu.gemm_scaled(a, a.T, s, s, c, beta=1.0)[0, 0] == np.float32(1 + 2.0**-23)


def test_mx_quantize_codes_give_gemm_mx():
    r = np.random.default_rng(3)
    X = r.standard_normal((4, 70)).astype(np.float32)
    W = r.standard_normal((70, 5)).astype(np.float32)
    for kind in ("mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "nvfp4"):
        ea, sa = mpemu.mx_quantize(X, kind)
        eb, sb = mpemu.mx_quantize(W.T, kind)
        D = mpemu.gemm_scaled(ea, eb.T, sa, sb.T, kind=kind)
        assert np.array_equal(bits(D), bits(mpemu.gemm_mx(X, W, kind=kind))), kind
    ea, sa = mpemu.mx_quantize(X, "mxfp8_e4m3")
    eb, sb = mpemu.mx_quantize(W.T, "mxfp8_e5m2")
    assert np.array_equal(bits(mpemu.gemm_scaled(ea, eb.T, sa, sb.T, kind="mxfp8_e4m3", fmt_b="e5m2")),
                          bits(mpemu.gemm_mx(X, W, kind="mxfp8_e4m3", kind_b="mxfp8_e5m2")))


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    r = np.random.default_rng(5)
    A, B, SA, SB = random_operands(r, "e2m1", "e2m1", "ue4m3", 16, 3, 4, 48)
    want = mpemu.gemm_scaled(A, B, SA, SB, kind="nvfp4")
    got = mpemu.gemm_scaled(torch.from_numpy(A), torch.from_numpy(B), torch.from_numpy(SA), torch.from_numpy(SB),
                            kind="nvfp4")
    assert isinstance(got, torch.Tensor) and np.array_equal(bits(got.numpy()), bits(want))


def test_errors():
    r = np.random.default_rng(9)
    A, B, SA, SB = random_operands(r, "e4m3", "e4m3", "ue8m0", 32, 3, 4, 64)
    g = mpemu.gemm_scaled
    with pytest.raises(ValueError, match="scale_a has shape"):
        g(A, B, SA[:, :1], SB)                      # one scale short along k
    with pytest.raises(ValueError, match="scale_b has shape"):
        g(A, B, SA, SB.T)
    with pytest.raises(ValueError, match="scale_a has shape"):
        g(A & 0xf, B & 0xf, SA, SB, kind="nvfp4")   # 16-element blocks need 4 scales a row
    with pytest.raises(ValueError, match="scale_a has shape"):
        g(A, B, SB, SA)                             # swapped (their shapes differ here)
    with pytest.raises(TypeError, match="uint8"):
        g(A.astype(np.float32), B, SA, SB)
    with pytest.raises(TypeError, match="uint8"):
        g(A, B, SA.astype(np.int16), SB)
    with pytest.raises(ValueError, match="do not multiply"):
        g(A, B[:32], SA, SB)
    with pytest.raises(ValueError, match="2-D"):
        g(A[0], B, SA, SB)
    with pytest.raises(ValueError, match=r"0\.\.0xf"):
        g(A, B, SA, SB, kind="mxfp4")               # E4M3 codes are not 4-bit E2M1 codes
    with pytest.raises(ValueError, match=r"0\.\.0x3f"):
        g(A, B, SA, SB, fmt="e2m3")
    with pytest.raises(ValueError, match="not both"):
        g(A, B, SA, SB, kind="mxfp8_e4m3", block=32)
    with pytest.raises(ValueError, match="unknown element format"):
        g(A, B, SA, SB, fmt="fp16")
    with pytest.raises(ValueError, match="unknown scale format"):
        g(A, B, SA, SB, scale_fmt="e8m0x")
    with pytest.raises(ValueError, match="block must be 16 or 32"):
        g(A, B, SA, SB, block=64)
    with pytest.raises(ValueError, match="no block-scaled tensor cores"):
        g(A, B, SA, SB, model="h100")
    with pytest.raises(ValueError, match="not a block-scaled model"):
        g(A, B, SA, SB, model="b200:mma.sync")
    with pytest.raises(ValueError, match="unknown model"):
        g(A, B, SA, SB, model="b300")
    with pytest.raises(ValueError, match="takes no e4m3 operands"):
        g(A & 0xf, B, SA, SB, model="b200:mxf4", fmt="e2m1", fmt_b="e4m3")
    with pytest.raises(ValueError, match="takes no ue4m3/16 scales"):
        g(A, B, np.repeat(SA, 2, 1), np.repeat(SB, 2, 0), scale_fmt="ue4m3", block=16)
    with pytest.raises(ValueError, match="C has shape"):
        g(A, B, SA, SB, np.zeros((4, 3), np.float32), beta=1.0)
    with pytest.raises(ValueError, match="C has shape"):
        mpemu.mma_scaled(A, B, SA, SB, np.zeros((3, 5), np.float32))
    with pytest.raises(mpemu.MpemuError):
        g(A, B, SA, SB, alpha=float("nan"))
    with pytest.raises(ValueError, match="has no block-scaled tensor-core instruction"):
        g(A, B, SA, SB, kind="mxint8")


def test_a_swapped_binding_is_caught(monkeypatch):
    """a binding that passes B's scales for A's and A's for B's (m = n = ceil(k/block), so the
    library takes the shapes) fails the direct-call comparison and the exact check"""
    real = _C

    class Swapped:
        def __getattr__(self, name):
            return getattr(real, name)

        @staticmethod
        def mpe_mma_scaled(mod, m, n, k, a, at, lda, b, bt, ldb, sa, ldsa, sb, ldsb, *rest):
            return real.mpe_mma_scaled(mod, m, n, k, a, at, lda, b, bt, ldb, sb, ldsb, sa, ldsa, *rest)

        @staticmethod
        def mpe_gemm_scaled(mod, lay, ta, tb, m, n, k, al, a, at, lda, b, bt, ldb, sa, ldsa, sb, ldsb, *rest):
            return real.mpe_gemm_scaled(mod, lay, ta, tb, m, n, k, al, a, at, lda, b, bt, ldb, sb, ldsb, sa, ldsa,
                                        *rest)

    r = np.random.default_rng(11)
    case = ("b200:mxf8f6f4", "e4m3", "e4m3", "ue8m0", 32)
    assert agrees_with_c(np.random.default_rng(12), *case, 3, 3, 96)
    A, B, SA, SB = exact_operands(r, "e4m3", "e4m3", "ue8m0", 32, 3, 3, 96)
    ref = exact_product(A, "e4m3", B, "e4m3", SA, SB, "ue8m0", 32)
    assert np.array_equal(mpemu.gemm_scaled(A, B, SA, SB), ref)
    monkeypatch.setattr(mpemu, "_L", Swapped())
    assert not agrees_with_c(np.random.default_rng(12), *case, 3, 3, 96)
    assert not np.array_equal(mpemu.gemm_scaled(A, B, SA, SB), ref)
    assert not np.array_equal(mpemu.mma_scaled(A, B, SA, SB), ref)


def test_k_zero_and_no_c():
    A = np.zeros((2, 0), np.uint8)
    B = np.zeros((0, 3), np.uint8)
    S = np.zeros((2, 0), np.uint8)
    T = np.zeros((0, 3), np.uint8)
    C = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(mpemu.mma_scaled(A, B, S, T, C), C)
    assert np.array_equal(mpemu.mma_scaled(A, B, S, T), np.zeros((2, 3)))
    assert np.array_equal(mpemu.gemm_scaled(A, B, S, T, C, beta=2.0), 2 * C)
    assert ctypes.sizeof(mpemu._lib.TcParamsScaled) == 18 * ctypes.sizeof(ctypes.c_int)
