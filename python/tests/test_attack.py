"""Inputs and calls that the package mishandled when it was first written (found by an
adversarial review): each test states what a user would expect."""
import copy
import pickle

import numpy as np
import pytest

import mpemu


def test_big_endian_float64_keeps_binary64():
    """a big-endian float64 array is float64: it must not go through binary32 (which failed for
    fp64 with 'invalid argument' and double-rounded for bf16: 1 + 2^-8 + 2^-30 is above the bf16
    halfway point and rounds up, its binary32 value is the halfway point and rounds to 1)"""
    x = np.array([1 + 2.0**-40, np.pi], dtype=">f8")
    y = mpemu.round(x, "fp64")
    assert y.dtype == np.float64
    assert np.array_equal(y, x.astype(np.float64))
    z = mpemu.round(np.array([1 + 2.0**-8 + 2.0**-30], dtype=">f8"), "bf16")
    assert z[0] == 1 + 2.0**-7


def test_longdouble_is_refused_or_exact():
    """np.longdouble was narrowed to binary32 before rounding (double rounding, and 'invalid
    argument' for fp64): refuse it with a clear message, or round from binary64 at least"""
    x = np.array([1 + 2.0**-8 + 2.0**-30], dtype=np.longdouble)
    try:
        y = mpemu.round(x, "bf16")
    except (TypeError, ValueError):
        return
    assert y[0] == 1 + 2.0**-7


def test_complex_is_refused():
    """a complex array would lose its imaginary part without a word"""
    with pytest.raises((TypeError, ValueError)):
        mpemu.round(np.array([1 + 2j]), "fp16")


def test_gemm_refuses_complex():
    """gemm dropped the imaginary part of complex A, B or C where round() refuses it"""
    z = np.array([[1 + 2j, 0], [0, 1]])
    r = np.eye(2)
    for args in ((z, r), (r, z)):
        with pytest.raises(TypeError):
            mpemu.gemm(*args)
    with pytest.raises(TypeError):
        mpemu.gemm(r, r, z, beta=1.0)
    assert np.array_equal(mpemu.gemm(r, r), np.eye(2, dtype=np.float32))


def test_decode_refuses_codes_out_of_range():
    """code 256 is no e4m3 code, 70000 no fp16 code, 1.5 no code at all: not silently wrapped"""
    with pytest.raises(ValueError):
        mpemu.decode(np.array([256]), "e4m3")
    with pytest.raises(ValueError):
        mpemu.decode(np.array([70000]), "fp16")
    with pytest.raises(ValueError):
        mpemu.decode(np.array([-1]), "bf16")
    with pytest.raises((TypeError, ValueError)):
        mpemu.decode(np.array([1.5]), "e5m2")
    # in range they decode as before
    assert mpemu.decode(np.array([0x3c00]), "fp16")[0] == 1.0
    assert mpemu.decode([0x38], "e4m3")[0] == 1.0


def test_scaler_copy_and_pickle_do_not_share_the_handle():
    """copy.copy, copy.deepcopy and pickle of a Scaler must not yield two owners of one C
    scaler (a double free at exit) or a pointer revived in another process"""
    s = mpemu.Scaler("pytorch")
    for dup in (copy.copy, copy.deepcopy, lambda o: pickle.loads(pickle.dumps(o))):
        try:
            t = dup(s)
        except (TypeError, pickle.PicklingError):
            continue
        assert t._s != s._s
        t.update(True)
        assert s.scale != t.scale
        del t
    s.update(False)
    assert s.steps == 1


def test_analyze_chunk_values_must_be_positive(tmp_path):
    """chunk_values=0 read nothing and reported every tensor as empty"""
    p = tmp_path / "x.npy"
    np.save(p, np.arange(10, dtype=np.float32))
    with pytest.raises(ValueError):
        mpemu.analyze(str(p), chunk_values=0)
    assert mpemu.analyze(str(p), chunk_values=3)["tensors"][0]["count"] == 10


def test_analyze_tensors_as_one_string(tmp_path):
    """tensors="weight" is one name, not the letters w, e, i, g, h, t"""
    p = tmp_path / "x.npz"
    np.savez(p, weight=np.ones(4, np.float32), bias=np.zeros(2, np.float32))
    r = mpemu.analyze(str(p), tensors="weight")
    assert [t["name"] for t in r["tensors"]] == ["weight"]


def test_range_margin_out_of_int_range():
    """a margin that does not fit a C int is refused, not wrapped (2^32 would become 0); nor one
    past mpanalyze's 1000, where the library's scale arithmetic (et - margin - ea) overflows int"""
    with pytest.raises((ValueError, OverflowError)):
        mpemu.range_report(np.ones(3, np.float32), margin=2**32)
    with pytest.raises(ValueError):
        mpemu.range_report(np.full(3, 1e300), margin=2**31 - 1)
    assert mpemu.range_report(np.ones(3, np.float32), margin=1000)["formats"]["fp16"]["margin"] == 1000


def test_int64_beyond_2_53_not_double_rounded():
    """2^60 + 2^52 + 1 rounds to bf16 as 2^60 + 2^53 (above the halfway point); going through
    binary64 first makes it a tie and gives 2^60: refuse integers binary64 cannot hold, or be exact"""
    x = np.array([2**60 + 2**52 + 1], dtype=np.int64)
    try:
        y = mpemu.round(x, "bf16")
    except (TypeError, ValueError):
        return
    assert y[0] == 2.0**60 + 2.0**53


def test_zero_d_keeps_its_shape():
    """round/encode return an array of x's shape: a 0-d input gave shape (1,)"""
    assert mpemu.round(np.float32(1.1), "bf16").shape == ()
    assert mpemu.round(1.1, "fp16").shape == ()
    assert mpemu.encode(np.float32(1.0), "e4m3").shape == ()
    assert mpemu.round(np.zeros((0, 3), np.float32), "bf16").shape == (0, 3)


def test_names_with_nul_or_not_str(tmp_path):
    """a NUL cut the name short in C: 'fp16\\0x' was fp16, 'h100\\0x' h100 and 'x.npy\\0junk'
    x.npy; a name that is not a string gave AttributeError"""
    p = tmp_path / "x.npy"
    np.save(p, np.ones(3, np.float32))
    with pytest.raises(ValueError):
        mpemu.analyze(str(p) + "\0junk")
    with pytest.raises(ValueError):
        mpemu.round([1.0], "fp16\0x")
    with pytest.raises(ValueError):
        mpemu.gemm(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), model="h100\0x")
    with pytest.raises(ValueError):
        mpemu.Scaler("pytorch\0x")
    with pytest.raises((TypeError, ValueError)):
        mpemu.gemm(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32), model=5)
    with pytest.raises((TypeError, ValueError)):
        mpemu.Scaler(None)


def test_encode_zero_d_nan():
    for f in ("fp16", "bf16", "e4m3", "e5m2"):
        c = mpemu.encode(np.float32(-np.nan), f)
        assert c.shape == () and c == mpemu.encode(np.array([-np.nan], np.float32), f)[0]
