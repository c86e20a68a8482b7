/* mpemu — tensor-file readers: npy, npz, safetensors, raw, text, PyTorch (issues 6, 15).
   A file holds one or more tensors; each is read in chunks, so a file larger
   than memory is analysed in memory bounded by the chunk size. Every reader
   validates what it is told (header lengths, shapes, offsets, sizes) against
   the file before anything is returned. */
#ifndef MPEMU_IO_H
#define MPEMU_IO_H
#include "mpemu/core.h"
#include "mpemu/csr.h"
#ifdef __cplusplus
extern "C" {
#endif

#define MPE_IO_MAXDIM 32   /* the most dimensions a tensor may have */

typedef enum {
  MPE_IO_AUTO = 0,     /* by content (.npy and zip magic), then by extension */
  MPE_IO_NPY,
  MPE_IO_NPZ,
  MPE_IO_SAFETENSORS,
  MPE_IO_RAW,          /* little-endian values; needs a dtype */
  MPE_IO_TEXT,         /* numbers separated by white space, ',' or ';'; '#' starts a comment */
  MPE_IO_PT            /* torch.save zip archive (.pt, .pth, .bin): an allow-listed pickle, never executed */
} mpe_io_kind;

/* A per-member element type: members whose name matches `pattern` (fnmatch(3) glob,
   or a plain name) are read as `dtype`, whatever the file says they hold (raw and
   untyped |V2/|V1 members, integer members holding bit patterns, reinterpreting
   one float type as another of the same width). A rule applies to a member of the
   same element size; a plain name (no * ? [) naming a member of another size is
   an error (MPE_EINVAL). Single-tensor files (.npy, raw) are named by their file
   name without extension. Text files ignore rules. */
typedef struct {
  const char *pattern;
  mpe_type dtype;      /* MPE_FP64, MPE_FP32, MPE_FP16, MPE_BF16, MPE_E4M3 or MPE_E5M2 */
} mpe_io_dtype_rule;

typedef struct {
  mpe_io_kind kind;    /* MPE_IO_AUTO (0) to guess */
  int has_dtype;       /* 1: `dtype` says what raw files and .npy |V1/|V2 (or u1/u2) arrays hold */
  mpe_type dtype;      /* MPE_FP64, MPE_FP32, MPE_FP16, MPE_BF16, MPE_E4M3 or MPE_E5M2 */
  int ndim;            /* raw files: the shape (0: one dimension taken from the file size) */
  uint64_t shape[MPE_IO_MAXDIM];
  size_t chunk_bytes;  /* bytes read at a time (0: 4 MiB; at least 4096 is used) */
  uint64_t max_member_bytes; /* .npz: refuse members larger than this once inflated (0: 64 GiB) */
  size_t nrules;       /* per-member element types, the first matching rule wins; */
  const mpe_io_dtype_rule *rules;   /* they take precedence over has_dtype/dtype */
  uint64_t max_memory; /* the most bytes the reader may hold for one file: PyTorch files (the pickle,
                          tables, tensor list and a non-contiguous view's storage), safetensors
                          (the header and the tensor list); past it MPE_EUNSUP (0: only the
                          built-in limits) */
} mpe_io_opts;         /* a zeroed struct or NULL means the defaults */

typedef struct {
  const char *name;    /* the tensor's name (file name without extension for single-tensor files); valid UTF-8 */
  mpe_type dtype;      /* how the values are stored (text: MPE_FP64) */
  mpe_type value_type; /* what mpe_io_read delivers: MPE_FP64 (double) for FP64 data, else MPE_FP32 (float) */
  int ndim;
  uint64_t shape[MPE_IO_MAXDIM];
  uint64_t count;      /* number of values (product of the shape) */
  int fortran_order;   /* .npy: column-major storage (values are delivered in storage order) */
  int big_endian;      /* .npy: big-endian storage (converted while reading) */
} mpe_io_tensor;

typedef struct mpe_io mpe_io;

/* Open `path` and validate its header(s). On success *f is set; on failure *f is
   NULL, and msg (when not NULL) receives one line (no file name) saying why.
   Errors: MPE_EINVAL (NULL arguments, bad options), MPE_EIO (cannot open or read),
   MPE_EFORMAT (malformed, truncated or inconsistent file), MPE_EUNSUP (a valid file
   whose dtype or compression is not supported), MPE_ENOMEM. */
MPE_API int mpe_io_open(mpe_io **f, const char *path, const mpe_io_opts *o, char *msg, size_t msglen);
MPE_API void mpe_io_close(mpe_io *f);                 /* NULL is ignored */

MPE_API mpe_io_kind mpe_io_kind_of(const mpe_io *f);
MPE_API const char *mpe_io_kind_name(mpe_io_kind k);  /* "npy", "npz", ... */
/* Number of tensors. Members that hold no floating-point data (integer, bool,
   complex, string arrays; untyped |V2/|V1 arrays with no dtype for them) are not
   listed, in any kind of file: mpe_io_skipped counts them, mpe_io_skipped_info
   names them. */
MPE_API size_t mpe_io_count(const mpe_io *f);
MPE_API size_t mpe_io_skipped(const mpe_io *f);
/* Skipped member i (0 <= i < mpe_io_skipped): its name, its dtype as the file names it
   ("int64", "I64", "<i8", "|V2", ...) and why it was skipped ("integer tensor", ...),
   valid until mpe_io_close. */
MPE_API int mpe_io_skipped_info(const mpe_io *f, size_t i, const char **name, const char **dtype, const char **why);
/* The description of tensor i (the name stays valid until mpe_io_close). */
MPE_API int mpe_io_info(const mpe_io *f, size_t i, mpe_io_tensor *t);
/* Index of the tensor called `name`: MPE_ENOTFOUND if there is none. */
MPE_API int mpe_io_find(const mpe_io *f, const char *name, size_t *i);

/* Start (or restart) reading tensor i from its first value. */
MPE_API int mpe_io_select(mpe_io *f, size_t i);
/* Read the next values of the selected tensor: at most `max` of them, written to
   `values` as float (value_type MPE_FP32) or double (MPE_FP64). *n receives the
   number read; 0 means the tensor is finished. Errors: MPE_EFORMAT (the data end
   early or are corrupt, e.g. a CRC or inflate error in a .npz member), MPE_EIO;
   mpe_io_message then says why. */
MPE_API int mpe_io_read(mpe_io *f, void *values, size_t max, size_t *n);
/* Go to value `value` (0 to count) of the selected tensor: the next mpe_io_read
   starts there. Files whose data lie at offsets (npy, safetensors, raw) seek;
   the others (npz members, text, pt) read forward and throw the values away
   (backward: they start the tensor again). Errors: MPE_EINVAL (nothing
   selected), MPE_ERANGE (value > count), those of mpe_io_read. */
MPE_API int mpe_io_seek(mpe_io *f, uint64_t value);
/* The last error of f as one line, "" when none. */
MPE_API const char *mpe_io_message(const mpe_io *f);
/* Progress of reading: bytes of tensor data consumed so far over all tensors, and the total. */
MPE_API uint64_t mpe_io_bytes_done(const mpe_io *f);
MPE_API uint64_t mpe_io_bytes_total(const mpe_io *f);

/* Storage dtype names: the names and aliases of the rows of <mpemu/formats.def> that a file can
   hold (an npy or safetensors name): "f64|fp64|float64|F64", "f32|fp32|float32|F32",
   "f16|fp16|float16|half|F16", "bf16|bfloat16|BF16", "e4m3|f8_e4m3|float8_e4m3fn|F8_E4M3",
   "e5m2|f8_e5m2|float8_e5m2|F8_E5M2", the OCP MX "e2m3", "e3m2", "e2m1|fp4" (one code per byte,
   .npy |V1 with a dtype) and "e8m0|F8_E8M0|float8_e8m0fnu" (case-insensitive). Returns
   MPE_ENOTFOUND for others. Size in bytes of a dtype: 0 if not a dtype. */
MPE_API int mpe_io_dtype_lookup(const char *name, mpe_type *t);
MPE_API size_t mpe_io_dtype_size(mpe_type t);

/* ---- writers (small, for examples and tests) */
typedef struct {
  const char *name;    /* safetensors / npz key */
  mpe_type dtype;      /* stored type: FP64, FP32, FP16, BF16, E4M3, E5M2, or another formats.def row
                          with a file name (mpe_io_dtype_size > 0) */
  int ndim;
  const uint64_t *shape;
  const void *data;    /* count values already in the stored encoding, little-endian */
} mpe_io_out;

/* One .npy file (version 1.0; FP16/FP32/FP64 as <f2/<f4/<f8, BF16/E4M3/E5M2 as |V2/|V1). */
MPE_API int mpe_io_write_npy(const char *path, const mpe_io_out *t);
/* One safetensors file with n tensors stored one after the other in the given order. */
MPE_API int mpe_io_write_safetensors(const char *path, const mpe_io_out *t, size_t n);
/* One .npz archive with n members NAME.npy; deflate: 1 compresses them. */
MPE_API int mpe_io_write_npz(const char *path, const mpe_io_out *t, size_t n, int deflate);

/* ---- Matrix Market files (sparse matrices, mpemu/csr.h) */

/* Read a Matrix Market file ("matrix coordinate|array real|integer|pattern
   general|symmetric|skew-symmetric") into CSR: symmetric parts are mirrored,
   duplicate coordinate entries are summed, columns sorted within rows.
   What a file can make the reader allocate is bounded before it allocates:
   the entries the size line declares must fit in the file's bytes, and the
   rows and columns may exceed twice the stored entries by at most
   MPE_MTX_MAX_EMPTY (a 76-byte file declaring 2^31 rows is refused, not
   given 34 GB).
   Returns MPE_EIO if the file cannot be read, MPE_EFORMAT for a malformed
   or truncated file, MPE_EUNSUP for complex/hermitian data or
   more empty rows/columns than the limit, MPE_ERANGE for a NaN or infinite
   value (also a sum of duplicate entries that overflows), MPE_ENOMEM; on any
   failure *A is NULL (it was left untouched before 0.1's constructor convention).
   The Matrix Market reader is in libmpemu-solvers (`pkg-config --libs
   mpemu-solvers`), with the solvers it feeds. */
#define MPE_MTX_MAX_EMPTY (1 << 20)
MPE_API int mpe_mtx_read(mpe_csr **A, const char *path);
/* Read only the banner and size line: the order and the number of stored
   entries (as in the file, before mirroring), with the same checks and
   errors as mpe_mtx_read; on MPE_EUNSUP for the empty-row limit the sizes
   are still filled in. Cheap: lets a caller refuse a size before reading. */
MPE_API int mpe_mtx_size(const char *path, int *nrows, int *ncols, size_t *entries);

#ifdef __cplusplus
}
#endif
#endif
