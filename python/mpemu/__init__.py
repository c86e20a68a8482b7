"""mpemu: bit-exact low-precision formats, tensor-core models and range analysis for NumPy
and PyTorch.

A thin ctypes layer over libmpemu (see mpemu/_lib.py for how the library is found). Arrays
are passed to the library without a copy when they are C-contiguous and of the dtype the
call needs (float32 or float64); anything with ``__array__`` (a list, an array-like) is
accepted. CPU ``torch.Tensor`` s go in through their NumPy view (``Tensor.numpy()``, which
shares the tensor's memory: no copy when contiguous float32) and the results come back as
``torch.Tensor`` s sharing the result array's memory; calls given NumPy arrays return NumPy
arrays. ctypes releases the GIL for the duration of every library call, so long calls
(``round`` on 10^8 values, ``gemm``, ``analyze``) let other Python threads run. Library
errors are raised as :class:`MpemuError` carrying the library's message. ``mpemu.torch``
puts the tensor-core models inside PyTorch training (autograd functions, module swapping,
loss-scaler replay, gradient dumps).
"""
import ctypes
import json
import os
import secrets
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib

__all__ = ["MpemuError", "round", "encode", "decode", "gemm", "gemm_int", "gemm_sp", "gemm_mx", "gemm_scaled",
           "mma_scaled", "prune_2_4",
           "mx_quantize", "mx_dequantize", "mx_round", "quantize_int", "dequantize_int", "fx16_encode",
           "fx16_decode", "q16_encode", "q16_decode", "range_report", "analyze", "read", "Scaler", "formats",
           "models", "mx_kinds", "version"]

_L = _lib.load()
_libc_free = ctypes.CDLL(None).free   # the library's malloc'ed report text
_libc_free.argtypes = [ctypes.c_void_p]
_libc_free.restype = None
_lib.declare(_L)

# mpe_type
FP64, FP32, TF32, FP16, BF16, E4M3, E5M2 = range(7)
_TYPE_OF = {"fp64": FP64, "fp32": FP32, "tf32": TF32, "fp16": FP16, "bf16": BF16, "e4m3": E4M3, "e5m2": E5M2}
INT8, UINT8, INT4, UINT4, INT32 = range(7, 12)
E2M3, E3M2, E2M1, E8M0 = range(12, 16)
E4M3FNUZ, E5M2FNUZ = 16, 17   # AMD CDNA3's FP8: no inf, no -0, 0x80 the one NaN
_TYPE_OF.update({"e4m3fnuz": E4M3FNUZ, "e5m2fnuz": E5M2FNUZ})
_FP8 = ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz")
_PACKED = ("fp16", "bf16") + _FP8
_INPUTS = ("fp16", "bf16", "tf32") + _FP8
_INT_OF = {"int8": INT8, "uint8": UINT8, "int4": INT4, "uint4": UINT4}


def _model_names() -> Tuple[str, ...]:
    """every name mpe_tc_model_get takes: the canonical names, then the aliases (mpe_tc_model_name_at(3))"""
    out = []
    while True:
        n = _L.mpe_tc_model_name_at(len(out))
        if n is None:
            return tuple(out)
        out.append(n.decode())


_MODEL_NAMES = _model_names()
_ALL_TYPES = (FP16, BF16, TF32, E4M3, E5M2, INT8, UINT8, INT4, UINT4, E2M3, E3M2, E2M1)


class MpemuError(RuntimeError):
    """A libmpemu call failed: ``code`` is the MPE_E* code, the message is the library's."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _check(rc: int, what: str = "") -> None:
    if rc:
        msg = _L.mpe_strerror(rc).decode()
        raise MpemuError(rc, f"{what}: {msg}" if what else msg)


def version() -> str:
    """The library's version string."""
    return _L.mpe_version_string().decode()


def _name(x: Any, what: str) -> bytes:
    """a name for the C library: a str without NUL (C would stop reading at the NUL)"""
    if not isinstance(x, str):
        raise TypeError(f"{what} must be a str, not {type(x).__name__}")
    if "\0" in x:
        raise ValueError(f"{what} {x!r} holds a NUL character")
    return x.encode()


def _format_names() -> List[str]:
    """the names of the library's built-in formats (mpe_format_of over every mpe_type)"""
    out = []
    for t in range(64):
        f = _L.mpe_format_of(t)
        if f:
            out.append(_L.mpe_format_name(f).decode())
    return out


def _format(fmt: str) -> int:
    f = _L.mpe_format_lookup(_name(fmt, "format")) if isinstance(fmt, str) else None
    if not f:
        raise ValueError(f"unknown format {fmt!r} (valid: {', '.join(_format_names())}; "
                         "aliases as mpe_format_lookup(3) lists)")
    return f


# ---------------------------------------------------------------- torch tensors in and out

def _is_torch(x: Any) -> bool:
    """x is a torch.Tensor (torch is not imported here: a tensor means it already is)"""
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def _np(x: Any) -> Any:
    """a torch.Tensor as the NumPy array sharing its memory (no copy when it is a CPU tensor of
    a dtype NumPy has; bfloat16 and the float8 dtypes are widened exactly to float32 first);
    anything else unchanged"""
    if not _is_torch(x):
        return x
    if x.device.type != "cpu":
        raise ValueError(f"mpemu works on CPU tensors; this one is on {x.device}: pass x.cpu()")
    x = x.detach()
    if x.is_complex():
        raise TypeError(f"expected real numbers, got a tensor of dtype {x.dtype}")
    if x.is_floating_point() and x.element_size() < 4 and str(x.dtype) != "torch.float16":
        x = x.float()   # bfloat16, float8: no NumPy dtype; exact in binary32
    return x.resolve_conj().resolve_neg().numpy()


def _out(y: Any, like_torch: bool) -> Any:
    """y (an array or a tuple of arrays) as torch tensors sharing their memory when like_torch"""
    if not like_torch:
        return y
    t = sys.modules["torch"]
    if isinstance(y, tuple):
        return tuple(_out(v, True) for v in y)
    y = np.ascontiguousarray(y)
    try:
        return t.from_numpy(y)
    except TypeError:   # a torch without this unsigned dtype: the values, widened
        return t.from_numpy(y.astype(np.int32))


def _mode(mode: str) -> int:
    r = _L.mpe_round_lookup(_name(mode, "rounding mode")) if isinstance(mode, str) else -1
    if r < 0:
        raise ValueError(f"unknown rounding mode {mode!r} (valid: rne, rna, rz, ru, rd, ro, sr, sr_eq)")
    return r


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def _float_array(x: Any) -> np.ndarray:
    """x as a C-contiguous float32 or float64 array (no copy when it already is one); binary64
    inputs of either byte order stay binary64; what cannot be converted exactly is refused"""
    a = np.asarray(x)
    b = _float_array_nd(a)
    return b if b.shape == a.shape else b.reshape(a.shape)   # ascontiguousarray makes a 0-d array 1-d


def _float_array_nd(a: np.ndarray) -> np.ndarray:
    k = a.dtype.kind
    if k not in "fiub":
        raise TypeError(f"expected real numbers, got an array of dtype {a.dtype}")
    if k == "f" and a.dtype.itemsize > 8:
        raise TypeError(f"dtype {a.dtype} is wider than binary64: convert it to float64 first")
    if k == "f" and a.dtype.itemsize == 8:
        return np.ascontiguousarray(a, dtype=np.float64)
    if k in "iu":
        b = np.ascontiguousarray(a, dtype=np.float64)
        if a.dtype.itemsize > 4 and a.size:   # 64-bit integers: binary64 holds 53 bits
            fits = np.abs(b) < 2.0**63
            if not fits.all() or not np.array_equal(np.where(fits, b, 0).astype(a.dtype), a):
                raise ValueError("integers that binary64 cannot hold exactly (over 2^53): convert them first")
        return b
    if k == "b":
        return np.ascontiguousarray(a, dtype=np.float64)
    return np.ascontiguousarray(a, dtype=np.float32)


