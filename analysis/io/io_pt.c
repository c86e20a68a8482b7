/* PyTorch files (torch.save, the zip format): the pickle in <top>/data.pkl is
   run by a small interpreter that knows only the opcodes and globals a
   checkpoint needs. Nothing is ever called: a "call" of an allowed global
   builds a tensor description, an OrderedDict or a parameter's tensor, and
   anything else is refused. Every count the pickle makes the interpreter
   hold (values, stack, memo, names) is bounded by the pickle's own length,
   and every tensor view is checked against the bytes of its storage. */
#define _FILE_OFFSET_BITS 64
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include "mpei.h"
#include "mpemu/io.h"
#include "io_internal.h"

#define PT_MAX_PICKLE (256u << 20)   /* bytes of data.pkl */
#define PT_MAX_DEPTH 64              /* containers inside containers */
#define PT_MAX_NAME 1024             /* bytes of a joined tensor name */
#define PT_MAX_CACHE (2ull << 30)    /* a non-contiguous view's storage is held in memory up to this */
#define PT_MAX_NAMES (64u << 20)     /* bytes of all tensor names together */
#define PT_MAX_VALUES (1u << 22)     /* values a pickle makes (24 bytes each); a checkpoint makes ~20 per tensor */
#define PT_MAX_REPEAT (1ull << 30)   /* elements of a view that holds more than its storage (stride 0) */
#define NONE_ID UINT32_MAX

enum vkind { V_NONE, V_BOOL, V_INT, V_FLOAT, V_STR, V_BYTES, V_TUPLE, V_LIST, V_DICT,
             V_GLOBAL, V_STORAGE, V_TENSOR };

struct val {
  unsigned char kind;
  uint32_t n;             /* containers: kids (a dict holds key, value pairs); a list's or dict's
                             array holds room for cap_of(n): 16 bytes a value, not 24 */
  union {
    int64_t i;
    double d;
    struct { uint32_t off, len; } s;   /* a string: bytes of the pickle */
    uint32_t *kids;       /* lists and dicts */
    size_t tk;            /* tuples (immutable): their kids are p->tk[tk..tk + n) */
    uint32_t id;          /* global, storage or tensor index */
  } u;
};

/* the globals a checkpoint may name: four "calls", the storage classes and the dtypes */
enum { G_REBUILD_V2, G_REBUILD_V3, G_REBUILD, G_REBUILD_PARAM, G_ODICT, G_UNTYPED, G_STORAGE0 = 16,
       G_DTYPE0 = 64 };
static const struct { const char *mod, *name; } calls[] = {
  { "torch._utils", "_rebuild_tensor_v2" }, { "torch._utils", "_rebuild_tensor_v3" },
  { "torch._utils", "_rebuild_tensor" }, { "torch._utils", "_rebuild_parameter" },
  { "collections", "OrderedDict" }, { "torch.storage", "UntypedStorage" },
};
/* element types, by typed-storage class (torch.FloatStorage, ...) and by dtype (torch.float32, as
   _rebuild_tensor_v3 names them over an UntypedStorage): the mpemu type, or why they are skipped */
static const struct { const char *name, *dtype; int type; unsigned size; const char *why; } stypes[] = {
  /* the rows of lib/mpemu/formats.def (a row with no PyTorch names never matches) */
#define MPE_FORMAT(T, V, N, AL, P, LO, HI, EB, B, SP, NPY, ST, PT, PTS) \
  { PTS, PT, T, (B) <= 8 ? 1 : (B) <= 16 ? 2 : (B) <= 32 ? 4 : 8, NULL },
#include "mpemu/formats.def"
#undef MPE_FORMAT
  { "LongStorage", "int64", -1, 8, "integer tensor" },
  { "IntStorage", "int32", -1, 4, "integer tensor" },
  { "ShortStorage", "int16", -1, 2, "integer tensor" },
  { "CharStorage", "int8", -1, 1, "integer tensor" },
  { "ByteStorage", "uint8", -1, 1, "integer tensor" },
  { "UInt16Storage", "uint16", -1, 2, "integer tensor" },
  { "UInt32Storage", "uint32", -1, 4, "integer tensor" },
  { "UInt64Storage", "uint64", -1, 8, "integer tensor" },
  { "BoolStorage", "bool", -1, 1, "bool tensor" },
  { "ComplexHalfStorage", "complex32", -1, 4, "complex tensor" },
  { "ComplexFloatStorage", "complex64", -1, 8, "complex tensor" },
  { "ComplexDoubleStorage", "complex128", -1, 16, "complex tensor" },
  { "Float8_e4m3fnuzStorage", "float8_e4m3fnuz", -1, 1, "unsupported float8 variant" },
  { "Float8_e5m2fnuzStorage", "float8_e5m2fnuz", -1, 1, "unsupported float8 variant" },
  { "QInt8Storage", "qint8", -1, 1, "quantized tensor" },
  { "QUInt8Storage", "quint8", -1, 1, "quantized tensor" },
  { "QInt32Storage", "qint32", -1, 4, "quantized tensor" },
};
#define NCALLS (sizeof calls / sizeof calls[0])
#define NSTYPES (sizeof stypes / sizeof stypes[0])

#define UNTYPED NSTYPES   /* a storage of bytes: its tensors name their dtype */
struct storage {
  char key[64];
  unsigned st;            /* index in stypes, or UNTYPED */
  uint64_t nbytes;
  zip_uint64_t zindex;
  uint64_t zsize;
};

struct view {
  uint32_t storage;
  unsigned st;            /* element type: index in stypes */
  uint64_t offset, count;
  int ndim;
  size_t dims;            /* the sizes then the strides, ndim of each, in p->dims */
};

struct out {              /* a tensor found in the checkpoint, under a name */
  char *name;
  uint32_t view;
  int type;               /* -1: the storage's own; else the mpe_type a --dtype rule gave */
};

struct mpai_pt {
  /* parsing */
  const unsigned char *pk;
  size_t pklen;
  struct val *v;
  size_t nv, capv;
  uint32_t *stack;
  size_t sp, caps;
  size_t *marks;
  size_t nmarks, capm;
  uint32_t *memo;
  size_t capmemo, nmemo;
  size_t visits;
  /* results */
  struct storage *s;
  size_t ns, caps_;
  struct view *views;
  size_t nviews, capviews;
  uint64_t *dims;         /* of every view: kept compact, a checkpoint may hold 10^5 tensors */
  size_t ndims, capdims;
  uint32_t *tk;           /* the kids of every tuple */
  size_t ntk, captk;
  struct out *o, *sk;     /* tensors listed, tensors skipped */
  size_t no, capo, nsk, capsk;
  size_t namebytes;
  uint64_t repeated;      /* elements of the views listed that hold more than their storage */
  zip_t *za;
  uint32_t *by_member;    /* storage index of each zip entry, NONE_ID when none */
  uint64_t nentries;
  char prefix[256];       /* "<top>/" of the archive */
  int big_endian;
  /* reading */
  long cur;
  zip_file_t *zf;
  unsigned char *cache;   /* a non-contiguous view's storage */
  uint64_t pos;           /* next element of the view */
  uint64_t idx[MPE_IO_MAXDIM];
  int contiguous;
  uint64_t budget, held;  /* mpe_io_opts.max_memory (0: none), bytes held for this file */
  uint64_t cached;        /* of them, the cache's */
  uint64_t parse_held;    /* of them, the parse's (the pickle too) */
  int over;               /* a table would have passed the budget */
};

