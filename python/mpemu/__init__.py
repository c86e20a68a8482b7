"""mpemu: bit-exact low-precision formats, tensor-core models and range analysis for NumPy.

A thin ctypes layer over libmpemu (see mpemu/_lib.py for how the library is found). Arrays
are passed to the library without a copy when they are C-contiguous and of the dtype the
call needs (float32 or float64); anything with ``__array__`` (a CPU torch tensor, a list)
is accepted. ctypes releases the GIL for the duration of every library call, so long
calls (``round`` on 10^8 values, ``gemm``, ``analyze``) let other Python threads run.
Library errors are raised as :class:`MpemuError` carrying the library's message.
"""
import ctypes
import json
import os
import secrets
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib

__all__ = ["MpemuError", "round", "encode", "decode", "gemm", "range_report", "analyze", "read", "Scaler",
           "formats", "models", "version"]

_L = _lib.load()
_libc_free = ctypes.CDLL(None).free   # the library's malloc'ed report text
_libc_free.argtypes = [ctypes.c_void_p]
_libc_free.restype = None
_lib.declare(_L)

# mpe_type
FP64, FP32, TF32, FP16, BF16, E4M3, E5M2 = range(7)
_TYPE_OF = {"fp64": FP64, "fp32": FP32, "tf32": TF32, "fp16": FP16, "bf16": BF16, "e4m3": E4M3, "e5m2": E5M2}
_MODEL_NAMES = ("v100", "t4", "a100", "a2", "a30", "ada", "l40s", "h100", "h200", "b200", "rtx-pro-6000",
                "exact", "fma-chain", "avx512-bf16", "amx-bf16", "amx-fp16")


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