def round(x: Any, fmt: str, mode: str = "rne", *, saturate: bool = False, flush: bool = False,
          seed: Optional[int] = None) -> np.ndarray:
    """Round every value of ``x`` to format ``fmt`` (``"fp16"``, ``"bf16"``, ``"tf32"``, ``"e4m3"``,
    ``"e5m2"``, ``"fp32"``, ``"fp64"``) with rounding ``mode`` (``rne``, ``rna``, ``rz``, ``ru``,
    ``rd``, ``ro``, ``sr``, ``sr_eq``).

    Returns a new array of x's shape holding the rounded values: float64 when x is float64 (or
    integer), else float32 (float16 and bfloat16 inputs are widened exactly). Complex and
    long-double arrays, and 64-bit integers that binary64 cannot hold exactly, raise TypeError /
    ValueError rather than being narrowed before rounding. ``saturate``: overflow
    gives the largest finite value; ``flush``: subnormal results become signed zeros. ``seed``: the
    stochastic modes' stream (element i uses the counter-based generator at (seed, i)); None
    draws a fresh seed. Same bits as ``mpe_round_f32``/``mpe_round_f64`` on the same data.
    A CPU torch.Tensor gives a torch.Tensor (float32 or float64, as for arrays).
    """
    a = _float_array(_np(x))
    f = _format(fmt)
    o = _lib.RoundOpts(_mode(mode), int(bool(flush)), int(bool(saturate)),
                       secrets.randbits(64) if seed is None else int(seed) & (2**64 - 1), 0)
    y = np.empty_like(a)
    fn = _L.mpe_round_f64 if a.dtype == np.float64 else _L.mpe_round_f32
    _check(fn(_ptr(y), _ptr(a), a.size, f, ctypes.byref(o)), f"round to {fmt}")
    return _out(y, _is_torch(x))


def _fp8_table(fmt: str) -> np.ndarray:
    dec = getattr(_L, f"mpe_{fmt}_to_fp32")
    return np.array([dec(v) for v in range(256)], dtype=np.float32)


_tables: Dict[str, np.ndarray] = {}


def _table(fmt: str) -> np.ndarray:
    if fmt not in _tables:
        _tables[fmt] = _fp8_table(fmt)
    return _tables[fmt]


def _nan_code(fmt: str, negative: bool, saturate: bool) -> int:
    nan = -float("nan") if negative else float("nan")
    if fmt == "fp16":
        return _L.mpe_fp32_to_fp16(nan, 0)
    if fmt == "bf16":
        return _L.mpe_fp32_to_bf16(nan, 0)
    return getattr(_L, f"mpe_fp32_to_{fmt}")(nan, 0, int(saturate))


def encode(x: Any, fmt: str, mode: str = "rne", *, saturate: bool = False, seed: Optional[int] = None) -> np.ndarray:
    """The bit patterns of ``x`` rounded to ``fmt``: uint16 for ``fp16``/``bf16``, uint8 for
    ``e4m3``/``e5m2``/``e4m3fnuz``/``e5m2fnuz`` (x's shape). NaNs get the library's canonical NaN
    (sign kept; the FNUZ formats' one NaN is 0x80, and their one zero 0x00). A torch tensor gives
    a torch tensor (torch.uint16 / torch.uint8)."""
    like_torch, x = _is_torch(x), _np(x)
    if fmt not in _PACKED:
        raise ValueError(f"encode: {fmt!r} has no packed encoding here (valid: {', '.join(_PACKED)})")
    r = round(x, fmt, mode, saturate=saturate, seed=seed).astype(np.float32)   # exact: values of fmt
    shape = r.shape
    r = r.reshape(-1)   # 0-d arrays index as scalars
    nan = np.isnan(r)
    neg = np.signbit(r)
    if fmt == "fp16":
        codes = r.astype(np.float16).view(np.uint16)
    elif fmt == "bf16":
        codes = (r.view(np.uint32) >> 16).astype(np.uint16)
    else:
        if fmt.endswith("fnuz"):   # one zero: -0 (a negative value rounded to zero) is 0x00
            r = np.where(r == 0, np.float32(0), r)
        t = _table(fmt)
        ok = ~np.isnan(t)
        bits = t.view(np.uint32)[ok]
        code_of = np.nonzero(ok)[0].astype(np.uint8)
        order = np.argsort(bits)
        rb = r.view(np.uint32)
        pos = np.searchsorted(bits[order], rb)
        pos = np.minimum(pos, len(order) - 1)
        codes = code_of[order][pos]
        if not np.array_equal(bits[order][pos][~nan], rb[~nan]):   # a value not of the format: cannot happen
            raise MpemuError(6, "encode: a rounded value has no code")
    codes = codes.copy()
    if nan.any():
        codes[nan & ~neg] = _nan_code(fmt, False, saturate)
        codes[nan & neg] = _nan_code(fmt, True, saturate)
    return _out(codes.reshape(shape), like_torch)


def decode(codes: Any, fmt: str) -> np.ndarray:
    """The values (float32) of bit patterns ``codes`` of ``fmt`` (uint16 for fp16/bf16, uint8 for FP8;
    a torch tensor of codes gives a float32 tensor)."""
    like_torch = _is_torch(codes)
    c = np.asarray(_np(codes))
    if fmt in _PACKED:
        if c.dtype.kind not in "iu":
            raise TypeError(f"decode: codes must be integers, not {c.dtype}")
        top = 0xffff if fmt in ("fp16", "bf16") else 0xff
        if c.size and (c.min() < 0 or c.max() > top):
            raise ValueError(f"decode: {fmt} codes lie in 0..{top:#x}")
    if fmt == "fp16":
        return _out(c.astype(np.uint16).view(np.float16).astype(np.float32), like_torch)
    if fmt == "bf16":
        return _out((c.astype(np.uint32) << 16).view(np.float32), like_torch)
    if fmt in _FP8:
        return _out(_table(fmt)[c.astype(np.uint8)], like_torch)
    raise ValueError(f"decode: {fmt!r} has no packed encoding here (valid: {', '.join(_PACKED)})")


def _mnk(a: np.ndarray, b: np.ndarray, what: str) -> Tuple[int, int, int]:
    """m, n, k of A (m x k) times B (k x n); ValueError when they do not multiply or are too large"""
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"{what}: shapes {a.shape} and {b.shape} do not multiply")
    m, k = a.shape
    n = b.shape[1]
    if max(m, n, k) > 2**31 - 1:
        raise ValueError(f"{what}: a dimension over 2^31 - 1")
    return m, n, k


def _c(C: Any, m: int, n: int, dtype: Any, what: str) -> np.ndarray:
    """a new C-contiguous m x n array of dtype: zeros, or a copy of C (which is not modified)"""
    c = np.zeros((m, n), dtype) if C is None else np.array(np.asarray(_np(C), dtype=dtype), order="C", copy=True)
    if c.shape != (m, n):
        raise ValueError(f"{what}: C has shape {c.shape}, expected {(m, n)}")
    return c