/* bytes more held for the file: 0, or -1 past the budget (p->over set) */
static int take(struct mpai_pt *p, uint64_t bytes)
{
  p->held += bytes;
  if (p->budget && p->held > p->budget) {
    p->over = 1;
    return -1;
  }
  return 0;
}

static int nomem(const struct mpai_pt *p, char *msg, size_t msglen)
{
  if (!p || !p->over) {
    mpai_io_msg(msg, msglen, "out of memory");
    return MPE_ENOMEM;
  }
  mpai_io_msg(msg, msglen, "reading it needs more than the memory limit of %llu bytes (%llu held for the "
              "file's tables and views)", (unsigned long long)p->budget, (unsigned long long)p->held);
  return MPE_EUNSUP;
}

#define KIDS(v) ((v)->kind == V_TUPLE ? p->tk + (v)->u.tk : (v)->u.kids)
/* why a member's data stopped, as two %s: libzip's error (CRC, inflate) when
   r < 0, else data that end before (r == 0) or go on after (r > 0) the size
   its directory declares */
#define ZWHY(zf, r) (r) < 0 ? "is corrupt: " : "", (r) < 0 ? zip_file_strerror(zf) : (r) ? "is longer than declared" \
                                                                                   : "ends before its declared size"
#define ERR(code, ...) do { mpai_io_msg(msg, msglen, __VA_ARGS__); return (code); } while (0)

/* Every table grows through grow(), which counts what it holds against the
   caller's budget (mpe_io_opts.max_memory): past it, it fails as out of
   memory does, and nomem() then says which it was. */
static int pt_grow(struct mpai_pt *P, void **ptr, size_t *cap, size_t need, size_t esize)
{
  if (need <= *cap)
    return 0;
  size_t nc = *cap ? *cap : 16;
  while (nc < need)
    nc *= 2;
  uint64_t more = (uint64_t)(nc - *cap) * esize;
  if (take(P, more))
    return -1;
  /* the parse's own tables go when it is done (parse_free); the results stay */
  if (ptr != (void **)&P->s && ptr != (void **)&P->views && ptr != (void **)&P->dims && ptr != (void **)&P->o &&
      ptr != (void **)&P->sk)
    P->parse_held += more;
  void *q = realloc(*ptr, nc * esize);
  if (!q)
    return -1;
  *ptr = q;
  *cap = nc;
  return 0;
}
#define grow(ptr, cap, need, esize) pt_grow(p, ptr, cap, need, esize)

/* Printable text of at most 48 bytes for a message: other bytes become '?'. */
static void clean(const unsigned char *s, size_t n, char *out, size_t outlen)
{
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < outlen && k < 48; i++)
    out[k++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
  out[k] = 0;
}

/* ------------------------------------------------------------------ values */

static int new_val(struct mpai_pt *p, int kind, uint32_t *id)
{
  if (p->nv >= UINT32_MAX - 1 || grow((void **)&p->v, &p->capv, p->nv + 1, sizeof *p->v))
    return MPE_ENOMEM;
  memset(&p->v[p->nv], 0, sizeof *p->v);
  p->v[p->nv].kind = (unsigned char)kind;
  *id = (uint32_t)p->nv++;
  return MPE_OK;
}

static int push(struct mpai_pt *p, uint32_t id)
{
  if (grow((void **)&p->stack, &p->caps, p->sp + 1, sizeof *p->stack))
    return MPE_ENOMEM;
  p->stack[p->sp++] = id;
  return MPE_OK;
}

/* the room grow() leaves for n kids: 16, 32, 64, ... */
static size_t cap_of(uint32_t n)
{
  size_t c = 16;
  while (c < n)
    c *= 2;
  return n ? c : 0;
}

static int kid_add(struct mpai_pt *p, uint32_t c, uint32_t x)
{
  struct val *v = &p->v[c];
  size_t cap = cap_of(v->n);
  if (v->n == UINT32_MAX || grow((void **)&v->u.kids, &cap, (size_t)v->n + 1, sizeof(uint32_t)))
    return MPE_ENOMEM;
  v->u.kids[v->n++] = x;
  return MPE_OK;
}

static int is_str(const struct mpai_pt *p, uint32_t id, const char *s)
{
  const struct val *v = &p->v[id];
  return v->kind == V_STR && v->u.s.len == strlen(s) && !memcmp(p->pk + v->u.s.off, s, v->u.s.len);
}

static int as_u64(const struct mpai_pt *p, uint32_t id, uint64_t *x)
{
  const struct val *v = &p->v[id];
  if (v->kind != V_INT || v->u.i < 0)
    return -1;
  *x = (uint64_t)v->u.i;
  return 0;
}

/* a tuple (or list) of non-negative integers */
static int int_tuple(const struct mpai_pt *p, uint32_t id, uint64_t *x, int *n)
{
  const struct val *v = &p->v[id];
  if ((v->kind != V_TUPLE && v->kind != V_LIST) || v->n > MPE_IO_MAXDIM)
    return -1;
  for (uint32_t i = 0; i < v->n; i++)
    if (as_u64(p, KIDS(v)[i], &x[i]))
      return -1;
  *n = (int)v->n;
  return 0;
}

/* ------------------------------------------------------------------ storages and tensors */