def _format(fmt: str) -> int:
    f = _L.mpe_format_lookup(_name(fmt, "format")) if isinstance(fmt, str) else None
    if not f:
        raise ValueError(f"unknown format {fmt!r} (valid: {', '.join(_TYPE_OF)})")
    return f


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
    """
    a = _float_array(x)
    f = _format(fmt)
    o = _lib.RoundOpts(_mode(mode), int(bool(flush)), int(bool(saturate)),
                       secrets.randbits(64) if seed is None else int(seed) & (2**64 - 1), 0)
    y = np.empty_like(a)
    fn = _L.mpe_round_f64 if a.dtype == np.float64 else _L.mpe_round_f32
    _check(fn(_ptr(y), _ptr(a), a.size, f, ctypes.byref(o)), f"round to {fmt}")
    return y


def _fp8_table(fmt: str) -> np.ndarray:
    dec = _L.mpe_e4m3_to_fp32 if fmt == "e4m3" else _L.mpe_e5m2_to_fp32
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
    enc = _L.mpe_fp32_to_e4m3 if fmt == "e4m3" else _L.mpe_fp32_to_e5m2
    return enc(nan, 0, int(saturate))


def encode(x: Any, fmt: str, mode: str = "rne", *, saturate: bool = False, seed: Optional[int] = None) -> np.ndarray:
    """The bit patterns of ``x`` rounded to ``fmt``: uint16 for ``fp16``/``bf16``, uint8 for
    ``e4m3``/``e5m2`` (x's shape). NaNs get the library's canonical NaN (sign kept)."""
    if fmt not in ("fp16", "bf16", "e4m3", "e5m2"):
        raise ValueError(f"encode: {fmt!r} has no packed encoding here (valid: fp16, bf16, e4m3, e5m2)")
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
    return codes.reshape(shape)


def decode(codes: Any, fmt: str) -> np.ndarray:
    """The values (float32) of bit patterns ``codes`` of ``fmt`` (uint16 for fp16/bf16, uint8 for FP8)."""
    c = np.asarray(codes)
    if fmt in ("fp16", "bf16", "e4m3", "e5m2"):
        if c.dtype.kind not in "iu":
            raise TypeError(f"decode: codes must be integers, not {c.dtype}")
        top = 0xffff if fmt in ("fp16", "bf16") else 0xff
        if c.size and (c.min() < 0 or c.max() > top):
            raise ValueError(f"decode: {fmt} codes lie in 0..{top:#x}")
    if fmt == "fp16":
        return c.astype(np.uint16).view(np.float16).astype(np.float32)
    if fmt == "bf16":
        return (c.astype(np.uint32) << 16).view(np.float32)
    if fmt in ("e4m3", "e5m2"):
        return _table(fmt)[c.astype(np.uint8)]
    raise ValueError(f"decode: {fmt!r} has no packed encoding here (valid: fp16, bf16, e4m3, e5m2)")


def gemm(A: Any, B: Any, C: Any = None, *, model: str = "h100", input: str = "fp16", output: str = "fp32",
         alpha: float = 1.0, beta: float = 0.0) -> np.ndarray:
    """``alpha * A @ B + beta * C`` as ``model``'s tensor cores compute it (``mpe_gemm``: BLAS
    semantics, accumulator from 0, blocks chained in ascending k).

    A (m x k) and B (k x n) are binary32 values converted to ``input`` (fp16, bf16, tf32, e4m3,
    e5m2) by the model's input rule; float16 arrays with ``input="fp16"`` are passed as they are.
    ``output``: ``"fp32"`` (float32 result) or ``"fp16"`` (float16 result). C (m x n) is read only
    when beta != 0 and is not modified: a new array is returned.
    """
    if input not in _TYPE_OF or _TYPE_OF[input] in (FP32, FP64):
        raise ValueError(f"unknown input {input!r} (valid: fp16, bf16, tf32, e4m3, e5m2)")
    if output not in ("fp32", "fp16"):
        raise ValueError(f"unknown output {output!r} (valid: fp32, fp16)")
    tin = _TYPE_OF[input]
    m_ = _L.mpe_tc_model_get(_name(model, "model"), tin)
    if not m_:
        valid = [n for n in _MODEL_NAMES if _L.mpe_tc_model_get(n.encode(), tin)]
        raise ValueError(f"model {model!r} has no {input} tensor cores (valid: {', '.join(valid)})")

    def operand(X: Any) -> Tuple[np.ndarray, int]:
        a = np.asarray(X)
        if a.dtype == np.float16 and tin == FP16:
            return np.ascontiguousarray(a).view(np.uint16), FP16
        return np.ascontiguousarray(a, dtype=np.float32), FP32

    a, at = operand(A)
    b, bt = operand(B)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm: shapes {a.shape} and {b.shape} do not multiply")
    m, k = a.shape
    n = b.shape[1]
    if max(m, n, k) > 2**31 - 1:
        raise ValueError("gemm: a dimension over 2^31 - 1")
    if output == "fp32":
        c = np.zeros((m, n), np.float32) if C is None else np.array(C, dtype=np.float32, order="C", copy=True)
        ct = FP32
    else:
        c = (np.zeros((m, n), np.uint16) if C is None else
             np.array(np.asarray(C, dtype=np.float16), order="C", copy=True).view(np.uint16))
        ct = FP16
    if c.shape != (m, n):
        raise ValueError(f"gemm: C has shape {c.shape}, expected {(m, n)}")
    _check(_L.mpe_gemm(m_, 0, 0, 0, m, n, k, float(alpha), _ptr(a), at, max(k, 1), _ptr(b), bt, max(n, 1),
                       float(beta), _ptr(c), ct, max(n, 1)), f"gemm on {model}")
    return c if ct == FP32 else c.view(np.float16)


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
    the file keys (file, name, dtype, shape)."""
    r = _Range(formats, margin)
    r.add(_float_array(x).reshape(-1))
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
    returns True when the optimizer step is to be applied."""

    def __init__(self, preset: str = "pytorch"):
        p = _lib.ScalerParams()
        rc = _L.mpe_scaler_params_preset(ctypes.byref(p), _name(preset, "scaler preset"))
        if rc:
            raise ValueError(f"unknown scaler preset {preset!r} (valid: pytorch, apex, megatron, deepspeed, "
                             "deepspeed-zero, keras)")
        self.preset = preset
        s = ctypes.c_void_p()
        _check(_L.mpe_scaler_create(ctypes.byref(s), ctypes.byref(p)), "mpe_scaler_create")
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
    """The tensor-core models (GPUs, references, the x86 dot-product instructions) by name, each with
    the input formats it has instructions for."""
    out = {}
    for n in _MODEL_NAMES:
        ins = [i for i in ("fp16", "bf16", "tf32", "e4m3", "e5m2") if _L.mpe_tc_model_get(n.encode(), _TYPE_OF[i])]
        if ins:
            out[n] = ins
    return out
