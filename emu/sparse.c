/* 2:4 structured sparsity: mpe_prune_2_4 and the compressed form (kept values
   plus the 2-bit indices of PTX mma.sp's metadata). The sparse GEMM is in
   emu/tc_sparse.c. */
#include "config.h"
#include <string.h>
#include "mpemu/convert.h"
#include "mpemu/sparse.h"
#include "mpei.h"
#include "sparse_impl.h"

int mpei_sp_esize(mpe_type t)
{
  switch (t) {
  case MPE_FP32: case MPE_TF32: return 4;
  case MPE_FP16: case MPE_BF16: return 2;
  case MPE_E4M3: case MPE_E5M2: return 1;
  default: return 0;
  }
}

/* The order pruning ranks by: |x| as binary32 bits (monotonic for numbers),
   NaN above every number. */
static uint32_t rank_key(const void *base, mpe_type t, size_t idx)
{
  float x;
  switch (t) {
  case MPE_FP16: x = mpe_fp16_to_fp32(((const uint16_t *)base)[idx]); break;
  case MPE_BF16: x = mpe_bf16_to_fp32(((const uint16_t *)base)[idx]); break;
  case MPE_E4M3: x = mpe_e4m3_to_fp32(((const uint8_t *)base)[idx]); break;
  case MPE_E5M2: x = mpe_e5m2_to_fp32(((const uint8_t *)base)[idx]); break;
  default: x = ((const float *)base)[idx]; break;
  }
  uint32_t a = mpei_f2u(x) & 0x7fffffffu;
  return a > 0x7f800000u ? 0xffffffffu : a;
}

/* ceil(k/4) and ceil(k/16) without forming k + 3 or k + 15 (k up to INT_MAX) */
int mpe_sparse_kept(int k)
{
  return k > 0 ? 2 * (k / 4 + (k % 4 != 0)) : 0;
}

int mpe_sparse_meta_words(int k)
{
  return k > 0 ? k / 16 + (k % 16 != 0) : 0;
}

/* element (i, l) of an m×cols matrix in `layout` with leading dimension ld */
static inline size_t at(int row, int i, int l, int ld)
{
  return row ? (size_t)i * (size_t)ld + (size_t)l : (size_t)i + (size_t)l * (size_t)ld;
}

static int ld_ok(int row, int rows, int cols, int ld)
{
  int need = row ? cols : rows;
  return ld >= (need > 1 ? need : 1);
}

/* The bytes an m×cols matrix of es-byte elements spans from base, as
   [*lo, *hi); an empty matrix spans nothing. */
static void span(const void *base, int row, int m, int cols, int ld, size_t es, uintptr_t *lo, uintptr_t *hi)
{
  *lo = *hi = (uintptr_t)base;
  if (m > 0 && cols > 0)
    *hi += (at(row, m - 1, cols - 1, ld) + 1) * es;
}

/* whether two such spans share a byte */
static int overlap(const void *a, int row, int ma, int ca, int lda, size_t ea, const void *b, int mb, int cb,
                   int ldb, size_t eb)
{
  uintptr_t a0, a1, b0, b1;
  span(a, row, ma, ca, lda, ea, &a0, &a1);
  span(b, row, mb, cb, ldb, eb, &b0, &b1);
  return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
}

static int args_ok(mpe_layout layout, int m, int k, mpe_type t)
{
  return (layout == MPE_ROW_MAJOR || layout == MPE_COL_MAJOR) && m >= 0 && k >= 0 && mpei_sp_esize(t) > 0;
}

/* The arguments of a call between a dense m x k matrix A and its packed form
   (values V, metadata meta): MPE_EINVAL for a bad layout, size, type or
   leading dimension, a NULL array when m and k are not 0, or an output that
   shares memory with another array (packed: V and meta are written, else A). */