/* BINPERSID: ('storage', torch.<Type>Storage, key, location, numel) */
static int persistent(struct mpai_pt *p, uint32_t tup, uint32_t *res, char *msg, size_t msglen)
{
  const struct val *t = &p->v[tup];
  if (t->kind != V_TUPLE || t->n != 5 || !is_str(p, KIDS(t)[0], "storage"))
    ERR(MPE_EFORMAT, "a persistent id that is not ('storage', type, key, location, size)");
  const struct val *ty = &p->v[KIDS(t)[1]], *key = &p->v[KIDS(t)[2]], *loc = &p->v[KIDS(t)[3]];
  uint64_t numel;
  if (ty->kind != V_GLOBAL || (ty->u.id != G_UNTYPED && (ty->u.id < G_STORAGE0 || ty->u.id >= G_DTYPE0)))
    ERR(MPE_EFORMAT, "a storage whose type is not a torch storage class");
  if (key->kind != V_STR || loc->kind != V_STR || as_u64(p, KIDS(t)[4], &numel))
    ERR(MPE_EFORMAT, "a storage with a malformed key, location or size");
  if (key->u.s.len == 0 || key->u.s.len >= sizeof p->s[0].key)
    ERR(MPE_EFORMAT, "a storage key of %u bytes", (unsigned)key->u.s.len);
  const unsigned char *k = p->pk + key->u.s.off;
  for (uint32_t i = 0; i < key->u.s.len; i++)
    if (!((k[i] >= '0' && k[i] <= '9') || (k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') || k[i] == '_'))
      ERR(MPE_EFORMAT, "a storage key with characters other than letters, digits and '_'");
  unsigned st = ty->u.id == G_UNTYPED ? UNTYPED : ty->u.id - G_STORAGE0;
  uint64_t nb;
  if (mpai_mul_u64(numel, st == UNTYPED ? 1 : stypes[st].size, &nb))
    ERR(MPE_EFORMAT, "a storage of %llu elements: too large", (unsigned long long)numel);
  char member[sizeof p->prefix + 80], kz[64];
  memcpy(kz, k, key->u.s.len);
  kz[key->u.s.len] = 0;
  snprintf(member, sizeof member, "%sdata/%s", p->prefix, kz);
  zip_int64_t zi = zip_name_locate(p->za, member, ZIP_FL_ENC_RAW);
  if (zi < 0 || (uint64_t)zi >= p->nentries)
    ERR(MPE_EFORMAT, "storage '%s' has no member data/%s in the archive", kz, kz);
  size_t si = p->by_member[zi];   /* storages are found by their member: no search */
  if (si != NONE_ID) {   /* a storage shared by several tensors */
    if (p->s[si].st != st || p->s[si].nbytes != nb)
      ERR(MPE_EFORMAT, "storage '%s' is described twice, differently", p->s[si].key);
  } else {
    si = p->ns;
    if (grow((void **)&p->s, &p->caps_, p->ns + 1, sizeof *p->s))
      return nomem(p, msg, msglen);
    struct storage *s = &p->s[si];
    memset(s, 0, sizeof *s);
    memcpy(s->key, kz, key->u.s.len + 1);
    s->st = st;
    s->nbytes = nb;
    zip_stat_t zs;
    zip_stat_init(&zs);
    if (zip_stat_index(p->za, (zip_uint64_t)zi, ZIP_FL_ENC_RAW, &zs) || !(zs.valid & ZIP_STAT_SIZE))
      ERR(MPE_EFORMAT, "storage '%s': unreadable zip entry", s->key);
    if (nb != zs.size)
      ERR(MPE_EFORMAT, "storage '%s' claims %llu bytes but its member holds %llu", s->key,
          (unsigned long long)nb, (unsigned long long)zs.size);
    if ((zs.valid & ZIP_STAT_COMP_METHOD) && zs.comp_method != ZIP_CM_STORE && zs.comp_method != ZIP_CM_DEFLATE)
      ERR(MPE_EUNSUP, "storage '%s' uses zip compression method %d (only stored and deflated are supported)",
          s->key, (int)zs.comp_method);
    if ((zs.valid & ZIP_STAT_COMP_SIZE) &&
        ((zs.comp_method == ZIP_CM_STORE && zs.size != zs.comp_size) ||
         (zs.comp_method == ZIP_CM_DEFLATE && zs.size / 1032 > zs.comp_size + 64)))
      ERR(MPE_EFORMAT, "storage '%s' claims %llu bytes from %llu compressed: impossible", s->key,
          (unsigned long long)zs.size, (unsigned long long)zs.comp_size);
    s->zindex = (zip_uint64_t)zi;
    s->zsize = zs.size;
    p->by_member[zi] = (uint32_t)si;
    p->ns++;
  }
  uint32_t id;
  if (new_val(p, V_STORAGE, &id))
    return nomem(p, msg, msglen);
  p->v[id].u.id = (uint32_t)si;
  *res = id;
  return MPE_OK;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]),
   _rebuild_tensor_v3(the same with a dtype before the metadata) or
   _rebuild_tensor(storage, offset, size, stride): the view, checked against its storage */
static int rebuild(struct mpai_pt *p, uint32_t args, int version, uint32_t *res, char *msg, size_t msglen)
{
  const struct val *a = &p->v[args];
  unsigned lo = version == 1 ? 4 : version == 2 ? 6 : 7, hi = version == 1 ? 4 : lo + 1;
  if (a->kind != V_TUPLE || a->n < lo || a->n > hi)
    ERR(MPE_EFORMAT, "a tensor rebuild with %u arguments", a->kind == V_TUPLE ? (unsigned)a->n : 0u);
  const struct val *sv = &p->v[KIDS(a)[0]];
  if (sv->kind != V_STORAGE)
    ERR(MPE_EFORMAT, "a tensor rebuild whose first argument is not a storage");
  struct view w;
  uint64_t size[MPE_IO_MAXDIM], stride[MPE_IO_MAXDIM];
  memset(&w, 0, sizeof w);
  w.storage = sv->u.id;
  w.st = p->s[w.storage].st;
  if (version == 3) {
    const struct val *dt = &p->v[KIDS(a)[6]];
    if (dt->kind != V_GLOBAL || dt->u.id < G_DTYPE0)
      ERR(MPE_EFORMAT, "a tensor rebuild whose dtype is not a torch dtype");
    w.st = dt->u.id - G_DTYPE0;
    if (p->s[w.storage].st != UNTYPED && p->s[w.storage].st != w.st)
      ERR(MPE_EFORMAT, "a %s tensor over a %s storage", stypes[w.st].dtype, stypes[p->s[w.storage].st].dtype);
  } else if (w.st == UNTYPED) {
    ERR(MPE_EFORMAT, "a tensor over an untyped storage without a dtype");
  }
  int nd1, nd2;
  if (as_u64(p, KIDS(a)[1], &w.offset) || int_tuple(p, KIDS(a)[2], size, &nd1) ||
      int_tuple(p, KIDS(a)[3], stride, &nd2) || nd1 != nd2)
    ERR(MPE_EFORMAT, "a tensor rebuild with a malformed offset, size or stride");
  w.ndim = nd1;
  const struct storage *s = &p->s[w.storage];
  uint64_t count = 1, last = w.offset;
  for (int d = 0; d < w.ndim; d++)
    if (mpai_mul_u64(count, size[d], &count))
      ERR(MPE_EFORMAT, "tensor of storage '%s': size overflows", s->key);
  if (count) {
    for (int d = 0; d < w.ndim; d++) {
      uint64_t span;
      if (mpai_mul_u64(size[d] - 1, stride[d], &span) || __builtin_add_overflow(last, span, &last))
        ERR(MPE_EFORMAT, "tensor of storage '%s': strides overflow", s->key);
    }
    if (last >= s->nbytes / stypes[w.st].size)
      ERR(MPE_EFORMAT, "tensor of storage '%s' reaches element %llu but the storage holds %llu", s->key,
          (unsigned long long)last, (unsigned long long)(s->nbytes / stypes[w.st].size));
    /* stride 0 (expand) or overlapping strides: more values than stored, all of them streamed */
    if (count > s->nbytes / stypes[w.st].size && count > PT_MAX_REPEAT)
      ERR(MPE_EUNSUP, "tensor of storage '%s' is a broadcast or overlapping view of %llu elements over %llu stored "
          "(the limit is %llu)", s->key, (unsigned long long)count,
          (unsigned long long)(s->nbytes / stypes[w.st].size), (unsigned long long)PT_MAX_REPEAT);
  }
  w.count = count;
  if (grow((void **)&p->views, &p->capviews, p->nviews + 1, sizeof *p->views) ||
      grow((void **)&p->dims, &p->capdims, p->ndims + 2 * (size_t)w.ndim, sizeof *p->dims))
    return nomem(p, msg, msglen);
  w.dims = p->ndims;
  memcpy(p->dims + p->ndims, size, (size_t)w.ndim * sizeof *size);
  memcpy(p->dims + p->ndims + w.ndim, stride, (size_t)w.ndim * sizeof *stride);
  p->ndims += 2 * (size_t)w.ndim;
  p->views[p->nviews] = w;
  uint32_t id;
  if (new_val(p, V_TENSOR, &id))
    return nomem(p, msg, msglen);
  p->v[id].u.id = (uint32_t)p->nviews++;
  *res = id;
  return MPE_OK;
}

/* REDUCE: only the allowed "calls", none of which runs anything */
static int reduce(struct mpai_pt *p, uint32_t fn, uint32_t args, uint32_t *res, char *msg, size_t msglen)
{
  const struct val *f = &p->v[fn], *a = &p->v[args];
  if (f->kind != V_GLOBAL || f->u.id >= G_UNTYPED)
    ERR(MPE_EFORMAT, "a call of something that is not a tensor rebuild or OrderedDict");
  if (a->kind != V_TUPLE)
    ERR(MPE_EFORMAT, "a call whose arguments are not a tuple");
  switch (f->u.id) {
  case G_REBUILD_V2: return rebuild(p, args, 2, res, msg, msglen);
  case G_REBUILD_V3: return rebuild(p, args, 3, res, msg, msglen);
  case G_REBUILD: return rebuild(p, args, 1, res, msg, msglen);
  case G_REBUILD_PARAM:
    if ((a->n != 3 && a->n != 4) || p->v[KIDS(a)[0]].kind != V_TENSOR)
      ERR(MPE_EFORMAT, "a parameter rebuild whose first argument is not a tensor");
    *res = KIDS(a)[0];
    return MPE_OK;
  default:   /* OrderedDict() */
    if (a->n != 0)
      ERR(MPE_EFORMAT, "OrderedDict called with arguments");
    if (new_val(p, V_DICT, res))
      return nomem(p, msg, msglen);
    return MPE_OK;
  }
}

static int global(struct mpai_pt *p, const unsigned char *mod, size_t ml, const unsigned char *name, size_t nl,
                  uint32_t *res, char *msg, size_t msglen)
{
  uint32_t g = NONE_ID;
  for (size_t i = 0; i < NCALLS; i++)
    if (strlen(calls[i].mod) == ml && !memcmp(calls[i].mod, mod, ml) &&
        strlen(calls[i].name) == nl && !memcmp(calls[i].name, name, nl))
      g = (uint32_t)i;
  if (ml == 12 && !memcmp(mod, "torch._utils", 12) && nl == 29 && !memcmp(name, "_rebuild_parameter_with_state", 29))
    g = G_REBUILD_PARAM;   /* a Parameter with attributes: (data, requires_grad, hooks, state) */
  if (ml == 5 && !memcmp(mod, "torch", 5) && nl)
    for (size_t i = 0; i < NSTYPES; i++) {
      if (strlen(stypes[i].name) == nl && !memcmp(stypes[i].name, name, nl))
        g = G_STORAGE0 + (uint32_t)i;
      if (strlen(stypes[i].dtype) == nl && !memcmp(stypes[i].dtype, name, nl))
        g = G_DTYPE0 + (uint32_t)i;
    }
  if (g == NONE_ID) {
    char a[64], b[64];
    clean(mod, ml, a, sizeof a);
    clean(name, nl, b, sizeof b);
    ERR(MPE_EFORMAT, "pickle names the global '%s.%s', which is not allowed (nothing was run)", a, b);
  }
  if (new_val(p, V_GLOBAL, res))
    return nomem(p, msg, msglen);
  p->v[*res].u.id = g;
  return MPE_OK;
}

/* ------------------------------------------------------------------ the interpreter */

static int run(struct mpai_pt *p, uint32_t *root, char *msg, size_t msglen)
{
  const unsigned char *c = p->pk, *e = p->pk + p->pklen;
#define NEED(k) do { if ((size_t)(e - c) < (size_t)(k)) ERR(MPE_EFORMAT, "pickle ends inside an opcode"); } while (0)
#define EMPTY (p->sp == 0 || (p->nmarks && p->sp <= p->marks[p->nmarks - 1]))
#define POP(x) do { if (EMPTY) { ERR(MPE_EFORMAT, "pickle pops an empty stack"); } (x) = p->stack[--p->sp]; } while (0)
#define TOP(x) do { if (EMPTY) { ERR(MPE_EFORMAT, "pickle uses an empty stack"); } (x) = p->stack[p->sp - 1]; } while (0)
#define PUSH(x) do { if (push(p, (x))) return nomem(p, msg, msglen); } while (0)
#define NEW(kind, id) do { if (new_val(p, (kind), &(id))) return nomem(p, msg, msglen); } while (0)
  while (c < e) {
    if (p->nv > PT_MAX_VALUES)   /* no opcode makes more than one */
      ERR(MPE_EFORMAT, "pickle makes more than %u values (the limit)", PT_MAX_VALUES);
    unsigned op = *c++;
    uint32_t id, x, y;
    uint64_t len = 0;
    int rc;
    switch (op) {
    case 0x80:   /* PROTO */
      NEED(1);
      if (*c < 2 || *c > 5)
        ERR(MPE_EFORMAT, "pickle protocol %u is not supported", *c);
      c++;
      break;
    case 0x95:   /* FRAME: a length hint */
      NEED(8);
      c += 8;
      break;
    case '.':    /* STOP */
      if (p->sp != 1 || p->nmarks)
        ERR(MPE_EFORMAT, "pickle stops with %zu values on its stack", p->sp);
      *root = p->stack[0];
      return MPE_OK;
    case '(':
      if (grow((void **)&p->marks, &p->capm, p->nmarks + 1, sizeof *p->marks))
        return nomem(p, msg, msglen);
      p->marks[p->nmarks++] = p->sp;
      break;
    case '0': POP(x); break;
    case '1':
      if (!p->nmarks)
        ERR(MPE_EFORMAT, "pickle pops a mark it never set");
      p->sp = p->marks[--p->nmarks];
      break;
    case '2': TOP(x); PUSH(x); break;
    case 'N': NEW(V_NONE, id); PUSH(id); break;
    case 0x88: case 0x89: NEW(V_BOOL, id); p->v[id].u.i = op == 0x88; PUSH(id); break;
    case 'K': NEED(1); NEW(V_INT, id); p->v[id].u.i = c[0]; c += 1; PUSH(id); break;
    case 'M': NEED(2); NEW(V_INT, id); p->v[id].u.i = c[0] | c[1] << 8; c += 2; PUSH(id); break;
    case 'J':
      NEED(4);
      NEW(V_INT, id);
      p->v[id].u.i = (int32_t)((uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24);
      c += 4;
      PUSH(id);
      break;
    case 0x8a: { /* LONG1: little-endian two's complement of n bytes */
      NEED(1);
      unsigned n = *c++;
      NEED(n);
      if (n > 8)
        ERR(MPE_EFORMAT, "pickle holds an integer of %u bytes", n);
      uint64_t u = 0;
      for (unsigned i = 0; i < n; i++)
        u |= (uint64_t)c[i] << 8 * i;
      if (n && n < 8 && (c[n - 1] & 0x80))
        u |= ~(uint64_t)0 << 8 * n;
      c += n;
      NEW(V_INT, id);
      memcpy(&p->v[id].u.i, &u, 8);
      PUSH(id);
      break;
    }
    case 'G': {
      NEED(8);
      uint64_t u = 0;
      for (int i = 0; i < 8; i++)
        u = u << 8 | c[i];
      c += 8;
      NEW(V_FLOAT, id);
      p->v[id].u.d = mpei_u2d(u);
      PUSH(id);
      break;
    }
    case 'X': case 'T': case 'B':   /* 4-byte length */
      NEED(4);
      len = (uint64_t)c[0] | (uint64_t)c[1] << 8 | (uint64_t)c[2] << 16 | (uint64_t)c[3] << 24;
      c += 4;
      goto str;
    case 0x8d: case 0x8e:   /* BINUNICODE8, BINBYTES8 */
      NEED(8);
      for (int i = 7; i >= 0; i--)
        len = len << 8 | c[i];
      c += 8;
      goto str;
    case 0x8c: case 'U': case 'C':  /* 1-byte length */
      NEED(1);
      len = *c++;
    str:
      if (len > (uint64_t)(e - c))
        ERR(MPE_EFORMAT, "pickle string of %llu bytes runs past its end", (unsigned long long)len);
      NEW(op == 'B' || op == 'C' || op == 0x8e ? V_BYTES : V_STR, id);
      p->v[id].u.s.off = (uint32_t)(c - p->pk);
      p->v[id].u.s.len = (uint32_t)len;
      if (p->v[id].kind == V_STR && (op == 'X' || op == 0x8c || op == 0x8d) && !mpai_utf8_valid((const char *)c, len))
        ERR(MPE_EFORMAT, "pickle string is not valid UTF-8");
      c += len;
      PUSH(id);
      break;
    case '}': NEW(V_DICT, id); PUSH(id); break;
    case ']': NEW(V_LIST, id); PUSH(id); break;
    case ')': NEW(V_TUPLE, id); PUSH(id); break;
    case 0x85: case 0x86: case 0x87: case 't': {
      size_t n = op == 't' ? 0 : op - 0x84u, base;
      if (op == 't') {
        if (!p->nmarks)
          ERR(MPE_EFORMAT, "pickle builds a tuple without a mark");
        base = p->marks[--p->nmarks];
        n = p->sp - base;
      } else {
        if (p->sp < n || (p->nmarks && p->sp - n < p->marks[p->nmarks - 1]))
          ERR(MPE_EFORMAT, "pickle builds a tuple from an empty stack");
        base = p->sp - n;
      }
      NEW(V_TUPLE, id);
      if (n > UINT32_MAX || (n && grow((void **)&p->tk, &p->captk, p->ntk + n, sizeof *p->tk)))
        return nomem(p, msg, msglen);
      if (n)   /* an empty tuple first: tk and the stack may still be NULL (found by fuzz_pkl) */
        memcpy(p->tk + p->ntk, p->stack + base, n * sizeof *p->tk);
      p->v[id].u.tk = p->ntk;
      p->v[id].n = (uint32_t)n;
      p->ntk += n;
      p->sp = base;
      PUSH(id);
      break;
    }
    case 'a': POP(x); TOP(y);
      if (p->v[y].kind != V_LIST)
        ERR(MPE_EFORMAT, "pickle appends to something that is not a list");
      if (kid_add(p, y, x))
        return nomem(p, msg, msglen);
      break;
    case 's': POP(x); POP(y); TOP(id);
      if (p->v[id].kind != V_DICT)
        ERR(MPE_EFORMAT, "pickle sets an item of something that is not a dict");
      if (kid_add(p, id, y) || kid_add(p, id, x))
        return nomem(p, msg, msglen);
      break;
    case 'e': case 'u': {
      if (!p->nmarks)
        ERR(MPE_EFORMAT, "pickle adds items without a mark");
      size_t base = p->marks[--p->nmarks];
      if (base == 0)
        ERR(MPE_EFORMAT, "pickle adds items to nothing");
      uint32_t to = p->stack[base - 1];
      if (p->v[to].kind != (op == 'e' ? V_LIST : V_DICT))
        ERR(MPE_EFORMAT, "pickle adds items to something that is not a %s", op == 'e' ? "list" : "dict");
      if (op == 'u' && (p->sp - base) % 2)
        ERR(MPE_EFORMAT, "pickle sets a key without a value");
      for (size_t i = base; i < p->sp; i++)
        if (kid_add(p, to, p->stack[i]))
          return nomem(p, msg, msglen);
      p->sp = base;
      break;
    }
    case 'q': case 'r': case 0x94: case 'h': case 'j': {   /* memo */
      if (op == 'q' || op == 'h') { NEED(1); len = *c++; }
      else if (op == 'r' || op == 'j') {
        NEED(4);
        len = (uint64_t)c[0] | (uint64_t)c[1] << 8 | (uint64_t)c[2] << 16 | (uint64_t)c[3] << 24;
        c += 4;
      } else {
        len = p->nmemo;   /* MEMOIZE: the next index */
      }
      /* Python's pickler numbers memo entries in order, one per object made: an index
         beyond the objects made so far is absurd (and would size the memo) */
      if (len >= p->nv + 1)
        ERR(MPE_EFORMAT, "pickle memo index %llu is absurd after %zu values", (unsigned long long)len, p->nv);
      if (op == 'h' || op == 'j') {
        if (len >= p->capmemo || p->memo[len] == NONE_ID)
          ERR(MPE_EFORMAT, "pickle gets memo entry %llu, which was never set", (unsigned long long)len);
        PUSH(p->memo[len]);
      } else {
        TOP(x);
        size_t old = p->capmemo;
        if (grow((void **)&p->memo, &p->capmemo, (size_t)len + 1, sizeof *p->memo))
          return nomem(p, msg, msglen);
        for (size_t i = old; i < p->capmemo; i++)
          p->memo[i] = NONE_ID;
        p->nmemo += p->memo[len] == NONE_ID;
        p->memo[len] = x;
      }
      break;
    }
    case 'c': {   /* GLOBAL module\nname\n */
      const unsigned char *m = c, *nl1 = memchr(c, '\n', (size_t)(e - c)), *nl2;
      if (!nl1 || !(nl2 = memchr(nl1 + 1, '\n', (size_t)(e - nl1 - 1))))
        ERR(MPE_EFORMAT, "pickle ends inside a global name");
      c = nl2 + 1;
      if ((rc = global(p, m, (size_t)(nl1 - m), nl1 + 1, (size_t)(nl2 - nl1 - 1), &id, msg, msglen)))
        return rc;
      PUSH(id);
      break;
    }
    case 0x93: {  /* STACK_GLOBAL */
      POP(y); POP(x);
      if (p->v[x].kind != V_STR || p->v[y].kind != V_STR)
        ERR(MPE_EFORMAT, "pickle names a global with something that is not a string");
      if ((rc = global(p, p->pk + p->v[x].u.s.off, p->v[x].u.s.len, p->pk + p->v[y].u.s.off, p->v[y].u.s.len,
                       &id, msg, msglen)))
        return rc;
      PUSH(id);
      break;
    }
    case 'Q':     /* BINPERSID */
      POP(x);
      if ((rc = persistent(p, x, &id, msg, msglen)))
        return rc;
      PUSH(id);
      break;
    case 'R':
      POP(y); POP(x);
      if ((rc = reduce(p, x, y, &id, msg, msglen)))
        return rc;
      PUSH(id);
      break;
    case 'b':     /* BUILD: an OrderedDict's attributes (state_dict._metadata) or a tensor's; dropped */
      POP(y); TOP(x);
      if (p->v[x].kind != V_DICT && p->v[x].kind != V_TENSOR)
        ERR(MPE_EFORMAT, "pickle sets the state of something that is not a dict or tensor");
      break;
    default:
      ERR(MPE_EFORMAT, "pickle opcode 0x%02x is not allowed (nothing was run)", op);
    }
  }
  ERR(MPE_EFORMAT, "pickle ends without STOP");
#undef NEED
#undef EMPTY
#undef POP
#undef TOP
#undef PUSH
#undef NEW
}

/* ------------------------------------------------------------------ names */

static int key_text(const struct mpai_pt *p, uint32_t k, char *out, size_t outlen)
{
  const struct val *v = &p->v[k];
  switch (v->kind) {
  case V_STR:
    if (v->u.s.len >= outlen)
      return -1;
    memcpy(out, p->pk + v->u.s.off, v->u.s.len);
    out[v->u.s.len] = 0;
    if (!mpai_utf8_valid(out, v->u.s.len))
      return -1;
    for (uint32_t i = 0; i < v->u.s.len; i++)   /* names reach terminals and plots: no control characters */
      if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
        out[i] = '?';
    return 0;
  case V_INT: snprintf(out, outlen, "%lld", (long long)v->u.i); return 0;
  case V_BOOL: snprintf(out, outlen, "%s", v->u.i ? "True" : "False"); return 0;
  case V_NONE: snprintf(out, outlen, "None"); return 0;
  case V_FLOAT: snprintf(out, outlen, "%.17g", v->u.d); return 0;
  default: return -1;
  }
}

static int emit(struct mpai_pt *p, uint32_t view, const char *name, char *msg, size_t msglen)
{
  int skip = stypes[p->views[view].st].type < 0;
  struct out **o = skip ? &p->sk : &p->o;
  size_t *n = skip ? &p->nsk : &p->no, *cap = skip ? &p->capsk : &p->capo;
  /* broadcast or overlapping views are streamed value by value: PT_MAX_REPEAT
     bounds them over the whole file, not one view at a time */
  const struct view *w = &p->views[view];
  if (w->count > p->s[w->storage].nbytes / stypes[w->st].size) {
    p->repeated += w->count;
    if (p->repeated > PT_MAX_REPEAT)
      ERR(MPE_EUNSUP, "its broadcast or overlapping views hold more than %llu elements in all, more than their "
          "storages (the limit)", (unsigned long long)PT_MAX_REPEAT);
  }
  p->namebytes += strlen(name) + 1;
  if (p->namebytes > PT_MAX_NAMES)
    ERR(MPE_EFORMAT, "tensor names take more than %u MiB (one tensor listed under very many names?)",
        PT_MAX_NAMES >> 20);
  if (grow((void **)o, cap, *n + 1, sizeof **o) || take(p, strlen(name) + 17) || !((*o)[*n].name = strdup(name)))
    return nomem(p, msg, msglen);
  (*o)[*n].view = view;
  (*o)[*n].type = -1;
  (*n)++;
  return MPE_OK;
}

/* the tensors under value id, named prefix.key... */
static int walk(struct mpai_pt *p, uint32_t id, char *name, size_t len, int depth, char *msg, size_t msglen)
{
  const struct val *v = &p->v[id];
  /* every value and every kid looked at counts: a tree holds at most nv values and, each kid
     costing an opcode, fewer kids than the pickle has bytes */
  p->visits += 1 + (v->kind == V_LIST || v->kind == V_TUPLE || v->kind == V_DICT ? v->n : 0);
  if (p->visits > 4 * (p->nv + p->pklen) + 1024)
    ERR(MPE_EFORMAT, "pickle refers to the same containers too many times (a recursive or exploding structure)");
  if (v->kind == V_TENSOR)
    return emit(p, v->u.id, name, msg, msglen);
  if (v->kind != V_LIST && v->kind != V_TUPLE && v->kind != V_DICT)
    return MPE_OK;
  if (depth >= PT_MAX_DEPTH)
    ERR(MPE_EFORMAT, "containers nested deeper than %d", PT_MAX_DEPTH);
  int dict = v->kind == V_DICT;
  for (uint32_t i = 0; i < v->n; i += dict ? 2 : 1) {
    char key[PT_MAX_NAME];
    uint32_t child = KIDS(v)[dict ? i + 1 : i];
    int ck = p->v[child].kind;
    if (ck != V_TENSOR && ck != V_LIST && ck != V_TUPLE && ck != V_DICT)
      continue;   /* optimizer settings, strings, numbers */
    if (dict) {
      if (key_text(p, KIDS(v)[i], key, sizeof key))
        ERR(MPE_EFORMAT, "a dict key that is not a valid UTF-8 string or a number");
    } else {
      snprintf(key, sizeof key, "%u", (unsigned)i);
    }
    size_t kl = strlen(key), nl = len + (len ? 1 : 0) + kl;
    if (nl >= PT_MAX_NAME)
      ERR(MPE_EFORMAT, "a tensor name longer than %d bytes", PT_MAX_NAME - 1);
    if (len)
      name[len] = '.';
    memcpy(name + (len ? len + 1 : 0), key, kl + 1);
    int rc = walk(p, child, name, nl, depth + 1, msg, msglen);
    name[len] = 0;
    if (rc)
      return rc;
  }
  return MPE_OK;
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* one name, one tensor: a key set twice in a dict (torch.load keeps the last) or a key "a.b"
   beside a container a holding b would make --tensor pick one of them silently */
static int unique_names(struct mpai_pt *p, char *msg, size_t msglen)
{
  /* skipped members too: a --dtype rule may adopt one beside a tensor of its name */
  size_t n = p->no + p->nsk;
  if (n < 2)
    return MPE_OK;
  char **nm = malloc(n * sizeof *nm);
  if (!nm)
    return nomem(p, msg, msglen);
  for (size_t i = 0; i < p->no; i++)
    nm[i] = p->o[i].name;
  for (size_t i = 0; i < p->nsk; i++)
    nm[p->no + i] = p->sk[i].name;
  qsort(nm, n, sizeof *nm, cmp_name);
  int rc = MPE_OK;
  for (size_t i = 1; i < n && !rc; i++)
    if (!strcmp(nm[i - 1], nm[i])) {
      mpai_io_msg(msg, msglen, "two tensors named '%.64s' (a key given twice, or a dotted key beside a container)",
                  nm[i]);
      rc = MPE_EFORMAT;
    }
  free(nm);
  return rc;
}

/* ------------------------------------------------------------------ open */

int mpai_pt_sniff(zip_t *za, char *prefix, size_t plen)
{
  zip_int64_t ne = zip_get_num_entries(za, 0);
  for (zip_int64_t i = 0; i < ne && i < 100000; i++) {
    const char *n = zip_get_name(za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
    const char *sl = n ? strchr(n, '/') : NULL;
    if (sl && !strcmp(sl + 1, "data.pkl") && (size_t)(sl - n) + 2 <= plen) {
      memcpy(prefix, n, (size_t)(sl - n) + 1);
      prefix[sl - n + 1] = 0;
      return 1;
    }
  }
  return 0;
}

static int read_member(zip_t *za, const char *name, unsigned char **buf, size_t *len, size_t max,
                       char *msg, size_t msglen)
{
  zip_stat_t st;
  zip_stat_init(&st);
  zip_int64_t zi = zip_name_locate(za, name, ZIP_FL_ENC_RAW);
  *buf = NULL;
  if (zi < 0 || zip_stat_index(za, (zip_uint64_t)zi, ZIP_FL_ENC_RAW, &st) || !(st.valid & ZIP_STAT_SIZE))
    return MPE_ENOTFOUND;
  if (st.size > max)
    ERR(MPE_EFORMAT, "member %.64s is %llu bytes, over the limit of %zu", name, (unsigned long long)st.size, max);
  if ((st.valid & ZIP_STAT_COMP_SIZE) && st.size / 1032 > st.comp_size + 64)
    ERR(MPE_EFORMAT, "member %.64s claims %llu bytes from %llu compressed: impossible", name,
        (unsigned long long)st.size, (unsigned long long)st.comp_size);
  zip_file_t *zf = zip_fopen_index(za, (zip_uint64_t)zi, 0);
  if (!zf)
    ERR(MPE_EFORMAT, "cannot open member %.64s: %s", name, zip_strerror(za));
  *buf = malloc(st.size ? (size_t)st.size : 1);
  if (!*buf) {
    zip_fclose(zf);
    ERR(MPE_ENOMEM, "out of memory");
  }
  size_t got = 0;
  zip_int64_t r = 0;
  while (got < st.size && (r = zip_fread(zf, *buf + got, (zip_uint64_t)(st.size - got))) > 0)
    got += (size_t)r;
  char extra;
  if (got == st.size)
    r = zip_fread(zf, &extra, 1);   /* at the end: the CRC is checked */
  int bad = got != st.size || r != 0;
  if (bad)
    mpai_io_msg(msg, msglen, "member %.64s %s%s", name, ZWHY(zf, r));
  zip_fclose(zf);
  if (bad) {
    free(*buf);
    *buf = NULL;
    return MPE_EFORMAT;
  }
  *len = (size_t)st.size;
  return MPE_OK;
}

/* what only running the pickle and naming its tensors needs */
static void parse_free(struct mpai_pt *p)
{
  for (size_t i = 0; i < p->nv; i++)
    if (p->v[i].kind == V_LIST || p->v[i].kind == V_DICT)
      free(p->v[i].u.kids);
  free(p->v);
  free(p->stack);
  free(p->marks);
  free(p->memo);
  free(p->tk);
  free((void *)p->pk);
  p->v = NULL;
  p->stack = NULL;
  p->marks = NULL;
  p->memo = NULL;
  p->tk = NULL;
  p->pk = NULL;
  p->nv = p->capv = p->sp = p->caps = p->nmarks = p->capm = p->capmemo = p->ntk = p->captk = 0;
  p->held -= p->parse_held;
  p->parse_held = 0;
}

void mpai_pt_free(struct mpai_pt *p)
{
  if (!p)
    return;
  if (p->zf)
    zip_fclose(p->zf);
  parse_free(p);
  for (size_t i = 0; i < p->no; i++)
    free(p->o[i].name);
  for (size_t i = 0; i < p->nsk; i++)
    free(p->sk[i].name);
  free(p->s);
  free(p->by_member);
  free(p->views);
  free(p->dims);
  free(p->o);
  free(p->sk);
  free(p->cache);
  free(p);
}

int mpai_pt_open(zip_t *za, const char *root_name, uint64_t budget, struct mpai_pt **out, char *msg,
                 size_t msglen)
{
  struct mpai_pt *p = calloc(1, sizeof *p);
  *out = p;
  if (!p)
    return nomem(p, msg, msglen);
  p->za = za;
  p->budget = budget;
  p->cur = -1;
  if (!mpai_pt_sniff(za, p->prefix, sizeof p->prefix))
    ERR(MPE_EFORMAT, "zip archive has no <name>/data.pkl: not a torch.save file");
  zip_int64_t ne = zip_get_num_entries(za, 0);   /* bounded by the archive's central directory */
  if (ne <= 0 || ne >= NONE_ID || !(p->by_member = malloc((size_t)ne * sizeof *p->by_member)))
    ERR(ne <= 0 || ne >= NONE_ID ? MPE_EFORMAT : MPE_ENOMEM, "zip archive of %lld members", (long long)ne);
  p->nentries = (uint64_t)ne;
  for (zip_int64_t i = 0; i < ne; i++)
    p->by_member[i] = NONE_ID;
  char name[sizeof p->prefix + 16];
  unsigned char *bo;
  size_t bl;
  snprintf(name, sizeof name, "%sbyteorder", p->prefix);
  int rc = read_member(za, name, &bo, &bl, 16, msg, msglen);
  if (rc == MPE_OK) {
    if (bl == 3 && !memcmp(bo, "big", 3))
      p->big_endian = 1;
    else if (!(bl == 6 && !memcmp(bo, "little", 6))) {
      free(bo);
      ERR(MPE_EFORMAT, "byteorder member says neither 'little' nor 'big'");
    }
    free(bo);
  } else if (rc != MPE_ENOTFOUND) {
    return rc;
  }
  snprintf(name, sizeof name, "%sdata.pkl", p->prefix);
  unsigned char *pk;
  size_t pkmax = budget && budget < PT_MAX_PICKLE ? (size_t)budget : PT_MAX_PICKLE;
  if ((rc = read_member(za, name, &pk, &p->pklen, pkmax, msg, msglen)))
    return rc == MPE_ENOTFOUND ? (mpai_io_msg(msg, msglen, "data.pkl is missing"), MPE_EFORMAT) : rc;
  p->pk = pk;
  p->parse_held += p->pklen;
  if (take(p, p->pklen))
    return nomem(p, msg, msglen);
  uint32_t root;
  if ((rc = run(p, &root, msg, msglen)))
    return rc;
  char path[PT_MAX_NAME];
  path[0] = 0;
  if (p->v[root].kind == V_TENSOR) {
    snprintf(path, sizeof path, "%s", root_name);
    rc = emit(p, p->v[root].u.id, path, msg, msglen);
    parse_free(p);
    return rc;
  }
  if ((rc = walk(p, root, path, 0, 0, msg, msglen)))
    return rc;
  parse_free(p);   /* before the reader copies the list: 200,000 tensors held ~100 MB of it */
  return unique_names(p, msg, msglen);
}

size_t mpai_pt_count(const struct mpai_pt *p) { return p->no; }
uint64_t mpai_pt_held(const struct mpai_pt *p) { return p->held; }
size_t mpai_pt_nskipped(const struct mpai_pt *p) { return p->nsk; }

void mpai_pt_info(const struct mpai_pt *p, size_t i, mpe_io_tensor *t, uint64_t *nbytes)
{
  const struct view *w = &p->views[p->o[i].view];
  memset(t, 0, sizeof *t);
  t->name = p->o[i].name;
  t->dtype = (mpe_type)(p->o[i].type >= 0 ? p->o[i].type : stypes[w->st].type);
  t->value_type = t->dtype == MPE_FP64 ? MPE_FP64 : MPE_FP32;
  t->ndim = w->ndim;
  memcpy(t->shape, p->dims + w->dims, (size_t)w->ndim * sizeof *t->shape);
  t->count = w->count;
  t->big_endian = p->big_endian && stypes[w->st].size > 1;
  *nbytes = w->count * stypes[w->st].size;
}

void mpai_pt_skipped(const struct mpai_pt *p, size_t i, const char **name, const char **dtype, const char **why)
{
  unsigned st = p->views[p->sk[i].view].st;
  *name = p->sk[i].name;
  *dtype = stypes[st].dtype;
  *why = stypes[st].why;
}

size_t mpai_pt_skipped_size(const struct mpai_pt *p, size_t i) { return stypes[p->views[p->sk[i].view].st].size; }

int mpai_pt_adopt(struct mpai_pt *p, size_t i, mpe_type type)
{
  if (i >= p->nsk)
    return MPE_EINVAL;
  if (grow((void **)&p->o, &p->capo, p->no + 1, sizeof *p->o))
    return MPE_ENOMEM;
  p->o[p->no] = p->sk[i];
  p->o[p->no++].type = (int)type;
  memmove(&p->sk[i], &p->sk[i + 1], (p->nsk - i - 1) * sizeof *p->sk);
  p->nsk--;
  return MPE_OK;
}

/* ------------------------------------------------------------------ reading */

/* skip_bytes and fill: 0, 1 when the data end first, -1 on libzip's error */
static int skip_bytes(zip_file_t *zf, uint64_t n, unsigned char *tmp, size_t tl)
{
  while (n) {
    zip_int64_t r = zip_fread(zf, tmp, n < tl ? n : tl);
    if (r <= 0)
      return r < 0 ? -1 : 1;
    n -= (uint64_t)r;
  }
  return 0;
}

static int fill(zip_file_t *zf, unsigned char *dst, uint64_t n)
{
  uint64_t got = 0;
  while (got < n) {
    zip_int64_t r = zip_fread(zf, dst + got, n - got);
    if (r <= 0)
      return r < 0 ? -1 : 1;
    got += (uint64_t)r;
  }
  return 0;
}

int mpai_pt_select(struct mpai_pt *p, size_t i, char *msg, size_t msglen)
{
  if (p->zf) {
    zip_fclose(p->zf);
    p->zf = NULL;
  }
  free(p->cache);
  p->cache = NULL;
  p->held -= p->cached;
  p->cached = 0;
  p->cur = -1;
  const struct view *w = &p->views[p->o[i].view];
  const struct storage *s = &p->s[w->storage];
  size_t es = stypes[w->st].size;
  const uint64_t *size = p->dims + w->dims, *stride = size + w->ndim;
  if (w->count == 0) {   /* nothing to read (its offset may even be the storage's end) */
    p->cur = (long)i;
    p->pos = 0;
    p->contiguous = 1;
    return MPE_OK;
  }
  /* contiguous in C order: each stride (of a dimension longer than 1) is the product of the later sizes */
  uint64_t want = 1;
  p->contiguous = 1;
  for (int d = w->ndim - 1; d >= 0; d--) {
    if (size[d] > 1 && stride[d] != want)
      p->contiguous = 0;
    want *= size[d];
  }
  if (!(p->zf = zip_fopen_index(p->za, s->zindex, 0)))
    ERR(MPE_EFORMAT, "cannot open storage '%s': %s", s->key, zip_strerror(p->za));
  unsigned char tmp[4096];
  if (p->contiguous) {   /* an empty view's offset may lie anywhere */
    int e = w->count ? skip_bytes(p->zf, w->offset * es, tmp, sizeof tmp) : 0;
    if (e)
      ERR(MPE_EFORMAT, "storage '%s' %s%s", s->key, ZWHY(p->zf, -(e < 0)));
  } else {
    if (s->zsize > PT_MAX_CACHE)
      ERR(MPE_EUNSUP, "tensor '%.64s' is a non-contiguous view of a %llu-byte storage (the limit is %llu)",
          p->o[i].name, (unsigned long long)s->zsize, (unsigned long long)PT_MAX_CACHE);
    if (take(p, s->zsize)) {
      p->held -= s->zsize;
      mpai_io_msg(msg, msglen, "tensor '%.64s' is a non-contiguous view of a %llu-byte storage, which would be held "
                  "in memory: over the memory limit of %llu bytes", p->o[i].name, (unsigned long long)s->zsize,
                  (unsigned long long)p->budget);
      return MPE_EUNSUP;
    }
    p->cached = s->zsize;
    if (!(p->cache = malloc(s->zsize ? (size_t)s->zsize : 1)))
      return nomem(p, msg, msglen);
    int e = fill(p->zf, p->cache, s->zsize);
    zip_int64_t r = e ? (e < 0 ? -1 : 0) : zip_fread(p->zf, tmp, 1);
    if (e || r)
      ERR(MPE_EFORMAT, "storage '%s' %s%s", s->key, ZWHY(p->zf, r));
    zip_fclose(p->zf);
    p->zf = NULL;
  }
  memset(p->idx, 0, sizeof p->idx);
  p->pos = 0;
  p->cur = (long)i;
  return MPE_OK;
}

/* the storage bytes of the next n elements of the selected view */
int mpai_pt_read(struct mpai_pt *p, unsigned char *dst, size_t n, char *msg, size_t msglen)
{
  if (p->cur < 0)
    ERR(MPE_EINVAL, "no tensor selected");
  const struct view *w = &p->views[p->o[p->cur].view];
  const struct storage *s = &p->s[w->storage];
  size_t es = stypes[w->st].size;
  if (n > w->count - p->pos)
    ERR(MPE_EINVAL, "read past the end of the tensor");
  if (p->contiguous) {
    int e = fill(p->zf, dst, (uint64_t)n * es);
    zip_int64_t r;
    if (e)
      ERR(MPE_EFORMAT, "storage '%s' %s%s", s->key, ZWHY(p->zf, -(e < 0)));
    p->pos += n;
    if (p->pos == w->count) {   /* read to the member's end so that its CRC is checked */
      unsigned char tmp[4096];
      uint64_t rest = s->zsize - (w->offset + w->count) * es;   /* after the view, in the storage */
      e = skip_bytes(p->zf, rest, tmp, sizeof tmp);
      r = e ? (e < 0 ? -1 : 0) : zip_fread(p->zf, tmp, 1);   /* at the end: nothing more, the CRC checked */
      if (e || r)
        ERR(MPE_EFORMAT, "storage '%s' %s%s", s->key, ZWHY(p->zf, r));
      zip_fclose(p->zf);
      p->zf = NULL;
    }
    return MPE_OK;
  }
  int last = w->ndim - 1;
  const uint64_t *size = p->dims + w->dims, *stride = size + w->ndim;
  for (size_t k = 0; k < n; k++) {
    uint64_t at = w->offset;
    for (int d = 0; d <= last; d++)
      at += p->idx[d] * stride[d];
    memcpy(dst + k * es, p->cache + at * es, es);
    for (int d = last; d >= 0; d--) {   /* next index in C order */
      if (++p->idx[d] < size[d])
        break;
      p->idx[d] = 0;
    }
  }
  p->pos += n;
  return MPE_OK;
}
