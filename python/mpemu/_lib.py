"""Finding and describing libmpemu for ctypes.

The library is looked for, in order:
  1. the file named by the environment variable MPEMU_LIB;
  2. the copy inside the package, mpemu/_libs/libmpemu.so.0 (what ``pip install ./python`` and
     the wheel ship: setup.py builds it with the repository's autotools build);
  3. the libtool build tree, <repository>/.libs/libmpemu.so, for the package used from the
     source tree (PYTHONPATH=python);
  4. the system's dynamic linker paths (ldconfig): libmpemu.so.0, then ctypes.util.find_library.
The readers, range reports and scalers live in libmpemu-analysis, which links libmpemu: it is
loaded from the folder libmpemu came from (or by its soname), and the handle returned finds
the functions of both.
"""
import ctypes
import ctypes.util
import os

_here = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("MPEMU_LIB")
    if env:
        yield env
        return
    for p in (os.path.join(_here, "_libs", "libmpemu.so.0"),
              os.path.join(os.path.dirname(os.path.dirname(_here)), ".libs", "libmpemu.so")):
        if os.path.exists(p):
            yield p
    yield "libmpemu.so.0"
    found = ctypes.util.find_library("mpemu")
    if found:
        yield found


def _open(core: str) -> ctypes.CDLL:
    """libmpemu, then libmpemu-analysis beside it (its dependency on libmpemu.so.0 is then
    the library already loaded); lookups in the returned handle also search libmpemu."""
    ctypes.CDLL(core, mode=ctypes.RTLD_GLOBAL)
    d = os.path.dirname(core)
    names = [os.path.join(d, "libmpemu-analysis.so"), os.path.join(d, "libmpemu-analysis.so.0")] if d else []
    errors = []
    for a in names + ["libmpemu-analysis.so.0"]:
        if os.path.dirname(a) and not os.path.exists(a):
            continue
        try:
            return ctypes.CDLL(a)
        except OSError as e:
            errors.append(f"{a} ({e})")
    raise OSError("libmpemu-analysis not found beside it: " + "; ".join(errors))


def load() -> ctypes.CDLL:
    tried = []
    for c in _candidates():
        try:
            return _open(c)
        except OSError as e:
            tried.append(f"{c} ({e})")
    raise ImportError("mpemu: libmpemu not found; install the package with pip (it builds the library), "
                      "build the repository (make), or set MPEMU_LIB to the path of libmpemu.so "
                      "(libmpemu-analysis.so beside it). Tried: " + "; ".join(tried))


c_float_p = ctypes.POINTER(ctypes.c_float)
c_double_p = ctypes.POINTER(ctypes.c_double)
c_u64_p = ctypes.POINTER(ctypes.c_uint64)


class RoundOpts(ctypes.Structure):
    _fields_ = [("round", ctypes.c_int), ("flush_subnormals", ctypes.c_int), ("saturate", ctypes.c_int),
                ("seed", ctypes.c_uint64), ("offset", ctypes.c_uint64)]


class RangeOpts(ctypes.Structure):
    _fields_ = [("margin", ctypes.c_int)]


class RangeSummary(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint64), ("zeros", ctypes.c_uint64), ("nan", ctypes.c_uint64),
                ("inf", ctypes.c_uint64), ("max_abs", ctypes.c_double), ("min_abs_nonzero", ctypes.c_double)]


class RangeStats(ctypes.Structure):
    _fields_ = [("underflow", ctypes.c_uint64), ("subnormal", ctypes.c_uint64), ("overflow", ctypes.c_uint64),
                ("underflow_flush", ctypes.c_uint64), ("rel_error", ctypes.c_double),
                ("max_rel_error", ctypes.c_double), ("has_scale", ctypes.c_int), ("scale_log2", ctypes.c_int),
                ("underflow_at_scale", ctypes.c_uint64), ("underflow_at_scale_flush", ctypes.c_uint64),
                ("scale_capped", ctypes.c_int)]


class ScalerParams(ctypes.Structure):
    _fields_ = [("init_scale", ctypes.c_double), ("growth_factor", ctypes.c_double),
                ("backoff_factor", ctypes.c_double), ("min_scale", ctypes.c_double), ("max_scale", ctypes.c_double),
                ("growth_interval", ctypes.c_int), ("hysteresis", ctypes.c_int), ("growth_delay", ctypes.c_int)]


class TcParamsScaled(ctypes.Structure):
    """mpe_tc_params from kind through scale_zero_exp: the prefix the block-scaled calls read
    (mpe_tc_model_params_sized fills the size it is given)"""
    _fields_ = [(f, ctypes.c_int) for f in (
        "kind", "in_", "block", "align_bits", "result_bits", "round_fp32", "round_fp16", "input_round",
        "zero_c_counts", "late_c", "satfinite", "zero_c_exp", "zero_sign", "tf32_nan", "instr",
        "scale_group", "scale_fmts", "scale_zero_exp")]


