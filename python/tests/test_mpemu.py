"""Tests of the mpemu package against references it does not share code with: NumPy's
correctly rounded float16 conversion, bfloat16 rounding done on the integer bits, the
library's scalar converters (a different path from the array kernels), hand vectors of the
tensor-core papers, exact integer products, counts computed with NumPy, and the mpanalyze
tool's JSON."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import mpemu
from mpemu import _L

TOP = os.environ.get("MPE_SRCDIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(TOP, "tests", "data")


def boundary_f32(n: int, seed: int = 15) -> np.ndarray:
    """n float32 values: random bit patterns (every binade, NaNs, infs, subnormals), values near
    the fp16/bf16/fp8 limits and ties, and gradient-like normals"""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ties = []
    for e in range(-30, 17):  # fp16 halfway points and their neighbours
        for m in range(0, 1024, 97):
            v = np.float32((1 + (m + 0.5) / 1024) * 2.0**e)
            ties += [v, np.nextafter(v, np.float32(0)), np.nextafter(v, np.float32(np.inf))]
    edges = np.array([0, -0.0, 65504, 65519.99, 65520, 2**-24, 2**-25, 2**-25 * 1.0000001, 448, 464, 465,
                      57344, 61440, 61439, 2**-149, 3.4028235e38, np.inf, -np.inf, np.nan], np.float32)
    normal = (rng.standard_normal(n - n // 2) * np.exp(rng.uniform(-30, 10, n - n // 2))).astype(np.float32)
    x = np.concatenate([bits, np.array(ties, np.float32), edges, -edges, normal])[:n]
    return np.ascontiguousarray(x)


def bf16_rne_ref(x: np.ndarray) -> np.ndarray:
    """binary32 -> bfloat16 with ties to even, on the integer bits (NaN left aside)"""
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and
                np.array_equal(a[~nan].view(np.uint32 if a.dtype == np.float32 else np.uint64),
                               b[~nan].view(np.uint32 if b.dtype == np.float32 else np.uint64)))


# ---------------------------------------------------------------- round

def test_round_fp16_1e7_values_equal_numpy():
    x = boundary_f32(10_000_000)
    y = mpemu.round(x, "fp16")
    assert y.dtype == np.float32 and y.shape == x.shape
    with np.errstate(over="ignore"):
        ref = x.astype(np.float16).astype(np.float32)   # NumPy: correctly rounded, ties to even
    assert same_bits(y, ref)


def test_round_bf16_1e7_values_equal_integer_reference():
    x = boundary_f32(10_000_000, seed=16)
    y = mpemu.round(x, "bf16")
    nan = np.isnan(x)   # the integer reference is for numbers; NaNs stay NaN
    assert nan.sum() > 0 and np.isnan(y[nan]).all()
    assert same_bits(y[~nan], bf16_rne_ref(x[~nan]))


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "e4m3", "e5m2"])
@pytest.mark.parametrize("mode", ["rne", "rz", "ru", "rd", "rna"])
def test_encode_equals_library_scalar_conversion(fmt, mode):
    x = boundary_f32(5_000, seed=17)
    codes = mpemu.encode(x, fmt, mode)
    r = _L.mpe_round_lookup(mode.encode())
    if fmt == "fp16":
        ref = [_L.mpe_fp32_to_fp16(float(v), r) for v in x]
    elif fmt == "bf16":
        ref = [_L.mpe_fp32_to_bf16(float(v), r) for v in x]
    elif fmt == "e4m3":
        ref = [_L.mpe_fp32_to_e4m3(float(v), r, 0) for v in x]
    else:
        ref = [_L.mpe_fp32_to_e5m2(float(v), r, 0) for v in x]
    assert codes.dtype == (np.uint16 if fmt in ("fp16", "bf16") else np.uint8)
    assert np.array_equal(codes, np.array(ref, codes.dtype))


def test_decode_every_code():
    c16 = np.arange(65536, dtype=np.uint16)
    assert same_bits(mpemu.decode(c16, "fp16"), c16.view(np.float16).astype(np.float32))
    assert same_bits(mpemu.decode(c16, "bf16"), (c16.astype(np.uint32) << 16).view(np.float32))
    for fmt in ("e4m3", "e5m2"):
        c = np.arange(256, dtype=np.uint8)
        v = mpemu.decode(c, fmt)
        dec = _L.mpe_e4m3_to_fp32 if fmt == "e4m3" else _L.mpe_e5m2_to_fp32
        assert same_bits(v, np.array([dec(int(k)) for k in c], np.float32))
        back = mpemu.encode(v, fmt)   # every non-NaN code comes back
        ok = ~np.isnan(v)
        assert np.array_equal(back[ok], c[ok])
    assert mpemu.decode(mpemu.encode(np.float32(1.5), "fp16"), "fp16") == 1.5


def test_round_float64_rounds_once():
    x = np.array([1 + 2**-8 + 2**-40, 1 + 2**-11 + 2**-40, 2**-25 + 2**-60], np.float64)
    assert mpemu.round(x, "bf16").tolist() == [1.0078125, 1.0, 2**-25]
    assert mpemu.round(x, "fp16").tolist() == [1 + 2**-8, 1 + 2**-10, 2**-24]
    assert mpemu.round(x, "fp16").dtype == np.float64


def test_round_options():
    x = np.array([70000.0, 1e-6, -1e-8, 500.0], np.float32)
    assert mpemu.round(x, "fp16", saturate=True)[0] == 65504
    assert np.isinf(mpemu.round(x, "fp16")[0])
    f = mpemu.round(x, "fp16", flush=True)
    assert f[1] == 0 and np.signbit(f[2])
    assert np.isnan(mpemu.round(x, "e4m3")[3]) and mpemu.round(x, "e4m3", saturate=True)[3] == 448
    v = np.full(100_000, 1 + 2**-12, np.float32)     # a quarter of an fp16 ulp above 1
    a = mpemu.round(v, "fp16", "sr", seed=7)
    assert np.array_equal(a, mpemu.round(v, "fp16", "sr", seed=7))
    up = np.mean(a > 1)
    assert 0.24 < up < 0.26, up


def test_shapes_dtypes_and_array_likes():
    class Tensorish:   # what a CPU torch tensor offers
        def __array__(self, dtype=None):
            return np.arange(6, dtype=np.float32).reshape(2, 3) / 3

    y = mpemu.round(Tensorish(), "bf16")
    assert y.shape == (2, 3) and y.dtype == np.float32
    assert mpemu.round([1, 2, 3], "fp16").dtype == np.float64
    assert mpemu.round(np.float16([1.5]), "e5m2").tolist() == [1.5]
    a = np.zeros(10, np.float32)
    assert mpemu._float_array(a) is a                  # zero-copy for C-contiguous float32
    t = np.arange(12, dtype=np.float32).reshape(3, 4).T   # non-contiguous: copied, still right
    assert np.array_equal(mpemu.round(t, "fp32"), t)


def test_errors_carry_the_library_message():
    with pytest.raises(ValueError, match="unknown format 'fp17'"):
        mpemu.round([1.0], "fp17")
    with pytest.raises(ValueError, match="rounding mode"):
        mpemu.round([1.0], "fp16", "nearest")
    with pytest.raises(mpemu.MpemuError) as e:   # a binary32 array cannot hold fp64 results
        mpemu.round(np.float32([1.0]), "fp64")
    assert e.value.code == 1 and "round to fp64" in str(e.value)
    with pytest.raises(mpemu.MpemuError, match="'posix.system', which is not allowed"):
        mpemu.analyze(os.path.join(DATA, "hostile", "pt_os_system.pt"))
    with pytest.raises(mpemu.MpemuError, match="cannot open"):
        mpemu.analyze(os.path.join(DATA, "no-such-file.npy"))


def test_gil_is_released_during_calls():
    x = np.random.default_rng(1).standard_normal(20_000_000).astype(np.float32)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
    t = threading.Thread(target=tick)
    t.start()
    for _ in range(5):
        mpemu.round(x, "e4m3", "sr", seed=3)
    done.set()
    t.join()
    assert len(ticks) > 0


# ---------------------------------------------------------------- gemm

def test_gemm_hand_vectors():
    # Fasi et al.: a = [1, 1], b = [2, 3*2^-24]: the tensor cores truncate the FP32 output (RZ) to 2
    A = np.array([[1, 1]], np.float32)
    B = np.array([[2], [3 * 2.0**-24]], np.float32)
    for model in ("v100", "t4", "a100", "h100"):
        assert mpemu.gemm(A, B, model=model).tolist() == [[2.0]]
    assert mpemu.gemm(A, B, model="exact").tolist() == [[2 + 2.0**-22]]   # one RNE rounding
    # exact products: a0 = b0 = 1 - 2^-11
    a = np.float32(1 - 2.0**-11)
    assert mpemu.gemm([[a]], [[a]], model="v100")[0, 0] == 1 - 2.0**-10 + 2.0**-22


def test_gemm_exact_on_small_integers_and_beta():
    rng = np.random.default_rng(3)
    A = rng.integers(-8, 9, (17, 40)).astype(np.float32)
    B = rng.integers(-8, 9, (40, 9)).astype(np.float32)
    C = rng.integers(-100, 100, (17, 9)).astype(np.float32)
    want = A.astype(np.float64) @ B.astype(np.float64)
    for model, inp in (("h100", "fp16"), ("a100", "bf16"), ("v100", "fp16"), ("ada", "e4m3"), ("a100", "tf32")):
        assert np.array_equal(mpemu.gemm(A, B, model=model, input=inp), want)
    assert np.array_equal(mpemu.gemm(A, B, C, alpha=2.0, beta=-1.0), 2 * want - C)
    C0 = C.copy()
    mpemu.gemm(A, B, C, beta=1.0)
    assert np.array_equal(C, C0)                                   # C is not modified
    h = mpemu.gemm(A.astype(np.float16), B.astype(np.float16), output="fp16")
    assert h.dtype == np.float16 and np.array_equal(h.astype(np.float64), want)


def test_gemm_errors():
    with pytest.raises(ValueError, match="valid: .*a100"):
        mpemu.gemm(np.ones((2, 2)), np.ones((2, 2)), model="v100", input="bf16")
    with pytest.raises(ValueError, match="do not multiply"):
        mpemu.gemm(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="output"):
        mpemu.gemm(np.ones((2, 2)), np.ones((2, 2)), output="bf16")


# ---------------------------------------------------------------- range analysis, files

def test_range_report_counts_equal_numpy():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(1_000_000) * 1e-5).astype(np.float32)
    x[:10] = [0, 0, np.nan, np.inf, 7e4, -7e4, 1e-9, 65519, 65520, 2**-25]
    rep = mpemu.range_report(x, formats=("fp16", "bf16"), margin=1)
    fin = np.isfinite(x)
    with np.errstate(over="ignore"):
        h = x[fin].astype(np.float16)
    nz = x[fin] != 0
    s = rep["formats"]["fp16"]
    assert rep["count"] == x.size and rep["zeros"] == 2 and rep["nan"] == 1 and rep["inf"] == 1
    assert s["underflow"] == int(np.sum(nz & (h == 0)))
    assert s["overflow"] == int(np.sum(np.isinf(h)))
    assert s["subnormal"] == int(np.sum((h != 0) & (np.abs(h) < 2.0**-14)))
    assert s["margin"] == 1 and rep["max_abs"] == 7e4 and s["recommended_scale_log2"] == -2   # 2^-2 * 7e4 <= 65504 / 2
    assert sum(rep["histogram"]["counts"]) == int(np.sum(nz))


def _mpanalyze():
    exe = os.environ.get("MPANALYZE") or os.path.join(TOP, "mpanalyze")
    return exe if os.access(exe, os.X_OK) else None


@pytest.mark.parametrize("name", ["pt/state.pt", "pt/nested.pt", "grads.npz", "model.safetensors", "mixed.npz",
                                  "mixed.safetensors"])
def test_analyze_equals_mpanalyze_json(name):
    exe = _mpanalyze()
    if not exe:
        pytest.skip("mpanalyze not built")
    path = os.path.join(DATA, name)
    cli = json.loads(subprocess.run([exe, "--json", "-q", path], capture_output=True, check=True).stdout)
    assert mpemu.analyze(path) == cli


def test_analyze_selected_tensors():
    r = mpemu.analyze(os.path.join(DATA, "pt", "state.pt"), formats=["e4m3"], tensors=["view.transpose"])
    assert [t["name"] for t in r["tensors"]] == ["view.transpose"] and r["tensors"][0]["shape"] == [5, 4]
    with pytest.raises(mpemu.MpemuError, match="no tensor named 'nope'"):
        mpemu.analyze(os.path.join(DATA, "pt", "state.pt"), tensors=["nope"])


@pytest.mark.parametrize("kind", ["npy", "npz"])   # .npy seeks to an offset, a .npz member reads forward
def test_read_seeks_to_a_value(tmp_path, kind):
    x = boundary_f32(5000).reshape(50, 100)
    y = np.arange(-300, 300, dtype=np.float64) / 7
    if kind == "npy":
        path = str(tmp_path / "x.npy")
        np.save(path, x)
        name = None
    else:
        path = str(tmp_path / "x.npz")
        np.savez(path, y=y, x=x)
        name = "x"
        got = mpemu.read(path, "y", start=123, count=45)
        assert got.dtype == np.float64 and np.array_equal(got, y[123:168])
    flat = x.reshape(-1)
    for start, count in [(0, None), (1, 10), (1234, 999), (4999, None), (4990, 50), (5000, None), (0, 0)]:
        got = mpemu.read(path, name, start=start, count=count)
        want = flat[start:] if count is None else flat[start:start + count]
        assert got.dtype == np.float32
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (start, count)   # NaNs bit for bit


def test_read_past_the_end_is_erange(tmp_path):
    path = str(tmp_path / "x.npy")
    np.save(path, np.ones(10, np.float32))
    with pytest.raises(mpemu.MpemuError, match="value 11 of") as e:
        mpemu.read(path, start=11)
    assert e.value.code == 4   # MPE_ERANGE
    with pytest.raises(mpemu.MpemuError) as e:
        mpemu.read(path, "nope")
    assert e.value.code == 8   # MPE_ENOTFOUND
    with pytest.raises(ValueError):
        mpemu.read(path, start=-1)


# ---------------------------------------------------------------- scaler, listings

def test_scaler_pytorch_rules():
    s = mpemu.Scaler("pytorch")
    assert s.scale == 65536.0
    assert s.update(True) is False and s.scale == 32768.0
    for _ in range(1999):
        assert s.update(False)
    assert s.scale == 32768.0
    s.update(False)
    assert s.scale == 65536.0 and s.steps == 2001 and s.skipped == 1
    with pytest.raises(ValueError, match="valid: pytorch"):
        mpemu.Scaler("tensorflow")


def test_range_too_many_formats_is_einval():
    # mpe_range_create's MPE_EINVAL (1), not an out-of-memory guess
    with pytest.raises(mpemu.MpemuError, match="1 to 64 formats") as e:
        mpemu.range_report([1.0], ["fp16"] * 65)
    assert e.value.code == 1
    assert mpemu.range_report([1.0], ["fp16"] * 64)["count"] == 1


def test_formats_and_models():
    f = {d["name"]: d for d in mpemu.formats()}
    assert f["fp16"]["max"] == 65504 and f["e4m3"]["max"] == 448 and not f["e4m3"]["has_inf"]
    assert f["bf16"]["precision"] == 8 and f["e5m2"]["min_subnormal"] == 2.0**-16
    m = mpemu.models()
    assert m["v100"] == ["fp16"] and "e4m3" in m["h100"] and "tf32" in m["a100"]
    assert m["mi300"] == ["fp16", "bf16", "tf32", "e4m3fnuz", "e5m2fnuz"] and m["mi100"] == ["fp16", "bf16"]
    assert mpemu.version()