static int packed_args(mpe_layout layout, int m, int k, mpe_type type, int lda, int ldv, int ldm, const void *A,
                       const void *V, const uint16_t *meta, int packed)
{
  if (!args_ok(layout, m, k, type))
    return MPE_EINVAL;
  const int row = layout == MPE_ROW_MAJOR, kc = mpe_sparse_kept(k), nw = mpe_sparse_meta_words(k);
  if (!ld_ok(row, m, k, lda) || !ld_ok(row, m, kc, ldv) || !ld_ok(row, m, nw, ldm))
    return MPE_EINVAL;
  if (m == 0 || k == 0)
    return MPE_OK;
  if (!A || !V || !meta)
    return MPE_EINVAL;
  const size_t es = (size_t)mpei_sp_esize(type);
  if (overlap(A, row, m, k, lda, es, V, m, kc, ldv, es) ||
      overlap(A, row, m, k, lda, es, meta, m, nw, ldm, sizeof *meta) ||
      (packed && overlap(V, row, m, kc, ldv, es, meta, m, nw, ldm, sizeof *meta)))
    return MPE_EINVAL;
  return MPE_OK;
}

/* The positions of group g of row i kept by pruning: the two largest keys,
   ties to the lower index (a stable choice over ascending l). */
static void top2(const void *A, mpe_type t, int row, int i, int g, int k, int lda, int *k0, int *k1)
{
  uint32_t key[4];
  for (int j = 0; j < 4; j++) {
    int l = 4 * g + j;
    key[j] = l < k ? rank_key(A, t, at(row, i, l, lda)) : 0;
  }
  int b = 0;
  for (int j = 1; j < 4; j++)
    if (key[j] > key[b])
      b = j;
  int s = b == 0 ? 1 : 0;
  for (int j = 0; j < 4; j++)
    if (j != b && key[j] > key[s])
      s = j;
  *k0 = b < s ? b : s;
  *k1 = b < s ? s : b;
}

int mpe_prune_2_4(mpe_layout layout, int m, int k, const void *A, mpe_type type, int lda, void *P, int ldp)
{
  MPEI_FENV_GUARD();
  if (!args_ok(layout, m, k, type))
    return MPE_EINVAL;
  const int row = layout == MPE_ROW_MAJOR;
  if (!ld_ok(row, m, k, lda) || !ld_ok(row, m, k, ldp))
    return MPE_EINVAL;
  if (m == 0 || k == 0)
    return MPE_OK;
  if (!A || !P)
    return MPE_EINVAL;
  const int es = mpei_sp_esize(type), ng = k / 4 + (k % 4 != 0);
  /* in place only element for element: another stride or a shifted P would
     overwrite elements of A before they are read */
  if (P == A ? ldp != lda : overlap(A, row, m, k, lda, (size_t)es, P, m, k, ldp, (size_t)es))
    return MPE_EINVAL;
  const unsigned char *src = A;
  unsigned char *dst = P;
  for (int i = 0; i < m; i++)
    for (int g = 0; g < ng; g++) {
      int k0, k1;
      top2(A, type, row, i, g, k, lda, &k0, &k1);
      /* every key is read before anything is written: P may be A */
      for (int j = 0; j < 4 && 4 * g + j < k; j++) {
        int l = 4 * g + j;
        unsigned char *d = dst + at(row, i, l, ldp) * (size_t)es;
        if (j == k0 || j == k1)
          memmove(d, src + at(row, i, l, lda) * (size_t)es, (size_t)es);
        else
          memset(d, 0, (size_t)es);
      }
    }
  return MPE_OK;
}

int mpei_sp_is_zero(const void *base, mpe_type t, size_t idx)
{
  return rank_key(base, t, idx) == 0;
}