MAXDIM = 32


class IoTensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("value_type", ctypes.c_int),
                ("ndim", ctypes.c_int), ("shape", ctypes.c_uint64 * MAXDIM), ("count", ctypes.c_uint64),
                ("fortran_order", ctypes.c_int), ("big_endian", ctypes.c_int)]


class IoOpts(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("has_dtype", ctypes.c_int), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_uint64 * MAXDIM), ("chunk_bytes", ctypes.c_size_t),
                ("max_member_bytes", ctypes.c_uint64), ("nrules", ctypes.c_size_t), ("rules", ctypes.c_void_p),
                ("max_memory", ctypes.c_uint64)]


class RangeTarget(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("format", ctypes.c_void_p), ("frac_bits", ctypes.c_int),
                ("block", ctypes.c_size_t)]


class ReportOpts(ctypes.Structure):
    _fields_ = [("formats", ctypes.c_char_p), ("fx_block", ctypes.c_long), ("margin", ctypes.c_int),
                ("tensors", ctypes.POINTER(ctypes.c_char_p)), ("ntensors", ctypes.c_size_t),
                ("io", ctypes.POINTER(IoOpts)), ("per_layer", ctypes.c_int), ("json", ctypes.c_int),
                ("part_values", ctypes.c_uint64), ("progress", ctypes.c_void_p), ("progress_ctx", ctypes.c_void_p),
                ("comm", ctypes.c_void_p), ("who", ctypes.c_char_p), ("max_values", ctypes.c_uint64)]


class ReportError(ctypes.Structure):
    _fields_ = [("where", ctypes.c_char * 4096), ("msg", ctypes.c_char * 512), ("fail", ctypes.c_int),
                ("local", ctypes.c_int), ("out_failed", ctypes.c_int)]