def gemm(A: Any, B: Any, C: Any = None, *, model: str = "h100", input: str = "fp16", output: str = "fp32",
         alpha: float = 1.0, beta: float = 0.0, input_b: Optional[str] = None) -> np.ndarray:
    """``alpha * A @ B + beta * C`` as ``model``'s tensor cores compute it (``mpe_gemm``: BLAS
    semantics, accumulator from 0, blocks chained in ascending k).

    A (m x k) and B (k x n) are binary32 values converted to ``input`` (fp16, bf16, tf32, e4m3,
    e5m2, e4m3fnuz, e5m2fnuz) by the model's input rule; float16 arrays with ``input="fp16"`` are passed as they are.
    ``output``: ``"fp32"`` (float32 result) or ``"fp16"`` (float16 result). C (m x n) is read only
    when beta != 0 and is not modified: a new array is returned. ``input_b``: B's format when it
    differs from A's, for the mixed FP8 instructions (one of e4m3, e5m2 each, or of e4m3fnuz,
    e5m2fnuz on mi300): A and B are then
    encoded to packed FP8 as the model's input rule does (nearest-even, saturating) and passed
    packed. CPU torch tensors are read without a copy when they are contiguous float32; a torch
    tensor among A, B gives a torch tensor.
    """
    like_torch = _is_torch(A) or _is_torch(B)
    if input not in _TYPE_OF or _TYPE_OF[input] in (FP32, FP64):
        raise ValueError(f"unknown input {input!r} (valid: {', '.join(_INPUTS)})")
    if output not in ("fp32", "fp16"):
        raise ValueError(f"unknown output {output!r} (valid: fp32, fp16)")
    tin = _TYPE_OF[input]
    m_ = _model(model, tin, input)
    mixed = input_b is not None and input_b != input
    if mixed and sorted((input, input_b)) not in (["e4m3", "e5m2"], ["e4m3fnuz", "e5m2fnuz"]):
        raise ValueError(f"input_b {input_b!r} with input {input!r}: mixed inputs are one e4m3 and one e5m2, "
                         "or one e4m3fnuz and one e5m2fnuz")

    def real(X: Any) -> np.ndarray:   # complex or object data would lose a part without a word
        a = np.asarray(_np(X))
        if a.dtype.kind not in "fiub":
            raise TypeError(f"gemm: expected real numbers, got an array of dtype {a.dtype}")
        return a

    def operand(X: Any, fmt: str) -> Tuple[np.ndarray, int]:
        a = real(X)
        if mixed:
            return np.ascontiguousarray(encode(a, fmt, saturate=True)), _TYPE_OF[fmt]
        if a.dtype == np.float16 and tin == FP16:
            return np.ascontiguousarray(a).view(np.uint16), FP16
        return np.ascontiguousarray(a, dtype=np.float32), FP32

    a, at = operand(A, input)
    b, bt = operand(B, input if input_b is None else input_b)
    m, n, k = _mnk(a, b, "gemm")
    if C is not None:
        C = real(C)
    if output == "fp32":
        c, ct = _c(C, m, n, np.float32, "gemm"), FP32
    else:
        c, ct = _c(C, m, n, np.float16, "gemm").view(np.uint16), FP16
    _check(_L.mpe_gemm(m_, 0, 0, 0, m, n, k, float(alpha), _ptr(a), at, max(k, 1), _ptr(b), bt, max(n, 1),
                       float(beta), _ptr(c), ct, max(n, 1)), f"gemm on {model}")
    return _out(c if ct == FP32 else c.view(np.float16), like_torch)


def _model(model: str, t: int, what: str) -> int:
    """the mpe_tc_model of name model for input type t; ValueError naming the valid models
    when the name is unknown, or those with `what` inputs when this one has none"""
    m_ = _L.mpe_tc_model_get(_name(model, "model"), t)
    if m_:
        return m_
    if not any(_L.mpe_tc_model_get(model.encode(), u) for u in _ALL_TYPES):
        raise ValueError(f"unknown model {model!r} (valid: {', '.join(_MODEL_NAMES)}, and the GPU:instruction "
                         "forms such as h100:wgmma; see mpe_tc_model_get(3))")
    valid = [n for n in _MODEL_NAMES if _L.mpe_tc_model_get(n.encode(), t)]
    raise ValueError(f"model {model!r} has no {what} tensor cores (valid: {', '.join(valid)})")


def _int_operand(X: Any, what: str) -> Tuple[np.ndarray, bool]:
    """an integer operand as a C-contiguous int8 or uint8 array (no copy when it is one)"""
    a = np.asarray(_np(X))
    if a.dtype not in (np.int8, np.uint8):
        raise TypeError(f"{what} must hold int8 or uint8 values (one 4-bit value per byte for int4/uint4), "
                        f"not {a.dtype}")
    return np.ascontiguousarray(a), a.dtype == np.uint8


def gemm_int(A: Any, B: Any, C: Any = None, *, model: str = "h100", input: str = "int8", alpha: int = 1,
             beta: int = 0) -> np.ndarray:
    """``alpha * A @ B + beta * C`` on ``model``'s integer tensor cores (``mpe_gemm`` with an
    integer model, mpe_tc_int(3)): exact int32 accumulation wrapping modulo 2^32, the epilogue in
    int32. ``input``: ``"int8"`` (A and B int8 or uint8 arrays) or ``"int4"`` (int8 arrays holding
    -8..7 or uint8 arrays holding 0..15, one value a byte). Returns an int32 array (a torch
    tensor when A or B is one); C (int32, m x n) is read when beta != 0."""
    like_torch = _is_torch(A) or _is_torch(B)
    if input not in ("int8", "int4"):
        raise ValueError(f"unknown input {input!r} (valid: int8, int4)")
    a, ua = _int_operand(A, "A")
    b, ub = _int_operand(B, "B")
    base = INT8 if input == "int8" else INT4
    m_ = _model(model, base, input)
    m, n, k = _mnk(a, b, "gemm_int")
    for v, what in ((alpha, "alpha"), (beta, "beta")):
        if int(v) != v:
            raise ValueError(f"gemm_int: {what} must be an integer")
    c = _c(C, m, n, np.int32, "gemm_int")
    _check(_L.mpe_gemm(m_, 0, 0, 0, m, n, k, float(alpha), _ptr(a), base + ua, max(k, 1), _ptr(b), base + ub,
                       max(n, 1), float(beta), _ptr(c), INT32, max(n, 1)), f"gemm_int on {model}")
    return _out(c, like_torch)


def prune_2_4(A: Any) -> np.ndarray:
    """A (m x k, float32) with the two smallest magnitudes of every group of four along k set
    to +0 (``mpe_prune_2_4``: ties to the lower index, a NaN is kept)."""
    like_torch = _is_torch(A)
    a = np.ascontiguousarray(_np(A), dtype=np.float32)
    if a.ndim != 2:
        raise ValueError(f"prune_2_4: A must be 2-D, not of shape {a.shape}")
    m, k = a.shape
    p = np.empty_like(a)
    _check(_L.mpe_prune_2_4(0, m, k, _ptr(a), FP32, max(k, 1), _ptr(p), max(k, 1)), "prune_2_4")
    return _out(p, like_torch)


def gemm_sp(A: Any, B: Any, C: Any = None, *, model: str = "a100", input: str = "fp16", alpha: float = 1.0,
            beta: float = 0.0, kept_block: int = 0) -> np.ndarray:
    """``alpha * A @ B + beta * C`` on ``model``'s sparse tensor cores (``mpe_gemm_sp``): A is a
    2:4 sparse m x k float32 matrix (at most two non-zeros in every group of four along k; see
    ``prune_2_4``), compressed with ``mpe_sparse_compress`` and multiplied by dense B (k x n);
    ``kept_block``: kept products per hardware block (0: the model's). Returns float32 (a torch
    tensor when A or B is one)."""
    like_torch = _is_torch(A) or _is_torch(B)
    if input not in _TYPE_OF or _TYPE_OF[input] in (FP32, FP64):
        raise ValueError(f"unknown input {input!r} (valid: {', '.join(_INPUTS)})")
    m_ = _model(model, _TYPE_OF[input], input)
    a = np.ascontiguousarray(_np(A), dtype=np.float32)
    b = np.ascontiguousarray(_np(B), dtype=np.float32)
    m, n, k = _mnk(a, b, "gemm_sp")
    kept, words = _L.mpe_sparse_kept(k), _L.mpe_sparse_meta_words(k)
    v = np.zeros((m, max(kept, 1)), np.float32)
    meta = np.zeros((m, max(words, 1)), np.uint16)
    _check(_L.mpe_sparse_compress(0, m, k, _ptr(a), FP32, max(k, 1), _ptr(v), max(kept, 1), _ptr(meta),
                                  max(words, 1)), "gemm_sp: A is not 2:4 sparse (prune_2_4 makes it so)")
    c = _c(C, m, n, np.float32, "gemm_sp")
    _check(_L.mpe_gemm_sp(m_, int(kept_block), 0, 0, m, n, k, float(alpha), _ptr(v), FP32, max(kept, 1),
                          _ptr(meta), max(words, 1), _ptr(b), FP32, max(n, 1), float(beta), _ptr(c), FP32,
                          max(n, 1)), f"gemm_sp on {model}")
    return _out(c, like_torch)