int mpe_sparse_compress(mpe_layout layout, int m, int k, const void *A, mpe_type type, int lda, void *V,
                        int ldv, uint16_t *meta, int ldm)
{
  MPEI_FENV_GUARD();
  int r = packed_args(layout, m, k, type, lda, ldv, ldm, A, V, meta, 1);
  if (r || m == 0 || k == 0)
    return r;
  const int row = layout == MPE_ROW_MAJOR, nw = mpe_sparse_meta_words(k);
  const int es = mpei_sp_esize(type), ng = k / 4 + (k % 4 != 0);
  /* check the whole matrix first: nothing is written for a matrix that is not 2:4 */
  for (int i = 0; i < m; i++)
    for (int l0 = 0; l0 < k; l0 += 4) {
      int nz = 0;
      for (int l = l0; l < l0 + 4 && l < k; l++)
        nz += !mpei_sp_is_zero(A, type, at(row, i, l, lda));
      if (nz > 2)
        return MPE_EINVAL;
    }
  const unsigned char *src = A;
  unsigned char *val = V;
  for (int i = 0; i < m; i++) {
    for (int w = 0; w < nw; w++)
      meta[at(row, i, w, ldm)] = 0;
    for (int g = 0; g < ng; g++) {
      /* the non-zeros (two at most), then the lowest-index zeros to make two */
      int keep[4] = { 0, 0, 0, 0 }, np = 0, pick[2];
      for (int j = 0; j < 4; j++)
        if (4 * g + j < k && !mpei_sp_is_zero(A, type, at(row, i, 4 * g + j, lda)))
          keep[j] = 1, np++;
      for (int j = 0; j < 4 && np < 2; j++)
        if (!keep[j])
          keep[j] = 1, np++;
      for (int j = 0, s = 0; j < 4; j++)
        if (keep[j])
          pick[s++] = j;
      for (int s = 0; s < 2; s++) {
        int l = 4 * g + pick[s];
        unsigned char *d = val + at(row, i, 2 * g + s, ldv) * (size_t)es;
        if (l < k)
          memcpy(d, src + at(row, i, l, lda) * (size_t)es, (size_t)es);
        else
          memset(d, 0, (size_t)es);
      }
      uint16_t nib = (uint16_t)(pick[0] | pick[1] << 2);
      meta[at(row, i, g / 4, ldm)] |= (uint16_t)(nib << (4 * (g % 4)));
    }
  }
  return MPE_OK;
}

int mpei_sp_index(const void *V, mpe_type type, int row, int m, int k, int ldv, const uint16_t *meta,
                  int ldm, int32_t *kidx)
{
  const int kc = mpe_sparse_kept(k), ng = k / 4 + (k % 4 != 0);
  int bad = 0;
  /* rows in parallel (each writes its own kidx row); a refusal is the same
     whichever row finds it */
#pragma omp parallel if ((long)m * ng > 65536)
  {
    MPEI_FENV_GUARD();
#pragma omp for schedule(static) reduction(|: bad)
    for (int i = 0; i < m; i++)
      for (int g = 0; g < ng && !bad; g++) {
        unsigned nib = (meta[at(row, i, g / 4, ldm)] >> (4 * (g % 4))) & 0xfu;
        int j0 = (int)(nib & 3u), j1 = (int)(nib >> 2);
        if (j0 >= j1) {
          bad = 1;
          break;
        }
        for (int s = 0; s < 2; s++) {
          int l = 4 * g + (s ? j1 : j0);
          int q = 2 * g + s;
          if (l >= k) {
            if (!mpei_sp_is_zero(V, type, at(row, i, q, ldv)))
              bad = 1;
            l = -1;   /* a padding position: no product */
          }
          if (kidx)
            kidx[(size_t)i * kc + q] = l;
        }
      }
  }
  return bad ? MPE_EINVAL : MPE_OK;
}

int mpe_sparse_decompress(mpe_layout layout, int m, int k, const void *V, mpe_type type, int ldv,
                          const uint16_t *meta, int ldm, void *A, int lda)
{
  MPEI_FENV_GUARD();
  int r = packed_args(layout, m, k, type, lda, ldv, ldm, A, V, meta, 0);
  if (r || m == 0 || k == 0)
    return r;
  const int row = layout == MPE_ROW_MAJOR;
  const int es = mpei_sp_esize(type), ng = k / 4 + (k % 4 != 0);
  /* validate everything before writing: a refused call leaves A as it was */
  r = mpei_sp_index(V, type, row, m, k, ldv, meta, ldm, NULL);
  if (r)
    return r;
  const unsigned char *val = V;
  unsigned char *dst = A;
  for (int i = 0; i < m; i++)
    for (int g = 0; g < ng; g++) {
      unsigned nib = (meta[at(row, i, g / 4, ldm)] >> (4 * (g % 4))) & 0xfu;
      int j0 = (int)(nib & 3u), j1 = (int)(nib >> 2);
      for (int j = 0; j < 4 && 4 * g + j < k; j++) {
        unsigned char *d = dst + at(row, i, 4 * g + j, lda) * (size_t)es;
        if (j == j0 || j == j1)
          memcpy(d, val + at(row, i, 2 * g + (j == j1), ldv) * (size_t)es, (size_t)es);
        else
          memset(d, 0, (size_t)es);
      }
    }
  return MPE_OK;
}