def declare(lib: ctypes.CDLL) -> None:
    """argument and result types of every function the package calls"""
    P, I, D, S, U64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_size_t, ctypes.c_uint64
    sig = {
        "mpe_strerror": (ctypes.c_char_p, [I]),
        "mpe_version_string": (ctypes.c_char_p, []),
        "mpe_round_lookup": (I, [ctypes.c_char_p]),
        "mpe_type_name": (ctypes.c_char_p, [I]),
        "mpe_format_lookup": (P, [ctypes.c_char_p]),
        "mpe_format_of": (P, [I]),
        "mpe_format_name": (ctypes.c_char_p, [P]),
        "mpe_format_precision": (I, [P]),
        "mpe_format_emin": (I, [P]),
        "mpe_format_emax": (I, [P]),
        "mpe_format_max": (D, [P]),
        "mpe_format_min_normal": (D, [P]),
        "mpe_format_min_subnormal": (D, [P]),
        "mpe_format_has_inf": (I, [P]),
        "mpe_format_unit_roundoff": (D, [P]),
        "mpe_round_f32": (I, [P, P, S, P, ctypes.POINTER(RoundOpts)]),
        "mpe_round_f64": (I, [P, P, S, P, ctypes.POINTER(RoundOpts)]),
        "mpe_fp32_to_fp16": (ctypes.c_uint16, [ctypes.c_float, I]),
        "mpe_fp32_to_bf16": (ctypes.c_uint16, [ctypes.c_float, I]),
        "mpe_fp32_to_e4m3": (ctypes.c_uint8, [ctypes.c_float, I, I]),
        "mpe_fp32_to_e5m2": (ctypes.c_uint8, [ctypes.c_float, I, I]),
        "mpe_fp16_to_fp32": (ctypes.c_float, [ctypes.c_uint16]),
        "mpe_bf16_to_fp32": (ctypes.c_float, [ctypes.c_uint16]),
        "mpe_e4m3_to_fp32": (ctypes.c_float, [ctypes.c_uint8]),
        "mpe_e5m2_to_fp32": (ctypes.c_float, [ctypes.c_uint8]),
        "mpe_fp32_to_e4m3fnuz": (ctypes.c_uint8, [ctypes.c_float, I, I]),
        "mpe_fp32_to_e5m2fnuz": (ctypes.c_uint8, [ctypes.c_float, I, I]),
        "mpe_e4m3fnuz_to_fp32": (ctypes.c_float, [ctypes.c_uint8]),
        "mpe_e5m2fnuz_to_fp32": (ctypes.c_float, [ctypes.c_uint8]),
        "mpe_tc_model_get": (P, [ctypes.c_char_p, I]),
        "mpe_tc_model_name_at": (ctypes.c_char_p, [I]),
        "mpe_seed": (None, [U64]),
        "mpe_tc_model_params_sized": (I, [P, ctypes.POINTER(TcParamsScaled), S]),
        "mpe_mma_scaled": (I, [P, I, I, I, P, I, I, P, I, I, P, I, P, I, I, I, P, I, P, I, I]),
        "mpe_gemm_scaled": (I, [P, I, I, I, I, I, I, ctypes.c_float, P, I, I, P, I, I, P, I, P, I, I, I,
                                ctypes.c_float, P, I, I]),
        "mpe_prune_2_4": (I, [I, I, I, P, I, I, P, I]),
        "mpe_sparse_kept": (I, [I]),
        "mpe_sparse_meta_words": (I, [I]),
        "mpe_sparse_compress": (I, [I, I, I, P, I, I, P, I, P, I]),
        "mpe_gemm_sp": (I, [P, I, I, I, I, I, I, ctypes.c_float, P, I, I, P, I, P, I, I, ctypes.c_float, P, I, I]),
        "mpe_mx_block": (I, [I]),
        "mpe_mx_element_type": (I, [I]),
        "mpe_mx_scale_type": (I, [I]),
        "mpe_mx_name": (ctypes.c_char_p, [I]),
        "mpe_mx_lookup": (I, [ctypes.c_char_p]),
        "mpe_mx_quantize_f32": (I, [P, P, P, S, I, ctypes.POINTER(RoundOpts)]),
        "mpe_mx_dequantize_f32": (I, [P, P, P, S, I]),
        "mpe_quant_params": (I, [P, P, P, S, S, I, I, I]),
        "mpe_quant_encode": (I, [P, P, S, S, I, I, P, P, ctypes.POINTER(RoundOpts)]),
        "mpe_quant_decode": (I, [P, P, S, S, I, I, P, P]),
        "mpe_fx16_encode": (I, [P, P, P, S, S, I]),
        "mpe_fx16_decode": (I, [P, P, P, S, S]),
        "mpe_fp32_to_q16": (ctypes.c_int16, [ctypes.c_float, I, I]),
        "mpe_q16_to_fp32": (ctypes.c_float, [ctypes.c_int16, I]),
        "mpe_gemm": (I, [P, I, I, I, I, I, I, ctypes.c_float, P, I, I, P, I, I, ctypes.c_float, P, I, I]),
        "mpe_range_create": (I, [ctypes.POINTER(P), ctypes.POINTER(P), S, ctypes.POINTER(RangeOpts)]),
        "mpe_range_free": (None, [P]),
        "mpe_range_merge": (I, [P, P]),
        "mpe_range_add_f32": (I, [P, P, S]),
        "mpe_range_add_f64": (I, [P, P, S]),
        "mpe_range_summary_get": (I, [P, ctypes.POINTER(RangeSummary)]),
        "mpe_range_stats_get": (I, [P, S, ctypes.POINTER(RangeStats)]),
        "mpe_range_histogram": (I, [P, I, ctypes.POINTER(I), c_u64_p, S, ctypes.POINTER(S), c_u64_p, c_u64_p]),
        "mpe_scaler_params_preset": (I, [ctypes.POINTER(ScalerParams), ctypes.c_char_p]),
        "mpe_scaler_create": (I, [ctypes.POINTER(P), ctypes.POINTER(ScalerParams)]),
        "mpe_scaler_free": (None, [P]),
        "mpe_scaler_scale": (D, [P]),
        "mpe_scaler_update": (I, [P, I]),
        "mpe_scaler_steps": (U64, [P]),
        "mpe_scaler_skipped": (U64, [P]),
        "mpe_io_open": (I, [ctypes.POINTER(P), ctypes.c_char_p, ctypes.POINTER(IoOpts), ctypes.c_char_p, S]),
        "mpe_io_close": (None, [P]),
        "mpe_io_count": (S, [P]),
        "mpe_io_skipped": (S, [P]),
        "mpe_io_skipped_info": (I, [P, S] + [ctypes.POINTER(ctypes.c_char_p)] * 3),
        "mpe_io_info": (I, [P, S, ctypes.POINTER(IoTensor)]),
        "mpe_io_select": (I, [P, S]),
        "mpe_io_read": (I, [P, P, S, ctypes.POINTER(S)]),
        "mpe_io_seek": (I, [P, U64]),
        "mpe_io_message": (ctypes.c_char_p, [P]),
        "mpe_io_dtype_lookup": (I, [ctypes.c_char_p, ctypes.POINTER(I)]),
        "mpe_io_kind_name": (ctypes.c_char_p, [I]),
        "mpe_report_run": (I, [ctypes.POINTER(P), ctypes.POINTER(ctypes.c_char_p), S, ctypes.POINTER(ReportOpts),
                               ctypes.POINTER(ReportError)]),
        "mpe_report_string": (I, [P, ctypes.POINTER(P), ctypes.POINTER(ReportError)]),
        "mpe_report_free": (None, [P]),
        "mpe_report_range_json": (I, [P, ctypes.POINTER(RangeTarget), ctypes.POINTER(ctypes.c_char_p), S, I,
                                      ctypes.POINTER(P)]),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