# ---------------------------------------------------------------- block-scaled (MX, NVFP4)

def mx_kinds() -> List[str]:
    """the block-scaled formats by name (mpe_mx(3)); mxint8 is listed but not implemented"""
    return [_L.mpe_mx_name(k).decode() for k in range(64) if _L.mpe_mx_name(k)]


def _mx_kind(kind: str) -> int:
    k = _L.mpe_mx_lookup(_name(kind, "block-scaled format")) if isinstance(kind, str) else -1
    if k < 0:
        raise ValueError(f"unknown block-scaled format {kind!r} (valid: {', '.join(mx_kinds())})")
    return k


def _rows(x: Any) -> Tuple[np.ndarray, Tuple[int, ...]]:
    """x as a C-contiguous float32 matrix of its rows (the last axis; a 0-d array is one row)"""
    a = np.asarray(x)
    if a.dtype.kind not in "fiub" or (a.dtype.kind == "f" and a.dtype.itemsize > 4):
        a = np.asarray(_float_array(a), dtype=np.float32)   # refuses what is not real; f64 rounds once
    a = np.ascontiguousarray(a, dtype=np.float32)
    shape = a.shape if a.ndim else (1,)
    return a.reshape(-1, shape[-1]) if a.size else a.reshape(0, shape[-1]), shape


def mx_quantize(x: Any, kind: str = "mxfp8_e4m3", mode: str = "rne", *,
                seed: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Block-scaled quantisation along the last axis (``mpe_mx_quantize_f32``, one scale per
    ``mpe_mx_block`` consecutive values of a row; a row's last block may be short): returns
    ``(elements, scales)``, uint8 codes of x's shape and of shape ``x.shape[:-1] +
    (ceil(x.shape[-1] / block),)``. ``kind``: see ``mx_kinds()``. float64 input is first
    rounded to float32. Torch tensors in, torch tensors out."""
    like_torch = _is_torch(x)
    k = _mx_kind(kind)
    a, shape = _rows(_np(x))
    blk = _L.mpe_mx_block(k)
    rows, cols = a.shape
    nb = -(-cols // blk)
    elem = np.empty((rows, cols), np.uint8)
    scale = np.empty((rows, nb), np.uint8)
    o = _lib.RoundOpts(_mode(mode), 0, 0, secrets.randbits(64) if seed is None else int(seed) & (2**64 - 1), 0)
    if cols % blk == 0:   # whole blocks: the rows one after another are one call
        _check(_L.mpe_mx_quantize_f32(_ptr(elem), _ptr(scale), _ptr(a), a.size, k, ctypes.byref(o)), f"mx {kind}")
    else:
        for i in range(rows):
            o.offset = i * cols
            _check(_L.mpe_mx_quantize_f32(_ptr(elem[i]), _ptr(scale[i]), _ptr(a[i]), cols, k, ctypes.byref(o)),
                   f"mx {kind}")
    return _out((elem.reshape(shape), scale.reshape(shape[:-1] + (nb,))), like_torch)


def mx_dequantize(elements: Any, scales: Any, kind: str = "mxfp8_e4m3") -> np.ndarray:
    """The float32 values of block-scaled ``(elements, scales)`` as ``mx_quantize`` returns them
    (``mpe_mx_dequantize_f32``)."""
    like_torch = _is_torch(elements)
    k = _mx_kind(kind)
    e = np.ascontiguousarray(_np(elements))
    sc = np.ascontiguousarray(_np(scales))
    if e.dtype != np.uint8 or sc.dtype != np.uint8:
        raise TypeError("mx_dequantize: elements and scales are uint8 codes")
    shape = e.shape if e.ndim else (1,)
    blk = _L.mpe_mx_block(k)
    cols = shape[-1]
    nb = -(-cols // blk)
    if sc.shape != shape[:-1] + (nb,):
        raise ValueError(f"mx_dequantize: scales have shape {sc.shape}, expected {shape[:-1] + (nb,)}")
    e2, s2 = e.reshape(-1, cols), sc.reshape(-1, nb)
    y = np.empty(e2.shape, np.float32)
    if cols % blk == 0:
        _check(_L.mpe_mx_dequantize_f32(_ptr(y), _ptr(e2), _ptr(s2), e2.size, k), f"mx {kind}")
    else:
        for i in range(e2.shape[0]):
            _check(_L.mpe_mx_dequantize_f32(_ptr(y[i]), _ptr(e2[i]), _ptr(s2[i]), cols, k), f"mx {kind}")
    return _out(y.reshape(shape), like_torch)


def mx_round(x: Any, kind: str = "mxfp8_e4m3", mode: str = "rne", *, seed: Optional[int] = None) -> np.ndarray:
    """x quantised to ``kind`` along its last axis and back to float32 (fake quantisation)."""
    like_torch = _is_torch(x)
    e, sc = mx_quantize(_np(x), kind, mode, seed=seed)
    return _out(mx_dequantize(e, sc, kind), like_torch)


# which tcgen05 kind multiplies which block-scaled format (mpe_tc_model_get(3))
_MX_MODEL = {"mxfp8_e4m3": "mxf8f6f4", "mxfp8_e5m2": "mxf8f6f4", "mxfp6_e2m3": "mxf8f6f4",
             "mxfp6_e3m2": "mxf8f6f4", "mxfp4": "mxf4", "nvfp4": "mxf4nvf4"}


def _mx_model(model: str, kind: str) -> Tuple[str, int]:
    """the block-scaled model that multiplies `kind` on GPU `model` (or the GPU:kind named)"""
    k = _mx_kind(kind)
    name = model if ":" in model or kind.lower() not in _MX_MODEL else f"{model}:{_MX_MODEL[kind.lower()]}"
    return name, _model(name, _L.mpe_mx_element_type(k), kind)


def gemm_mx(A: Any, B: Any, C: Any = None, *, kind: str = "mxfp8_e4m3", kind_b: Optional[str] = None,
            model: str = "b200", alpha: float = 1.0, beta: float = 0.0) -> np.ndarray:
    """``alpha * A @ B + beta * C`` with A and B block-scaled along k as ``mx_quantize`` does
    (A's rows, B's columns; ``kind_b`` for B, default ``kind``) and multiplied on ``model``'s
    block-scaled tensor cores (``mpe_gemm_scaled``; ``model`` "b200" picks the tcgen05 kind
    that takes the formats, or name one: "b200:mxf8f6f4", "b200:mxf4", "b200:mxf4nvf4").
    Returns float32 (a torch tensor when A or B is one)."""
    like_torch = _is_torch(A) or _is_torch(B)
    kb = kind if kind_b is None else kind_b
    ka_, kb_ = _mx_kind(kind), _mx_kind(kb)
    a = np.ascontiguousarray(_np(A), dtype=np.float32)
    b = np.asarray(_np(B), dtype=np.float32)
    m, n, k = _mnk(a, b, "gemm_mx")
    if _L.mpe_mx_block(ka_) != _L.mpe_mx_block(kb_) or _L.mpe_mx_scale_type(ka_) != _L.mpe_mx_scale_type(kb_):
        raise ValueError(f"gemm_mx: {kind} and {kb} have different scale blocks")
    name, m_ = _mx_model(model, kind)
    ta = _L.mpe_mx_element_type(ka_)
    ea, sa = mx_quantize(a, kind)
    eb, sb = mx_quantize(np.ascontiguousarray(b.T), kb)   # B's columns: rows of B^T, scales n x nb
    sbt = np.ascontiguousarray(sb.T)                       # op(B)'s scales: nb x n
    nb = sa.shape[1]
    c = _c(C, m, n, np.float32, "gemm_mx")
    _check(_L.mpe_gemm_scaled(m_, 0, 0, 1, m, n, k, float(alpha), _ptr(ea), ta, max(k, 1), _ptr(eb),
                              _L.mpe_mx_element_type(kb_), max(k, 1), _ptr(sa), max(nb, 1), _ptr(sbt), max(n, 1),
                              _L.mpe_mx_scale_type(ka_), _L.mpe_mx_block(ka_), float(beta), _ptr(c), FP32,
                              max(n, 1)), f"gemm_mx on {name}")
    return _out(c, like_torch)


# element and scale formats of the block-scaled tensor cores (mpe_mma_scaled(3)): the mpe_type
# and the code width (a code lies in the low bits of its byte)
_SCALED_ELEM = {"e4m3": (E4M3, 8), "e5m2": (E5M2, 8), "e2m3": (E2M3, 6), "e3m2": (E3M2, 6), "e2m1": (E2M1, 4)}
_SCALED_SCALE = {"ue8m0": E8M0, "ue4m3": E4M3}
_SF_BIT = {(E8M0, 32): 1, (E8M0, 16): 2, (E4M3, 16): 4}   # MPE_TC_SF_* (<mpemu/tc.h>)
_SF_NAME = {1: "ue8m0/32", 2: "ue8m0/16", 4: "ue4m3/16"}
_TYPE_NAME = {t: n for n, (t, _) in _SCALED_ELEM.items()}
_SCALED_MODELS = [n for n in _MODEL_NAMES if _L.mpe_tc_model_get(n.encode(), E2M1)]   # only they take E2M1


def _scaled_formats(kind: Optional[str], fmt: Optional[str], fmt_b: Optional[str], scale_fmt: Optional[str],
                    block: Optional[int], what: str) -> Tuple[str, str, int, int]:
    """(A's element format, B's, scale type, block) from either ``kind`` or the explicit names"""
    if kind is not None:
        if fmt is not None or scale_fmt is not None or block is not None:
            raise ValueError(f"{what}: give kind or fmt/scale_fmt/block, not both")
        k = _mx_kind(kind)
        fa = _TYPE_NAME.get(_L.mpe_mx_element_type(k))
        if fa is None:
            raise ValueError(f"{what}: {kind!r} has no block-scaled tensor-core instruction")
        st, blk = _L.mpe_mx_scale_type(k), _L.mpe_mx_block(k)
    else:
        fa = "e4m3" if fmt is None else fmt
        sf = "ue8m0" if scale_fmt is None else scale_fmt
        if sf not in _SCALED_SCALE:
            raise ValueError(f"{what}: unknown scale format {sf!r} (valid: {', '.join(_SCALED_SCALE)})")
        st, blk = _SCALED_SCALE[sf], 32 if block is None else block
        if isinstance(blk, bool) or int(blk) != blk or int(blk) not in (16, 32):
            raise ValueError(f"{what}: block must be 16 or 32, not {blk!r}")
        blk = int(blk)
    fb = fa if fmt_b is None else fmt_b
    for f in (fa, fb):
        if f not in _SCALED_ELEM:
            raise ValueError(f"{what}: unknown element format {f!r} (valid: {', '.join(_SCALED_ELEM)})")
    return fa, fb, st, blk


def _scaled_model(model: str, fa: str, fb: str, st: int, blk: int, what: str) -> Tuple[str, int]:
    """the block-scaled model (a bare GPU name picks the kind as gemm_mx does) and its handle,
    with ValueError when it is not block-scaled or does not take these formats"""
    if not isinstance(model, str):
        raise TypeError(f"{what}: model must be a str, not {type(model).__name__}")
    name = model
    if ":" not in model:
        kind = "mxf8f6f4" if fa != "e2m1" or fb != "e2m1" else "mxf4" if (st, blk) == (E8M0, 32) else "mxf4nvf4"
        name = f"{model}:{kind}"
    scaled = _SCALED_MODELS
    if not any(_L.mpe_tc_model_get(_name(name, "model"), t) for t in _ALL_TYPES):
        if not any(_L.mpe_tc_model_get(model.encode(), t) for t in _ALL_TYPES):
            raise ValueError(f"{what}: unknown model {model!r} (valid: {', '.join(scaled)})")
        raise ValueError(f"{what}: {model!r} has no block-scaled tensor cores (valid: {', '.join(scaled)})")
    if name not in scaled:
        raise ValueError(f"{what}: {name!r} is not a block-scaled model (valid: {', '.join(scaled)})")
    valid = [f for f, (t, _) in _SCALED_ELEM.items() if _L.mpe_tc_model_get(name.encode(), t)]
    for f in (fa, fb):
        if f not in valid:
            raise ValueError(f"{what}: {name!r} takes no {f} operands (valid: {', '.join(valid)})")
    m_ = _L.mpe_tc_model_get(name.encode(), _SCALED_ELEM[fa][0])
    p = _lib.TcParamsScaled()
    _check(_L.mpe_tc_model_params_sized(m_, ctypes.byref(p), ctypes.sizeof(p)), f"{what}: {name}")
    if p.scale_group == 0:   # cannot happen for the names listed: the library's word is final
        raise ValueError(f"{what}: {name!r} is not a block-scaled model (valid: {', '.join(scaled)})")
    if not p.scale_fmts & _SF_BIT.get((st, blk), 0):
        valid = [v for b, v in _SF_NAME.items() if p.scale_fmts & b]
        got = f"{'ue8m0' if st == E8M0 else 'ue4m3'}/{blk}"
        raise ValueError(f"{what}: {name!r} takes no {got} scales (valid: {', '.join(valid)})")
    return name, m_


def _codes(X: Any, fmt: str, what: str) -> np.ndarray:
    """element codes as a C-contiguous 2-D uint8 array, each within its format's width"""
    a = np.asarray(_np(X))
    if a.dtype != np.uint8:
        raise TypeError(f"{what} must hold uint8 {fmt} codes (mx_quantize's elements), not {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"{what} must be 2-D, not of shape {a.shape}")
    bits = _SCALED_ELEM[fmt][1]
    if bits < 8 and a.size and int(a.max()) >> bits:
        raise ValueError(f"{what}: {fmt} codes lie in 0..{(1 << bits) - 1:#x}; found {int(a.max()):#x}")
    return np.ascontiguousarray(a)


def _scale_codes(S: Any, shape: Tuple[int, int], what: str) -> np.ndarray:
    s = np.asarray(_np(S))
    if s.dtype != np.uint8:
        raise TypeError(f"{what} must hold uint8 scale codes (mx_quantize's scales), not {s.dtype}")
    if s.shape != shape:
        raise ValueError(f"{what} has shape {s.shape}, expected {shape} (one scale per block of k)")
    return np.ascontiguousarray(s)


def _scaled_operands(A: Any, B: Any, scale_a: Any, scale_b: Any, model: str, kind: Optional[str],
                     fmt: Optional[str], fmt_b: Optional[str], scale_fmt: Optional[str], block: Optional[int],
                     what: str) -> Tuple[Any, ...]:
    fa, fb, st, blk = _scaled_formats(kind, fmt, fmt_b, scale_fmt, block, what)
    name, m_ = _scaled_model(model, fa, fb, st, blk, what)
    a, b = _codes(A, fa, f"{what}: A"), _codes(B, fb, f"{what}: B")
    m, n, k = _mnk(a, b, what)
    kb = -(-k // blk)
    sa = _scale_codes(scale_a, (m, kb), f"{what}: scale_a")
    sb = _scale_codes(scale_b, (kb, n), f"{what}: scale_b")
    return name, m_, a, _SCALED_ELEM[fa][0], b, _SCALED_ELEM[fb][0], sa, sb, st, blk, m, n, k, kb


def mma_scaled(A: Any, B: Any, scale_a: Any, scale_b: Any, C: Any = None, *, model: str = "b200",
               kind: Optional[str] = None, fmt: Optional[str] = None, fmt_b: Optional[str] = None,
               scale_fmt: Optional[str] = None, block: Optional[int] = None) -> np.ndarray:
    """``D = (A*scale_a) @ (B*scale_b) + C`` with the instruction semantics of a block-scaled
    tensor core (``mpe_mma_scaled``: C enters the first instruction as its accumulator, the
    instructions chained in ascending k).

    A (m x k) and B (k x n) are uint8 element codes, one a byte in the low bits (what
    ``mx_quantize`` returns as elements); ``scale_a`` (m x ceil(k/block)) holds the scale of
    each block of ``block`` consecutive elements of A's rows, ``scale_b`` (ceil(k/block) x n)
    that of B's columns. The formats are either ``kind`` (an ``mx_kinds()`` name such as
    ``"mxfp8_e4m3"`` or ``"nvfp4"``) or ``fmt`` (A's elements: ``e4m3`` (default), ``e5m2``,
    ``e2m3``, ``e3m2``, ``e2m1``), ``scale_fmt`` (``ue8m0`` (default) or ``ue4m3``) and
    ``block`` (32 (default) or 16); ``fmt_b``: B's element format when it differs from A's.
    ``model``: ``"b200:mxf8f6f4"``, ``"b200:mxf4"``, ``"b200:mxf4nvf4"``, or ``"b200"``, which
    picks mxf8f6f4 unless both operands are e2m1, then mxf4 for ue8m0/32 scales and
    mxf4nvf4 otherwise. C (m x n, binary32) may be None (+0). Returns float32 (a torch tensor
    when A or B is one). Codes wider than their format, scales of the wrong shape and formats
    the model does not take raise ValueError; a dtype other than uint8 raises TypeError.
    """
    like_torch = _is_torch(A) or _is_torch(B)
    name, m_, a, at, b, bt, sa, sb, st, blk, m, n, k, kb = _scaled_operands(
        A, B, scale_a, scale_b, model, kind, fmt, fmt_b, scale_fmt, block, "mma_scaled")
    c = None if C is None else _c(C, m, n, np.float32, "mma_scaled")
    d = np.empty((m, n), np.float32)
    _check(_L.mpe_mma_scaled(m_, m, n, k, _ptr(a), at, max(k, 1), _ptr(b), bt, max(n, 1), _ptr(sa), max(kb, 1),
                             _ptr(sb), max(n, 1), st, blk, None if c is None else _ptr(c), max(n, 1), _ptr(d), FP32,
                             max(n, 1)), f"mma_scaled on {name}")
    return _out(d, like_torch)


def gemm_scaled(A: Any, B: Any, scale_a: Any, scale_b: Any, C: Any = None, *, model: str = "b200",
                kind: Optional[str] = None, fmt: Optional[str] = None, fmt_b: Optional[str] = None,
                scale_fmt: Optional[str] = None, block: Optional[int] = None, alpha: float = 1.0,
                beta: float = 0.0) -> np.ndarray:
    """``alpha * (A*scale_a) @ (B*scale_b) + beta * C`` with BLAS semantics on a block-scaled
    tensor core (``mpe_gemm_scaled``, the block-scaled cublasLtMatmul: accumulator from 0,
    then the binary32 epilogue). The operands, scales, formats and ``model`` are those of
    ``mma_scaled``. For float data quantised with ``mx_quantize``::

        ea, sa = mpemu.mx_quantize(X, "nvfp4")      # X's rows
        eb, sb = mpemu.mx_quantize(W.T, "nvfp4")    # W's columns
        D = mpemu.gemm_scaled(ea, eb.T, sa, sb.T, kind="nvfp4")   # = gemm_mx(X, W, kind="nvfp4")

    C (m x n) is read only when beta != 0 and is not modified: a new float32 array is
    returned (a torch tensor when A or B is one). A NaN alpha or beta raises MpemuError.
    """
    like_torch = _is_torch(A) or _is_torch(B)
    name, m_, a, at, b, bt, sa, sb, st, blk, m, n, k, kb = _scaled_operands(
        A, B, scale_a, scale_b, model, kind, fmt, fmt_b, scale_fmt, block, "gemm_scaled")
    c = _c(C, m, n, np.float32, "gemm_scaled")
    _check(_L.mpe_gemm_scaled(m_, 0, 0, 0, m, n, k, float(alpha), _ptr(a), at, max(k, 1), _ptr(b), bt, max(n, 1),
                              _ptr(sa), max(kb, 1), _ptr(sb), max(n, 1), st, blk, float(beta), _ptr(c), FP32,
                              max(n, 1)), f"gemm_scaled on {name}")
    return _out(c, like_torch)


# ---------------------------------------------------------------- integer and fixed-point encoders

_AXES = {"tensor": 0, "rows": 1, "cols": 2}


def _qshape(a: np.ndarray, axis: str, what: str) -> Tuple[int, int, int]:
    if axis not in _AXES:
        raise ValueError(f"{what}: unknown axis {axis!r} (valid: tensor, rows, cols)")
    if axis != "tensor" and a.ndim != 2:
        raise ValueError(f"{what}: axis {axis!r} needs a 2-D array, not shape {a.shape}")
    rows, cols = a.shape if a.ndim == 2 else (1, a.size)
    return rows, cols, (1 if axis == "tensor" else rows if axis == "rows" else cols)


def _itype(dtype: str) -> int:
    if dtype not in _INT_OF:
        raise ValueError(f"unknown integer type {dtype!r} (valid: {', '.join(_INT_OF)})")
    return _INT_OF[dtype]


def quantize_int(x: Any, dtype: str = "int8", axis: str = "tensor", *, symmetric: bool = True, mode: str = "rne",
                 seed: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integer quantisation for the integer tensor cores (``mpe_quant_params`` then
    ``mpe_quant_encode``, mpe_quant(3)): returns ``(q, scale, zero)``, q int8 (int8, int4) or
    uint8 (uint8, uint4) of x's shape, scale float32 and zero int32 with one entry per group
    (``axis``: "tensor", "rows", "cols" of a 2-D x). Torch tensors in, torch tensors out."""
    like_torch = _is_torch(x)
    a = np.ascontiguousarray(_np(x), dtype=np.float32)
    t = _itype(dtype)
    rows, cols, groups = _qshape(a, axis, "quantize_int")
    ax = _AXES[axis]
    scale = np.empty(max(groups, 1), np.float32)
    zero = np.empty(max(groups, 1), np.int32)
    _check(_L.mpe_quant_params(_ptr(scale), _ptr(zero), _ptr(a), rows, cols, ax, t, int(bool(symmetric))),
           "quantize_int (scales)")
    q = np.empty(a.shape, np.uint8 if t in (UINT8, UINT4) else np.int8)
    o = _lib.RoundOpts(_mode(mode), 0, 0, secrets.randbits(64) if seed is None else int(seed) & (2**64 - 1), 0)
    _check(_L.mpe_quant_encode(_ptr(q), _ptr(a), rows, cols, ax, t, _ptr(scale), _ptr(zero), ctypes.byref(o)),
           "quantize_int")
    return _out((q, scale[:groups], zero[:groups]), like_torch)


def dequantize_int(q: Any, scale: Any, zero: Any, dtype: str = "int8", axis: str = "tensor") -> np.ndarray:
    """``(q - zero) * scale`` as float32 (``mpe_quant_decode``), for what ``quantize_int`` returns."""
    like_torch = _is_torch(q)
    t = _itype(dtype)
    c = np.ascontiguousarray(_np(q))
    want = np.uint8 if t in (UINT8, UINT4) else np.int8
    if c.dtype != want:
        raise TypeError(f"dequantize_int: {dtype} codes are {np.dtype(want)}, not {c.dtype}")
    rows, cols, groups = _qshape(c, axis, "dequantize_int")
    sc = np.ascontiguousarray(_np(scale), dtype=np.float32).reshape(-1)
    zp = np.ascontiguousarray(_np(zero), dtype=np.int32).reshape(-1)
    if sc.size != groups or zp.size != groups:
        raise ValueError(f"dequantize_int: {groups} scales and zero points expected for axis {axis!r}")
    y = np.empty(c.shape, np.float32)
    _check(_L.mpe_quant_decode(_ptr(y), _ptr(c), rows, cols, _AXES[axis], t, _ptr(sc), _ptr(zp)), "dequantize_int")
    return _out(y, like_torch)


def fx16_encode(x: Any, block: int = 256, mode: str = "rne", *,
                seed: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """QUDA's block-normalised 16-bit fixed point (``mpe_fx16_encode``) over x flattened: returns
    ``(q, scale)``, int16 codes of x's shape and ceil(size / block) float32 scales. ``seed``: the
    stochastic modes' generator (``mpe_seed``; None: a fresh seed)."""
    like_torch = _is_torch(x)
    a = np.ascontiguousarray(_np(x), dtype=np.float32)
    if int(block) < 1:
        raise ValueError("fx16_encode: block must be at least 1")
    q = np.empty(a.shape, np.int16)
    scale = np.empty(max(-(-a.size // int(block)), 1), np.float32)
    r = _mode(mode)
    _L.mpe_seed(secrets.randbits(64) if seed is None else int(seed) & (2**64 - 1))
    _check(_L.mpe_fx16_encode(_ptr(q), _ptr(scale), _ptr(a), a.size, int(block), r), "fx16_encode")
    return _out((q, scale[:-(-a.size // int(block))]), like_torch)


def fx16_decode(q: Any, scale: Any, block: int = 256) -> np.ndarray:
    """The float32 values of ``fx16_encode``'s ``(q, scale)`` (``mpe_fx16_decode``)."""
    like_torch = _is_torch(q)
    c = np.ascontiguousarray(_np(q))
    if c.dtype != np.int16:
        raise TypeError(f"fx16_decode: codes are int16, not {c.dtype}")
    if int(block) < 1:
        raise ValueError("fx16_decode: block must be at least 1")
    sc = np.ascontiguousarray(_np(scale), dtype=np.float32).reshape(-1)
    if sc.size != -(-c.size // int(block)):
        raise ValueError(f"fx16_decode: {-(-c.size // int(block))} scales expected, got {sc.size}")
    y = np.empty(c.shape, np.float32)
    _check(_L.mpe_fx16_decode(_ptr(y), _ptr(c), _ptr(sc), c.size, int(block)), "fx16_decode")
    return _out(y, like_torch)


def q16_encode(x: Any, frac_bits: int, mode: str = "rne", *, seed: Optional[int] = None) -> np.ndarray:
    """Plain Q format: x * 2^frac_bits rounded once and saturated to int16 (``mpe_fp32_to_q16``,
    one library call per value: for modest sizes). NaN gives 0."""
    like_torch = _is_torch(x)
    a = np.ascontiguousarray(_np(x), dtype=np.float32)
    r = _mode(mode)
    _L.mpe_seed(secrets.randbits(64) if seed is None else int(seed) & (2**64 - 1))
    fb = int(frac_bits)
    q = np.fromiter((_L.mpe_fp32_to_q16(float(v), fb, r) for v in a.reshape(-1)), np.int16, a.size)
    return _out(q.reshape(a.shape), like_torch)


def q16_decode(q: Any, frac_bits: int) -> np.ndarray:
    """The float32 values q * 2^-frac_bits of Q-format codes (``mpe_q16_to_fp32``)."""
    like_torch = _is_torch(q)
    c = np.ascontiguousarray(_np(q))
    if c.dtype != np.int16:
        raise TypeError(f"q16_decode: codes are int16, not {c.dtype}")
    fb = int(frac_bits)
    y = np.fromiter((_L.mpe_q16_to_fp32(int(v), fb) for v in c.reshape(-1)), np.float32, c.size)
    return _out(y.reshape(c.shape), like_torch)


# ---------------------------------------------------------------- range analysis

class _Range:
    """an mpe_range accumulator for a list of float formats"""

    def __init__(self, names: Sequence[str], margin: int):
        if isinstance(names, str):
            names = [names]
        self.names = list(names)
        if not self.names:
            raise ValueError("no formats")
        if not 0 <= margin <= 1000:   # as mpanalyze --margin; larger ones overflow the library's int arithmetic
            raise ValueError("margin must be between 0 and 1000 (bits)")
        self.fmts = [_format(n) for n in self.names]
        arr = (ctypes.c_void_p * len(self.fmts))(*self.fmts)
        self.margin = int(margin)
        r = ctypes.c_void_p()   # the constructor convention: an int code, the object through a pointer
        _check(_L.mpe_range_create(ctypes.byref(r), arr, len(self.fmts), ctypes.byref(_lib.RangeOpts(self.margin))),
               "mpe_range_create (1 to 64 formats)")
        self.r = r.value

    def __del__(self):
        if getattr(self, "r", None):
            _L.mpe_range_free(self.r)
            self.r = None

    def add(self, a: np.ndarray) -> None:
        fn = _L.mpe_range_add_f64 if a.dtype == np.float64 else _L.mpe_range_add_f32
        _check(fn(self.r, _ptr(a), a.size), "range")

    def report(self) -> Dict[str, Any]:
        """the library's JSON object for this accumulator (mpe_report_range_json)"""
        n = len(self.fmts)
        targets = (_lib.RangeTarget * n)(*[_lib.RangeTarget(0, f, 0, 0) for f in self.fmts])
        names = (ctypes.c_char_p * n)(*[_name(nm, "format") for nm in self.names])
        text = ctypes.c_void_p()
        _check(_L.mpe_report_range_json(self.r, targets, names, n, self.margin, ctypes.byref(text)), "range report")
        try:
            out: Dict[str, Any] = json.loads(ctypes.string_at(text.value).decode())
        finally:
            _libc_free(text.value)
        del out["name"]
        return out


_DEFAULT_FORMATS = ("fp16", "bf16", "e4m3", "e5m2")


def _io_opts(dtype: Optional[str]) -> "_lib.IoOpts":
    """the readers' options: raw files hold dtype"""
    o = _lib.IoOpts()
    if dtype is not None:
        t = ctypes.c_int()
        if _L.mpe_io_dtype_lookup(_name(dtype, "dtype"), ctypes.byref(t)):
            raise ValueError(f"unknown dtype {dtype!r}")
        o.has_dtype, o.dtype = 1, t.value
    return o


def _io_open(path: str, dtype: Optional[str]) -> ctypes.c_void_p:
    """mpe_io_open on path (raw files: dtype names the storage type); the caller closes it"""
    o = _io_opts(dtype)
    f = ctypes.c_void_p()
    msg = ctypes.create_string_buffer(512)
    bpath = os.fsencode(path)
    if b"\0" in bpath:
        raise ValueError(f"path {path!r} holds a NUL character")
    rc = _L.mpe_io_open(ctypes.byref(f), bpath, ctypes.byref(o), msg, len(msg))
    if rc:
        raise MpemuError(rc, f"{path}: {msg.value.decode(errors='replace')}")
    return f


def _io_check(f: ctypes.c_void_p, path: str, rc: int) -> None:
    """a reader call's error as MpemuError with the reader's message"""
    if rc:
        raise MpemuError(rc, f"{path}: {_L.mpe_io_message(f).decode(errors='replace')}")


def range_report(x: Any, formats: Sequence[str] = _DEFAULT_FORMATS, margin: int = 0) -> Dict[str, Any]:
    """What rounding ``x`` (any array-like) to each of ``formats`` with RNE would do: the dict
    ``mpanalyze range --json`` gives for one tensor (count, zeros, nan, inf, max_abs, histogram,
    and per format underflow, subnormal, overflow, rel_error, recommended_scale, ...), without
    the file keys (file, name, dtype, shape). A CPU torch tensor is read in place when it is
    contiguous float32 or float64."""
    r = _Range(formats, margin)
    r.add(_float_array(_np(x)).reshape(-1))
    return r.report()


def analyze(path: str, formats: Sequence[str] = _DEFAULT_FORMATS, margin: int = 0, *,
            tensors: Optional[Iterable[str]] = None, dtype: Optional[str] = None,
            chunk_values: int = 1 << 20) -> Dict[str, Any]:
    """``mpanalyze range --json PATH`` as a dict: every tensor of the file (.npy, .npz,
    .safetensors, .pt/.pth/.bin from torch.save, .csv/.txt; raw files need ``dtype``), or those
    named in ``tensors`` (names or globs, as ``mpanalyze --tensor``), read ``chunk_values`` binary64
    values' worth at a time (the readers' chunk, 4 KiB to 1 TiB); the library's report engine
    (mpe_report_run), so the dict is mpanalyze's JSON to the bit; keys "mpanalyze", "command",
    "rounding", "margin", "formats", "tensors" (each with file, name, dtype, shape and the
    range_report keys) and "total"."""
    if int(chunk_values) < 1:
        raise ValueError("chunk_values must be at least 1")
    fl = [formats] if isinstance(formats, str) else list(formats)
    if not fl:
        raise ValueError("no formats")
    if not 0 <= margin <= 1000:   # as mpanalyze --margin
        raise ValueError("margin must be between 0 and 1000 (bits)")
    want = [] if tensors is None else [tensors] if isinstance(tensors, str) else list(tensors)
    o = _io_opts(dtype)
    o.chunk_bytes = min(max(int(chunk_values) * 8, 4096), 1 << 40)
    bpath = os.fsencode(path)
    if b"\0" in bpath:
        raise ValueError(f"path {path!r} holds a NUL character")
    paths = (ctypes.c_char_p * 1)(bpath)
    names = (ctypes.c_char_p * max(len(want), 1))(*[_name(w, "tensor") for w in want])
    ro = _lib.ReportOpts(formats=_name(",".join(fl), "formats"), margin=int(margin), tensors=names,
                         ntensors=len(want), io=ctypes.pointer(o), json=1)
    rep, err = ctypes.c_void_p(), _lib.ReportError()
    rc = _L.mpe_report_run(ctypes.byref(rep), paths, 1, ctypes.byref(ro), ctypes.byref(err))
    text = ctypes.c_void_p()
    if not rc:
        rc = _L.mpe_report_string(rep, ctypes.byref(text), ctypes.byref(err))
        _L.mpe_report_free(rep)
    if rc:
        where, msg = err.where.decode(errors="replace"), err.msg.decode(errors="replace")
        raise MpemuError(rc, f"{where}: {msg}" if where else msg or _L.mpe_strerror(rc).decode())
    try:
        return json.loads(ctypes.string_at(text.value).decode())
    finally:
        _libc_free(text.value)


def read(path: str, tensor: Optional[str] = None, start: int = 0, count: Optional[int] = None, *,
         dtype: Optional[str] = None) -> np.ndarray:
    """Values ``start`` to ``start + count`` (``count`` None: to the end) of one tensor of a file
    that ``analyze`` reads, in storage order, as a 1-D float32 array (float64 for float64 and
    text data), decoded exactly as ``mpe_io_read`` does. ``tensor`` names it (None: the
    file's first tensor); ``dtype`` as in ``analyze``. The read starts with ``mpe_io_seek``:
    .npy, safetensors and raw files seek to ``start``, the others read forward to it. A
    ``start`` past the tensor's count raises :class:`MpemuError` with code 4 (MPE_ERANGE), an
    unknown tensor one with code 8 (MPE_ENOTFOUND); a negative ``start`` or ``count``
    raises ValueError."""
    start = int(start)
    if start < 0 or (count is not None and int(count) < 0):
        raise ValueError("start and count must not be negative")
    f = _io_open(path, dtype)
    try:
        info = _lib.IoTensor()
        for i in range(_L.mpe_io_count(f)):
            _check(_L.mpe_io_info(f, i, ctypes.byref(info)))
            if tensor is None or info.name.decode() == tensor:
                break
        else:
            raise MpemuError(8, f"{path}: no tensor named {tensor!r}" if tensor is not None
                             else f"{path}: no tensors")
        _check(_L.mpe_io_select(f, i))
        _io_check(f, path, _L.mpe_io_seek(f, start))
        left = info.count - start
        want = left if count is None else min(int(count), left)
        out = np.empty(want, np.float64 if info.value_type == FP64 else np.float32)
        done, n = 0, ctypes.c_size_t()
        while done < want:
            _io_check(f, path, _L.mpe_io_read(f, _ptr(out[done:]), want - done, ctypes.byref(n)))
            if n.value == 0:
                raise MpemuError(6, f"{path}: the data end at value {start + done} of {info.count}")
            done += n.value
        return out
    finally:
        _L.mpe_io_close(f)


# ---------------------------------------------------------------- loss scaling

class Scaler:
    """A dynamic loss scaler with a preset's rules (``"pytorch"``, ``"apex"``, ``"megatron"``,
    ``"deepspeed"``, ``"deepspeed-zero"``, ``"keras"``): ``.scale`` is the scale for the coming
    step; ``.update(found_inf)`` reports whether that step's scaled gradients held an inf/NaN and
    returns True when the optimizer step is to be applied. Keyword arguments override the
    preset's parameters (mpe_scaler(3)): ``init_scale``, ``growth_factor``, ``backoff_factor``,
    ``min_scale``, ``max_scale``, ``growth_interval``, ``hysteresis``, ``growth_delay``."""

    def __init__(self, preset: str = "pytorch", **params: float):
        p = _lib.ScalerParams()
        rc = _L.mpe_scaler_params_preset(ctypes.byref(p), _name(preset, "scaler preset"))
        if rc:
            raise ValueError(f"unknown scaler preset {preset!r} (valid: pytorch, apex, megatron, deepspeed, "
                             "deepspeed-zero, keras)")
        fields = [f for f, _ in _lib.ScalerParams._fields_]
        for k, v in params.items():
            if k not in fields:
                raise TypeError(f"Scaler: unknown parameter {k!r} (valid: {', '.join(fields)})")
            setattr(p, k, v)
        self.preset = preset
        s = ctypes.c_void_p()
        _check(_L.mpe_scaler_create(ctypes.byref(s), ctypes.byref(p)), "mpe_scaler_create (parameters out of range?)")
        self._s = s.value

    def __reduce__(self):
        # copies would share (and free twice) one C scaler, pickles would carry a pointer
        raise TypeError("a Scaler cannot be copied or pickled: make a new one with the same preset")

    def __del__(self):
        if getattr(self, "_s", None):
            _L.mpe_scaler_free(self._s)
            self._s = None

    @property
    def scale(self) -> float:
        """the loss scale for the coming step"""
        return _L.mpe_scaler_scale(self._s)

    def update(self, found_inf: bool) -> bool:
        """one step: True when its optimizer step is applied, False when it is skipped"""
        return bool(_L.mpe_scaler_update(self._s, int(bool(found_inf))))

    @property
    def steps(self) -> int:
        return int(_L.mpe_scaler_steps(self._s))

    @property
    def skipped(self) -> int:
        return int(_L.mpe_scaler_skipped(self._s))


# ---------------------------------------------------------------- what there is

def formats() -> List[Dict[str, Any]]:
    """The built-in formats: name, precision (bits, with the implicit one), emin, emax, max
    (largest finite), min_normal, min_subnormal, has_inf, unit_roundoff."""
    out = []
    for name, t in _TYPE_OF.items():
        f = _L.mpe_format_of(t)
        out.append({"name": name, "precision": _L.mpe_format_precision(f), "emin": _L.mpe_format_emin(f),
                    "emax": _L.mpe_format_emax(f), "max": _L.mpe_format_max(f),
                    "min_normal": _L.mpe_format_min_normal(f), "min_subnormal": _L.mpe_format_min_subnormal(f),
                    "has_inf": bool(_L.mpe_format_has_inf(f)), "unit_roundoff": _L.mpe_format_unit_roundoff(f)})
    return out


def models() -> Dict[str, List[str]]:
    """The tensor-core models by name (every name mpe_tc_model_get(3) takes, aliases included: GPUs,
    references, the CPU dot-product instructions), each with the input formats among fp16, bf16, tf32,
    e4m3, e5m2, e4m3fnuz and e5m2fnuz it has instructions for; the names with none of these are left
    out."""
    out = {}
    for n in _MODEL_NAMES:
        ins = [i for i in _INPUTS if _L.mpe_tc_model_get(n.encode(), _TYPE_OF[i])]
        if ins:
            out[n] = ins
    return out
