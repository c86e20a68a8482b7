/* 2:4 structured sparsity: mpe_prune_2_4's rules (ties, zeros, NaN), the
   compressed form (hand vectors, round trips, refusals), and mpe_gemm_sp
   against mpe_gemm on the decompressed matrix (bit for bit, kept_block = L/2)
   and against the exact reference of the test-support library over the kept
   products (the default grouping), on boundary-case data, for every built-in
   model and input type, SIMD levels 0 and 1, both layouts and odd shapes. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testsupport.h"
#include "boundary.h"

static const char *const names[] = { "v100", "t4", "a100", "ada", "h100", "b200", "exact", "fma-chain" };
static const mpe_type types[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2 };
#define NNAME 8
#define NTYPE 5
static const mpe_type all_types[] = { MPE_FP32, MPE_TF32, MPE_FP16, MPE_BF16, MPE_E4M3, MPE_E5M2 };
#define NALL 6

static size_t esize(mpe_type t)
{
  return t == MPE_TF32 || t == MPE_FP32 ? 4 : t == MPE_FP16 || t == MPE_BF16 ? 2 : 1;
}

/* store v (exact in type t, or NaN/inf) at element i */
static void put(void *arr, mpe_type t, size_t i, double v)
{
  switch (t) {
  case MPE_FP16: ((uint16_t *)arr)[i] = mpe_fp64_to_fp16(v, MPE_RNE); break;
  case MPE_BF16: ((uint16_t *)arr)[i] = mpe_fp64_to_bf16(v, MPE_RNE); break;
  case MPE_E4M3: ((uint8_t *)arr)[i] = mpe_fp32_to_e4m3((float)v, MPE_RNE, 0); break;
  case MPE_E5M2: ((uint8_t *)arr)[i] = mpe_fp32_to_e5m2((float)v, MPE_RNE, 0); break;
  default: ((float *)arr)[i] = (float)v; break;
  }
}

static double get(const void *arr, mpe_type t, size_t i)
{
  switch (t) {
  case MPE_FP16: return mpe_fp16_to_fp32(((const uint16_t *)arr)[i]);
  case MPE_BF16: return mpe_bf16_to_fp32(((const uint16_t *)arr)[i]);
  case MPE_E4M3: return mpe_e4m3_to_fp32(((const uint8_t *)arr)[i]);
  case MPE_E5M2: return mpe_e5m2_to_fp32(((const uint8_t *)arr)[i]);
  default: return ((const float *)arr)[i];
  }
}

static uint32_t bits(const void *arr, mpe_type t, size_t i)
{
  switch (esize(t)) {
  case 4: return ((const uint32_t *)arr)[i];
  case 2: return ((const uint16_t *)arr)[i];
  default: return ((const uint8_t *)arr)[i];
  }
}

static size_t at(mpe_layout lay, int i, int l, int ld)
{
  return lay == MPE_ROW_MAJOR ? (size_t)i * ld + l : (size_t)i + (size_t)l * ld;
}

/* ------------------------------------------------------------------ prune */

/* The rule written out independently: in each group, rank by |x| (NaN above
   everything), ties to the lower index; keep the first two. */
static int ranks_before(double x, int ix, double y, int iy)
{
  int xn = isnan(x), yn = isnan(y);
  if (xn != yn)
    return xn;
  if (!xn && fabs(x) != fabs(y))
    return fabs(x) > fabs(y);
  return ix < iy;
}

static void ref_keep(const double *g, int n, int keep[4])
{
  for (int j = 0; j < 4; j++) {
    int ahead = 0;   /* elements that rank before j */
    for (int o = 0; o < 4; o++)
      if (o != j && ranks_before(o < n ? g[o] : 0.0, o, j < n ? g[j] : 0.0, j))
        ahead++;
    keep[j] = ahead < 2;
  }
}

START_TEST(test_prune_hand)
{
  /* FP32, one row of groups: ties, zeros, NaN, inf, -0 */
  const float nan = NAN, inf = INFINITY;
  const float in[] = { 1, 1, 1, 1,   0, 0, 0, 0,   -3, 2, 3, 1,   1, nan, 5, 2,
                       nan, nan, nan, 9,   -0.0f, 0, 0, -0.0f,   2, -inf, inf, 7,   0, 0, 0, 4,
                       6, 1, 6 };
  const int k = (int)(sizeof in / sizeof in[0]);
  static const int kept[][4] = { { 1, 1, 0, 0 }, { 1, 1, 0, 0 }, { 1, 0, 1, 0 }, { 0, 1, 1, 0 },
                                 { 1, 1, 0, 0 }, { 1, 1, 0, 0 }, { 0, 1, 1, 0 }, { 1, 0, 0, 1 },
                                 { 1, 0, 1, 0 } };
  float out[64];
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 1, k, in, MPE_FP32, k, out, k), 0);
  for (int l = 0; l < k; l++) {
    int want_kept = kept[l / 4][l % 4];
    if (want_kept)
      ck_assert_msg(ts_f2u(out[l]) == ts_f2u(in[l]), "element %d: kept value changed", l);
    else
      ck_assert_msg(ts_f2u(out[l]) == 0, "element %d: dropped but %a", l, (double)out[l]);
  }
  /* in place, column-major, a 3-row matrix with the same rows */
  float a3[3 * 35];
  for (int i = 0; i < 3; i++)
    for (int l = 0; l < k; l++)
      a3[i + 3 * l] = in[l];
  ck_assert_int_eq(mpe_prune_2_4(MPE_COL_MAJOR, 3, k, a3, MPE_FP32, 3, a3, 3), 0);
  for (int i = 0; i < 3; i++)
    for (int l = 0; l < k; l++)
      ck_assert_uint_eq(ts_f2u(a3[i + 3 * l]), ts_f2u(out[l]));
}
END_TEST

/* every type, both layouts, odd k, against ref_keep on boundary data with specials */
START_TEST(test_prune_types)
{
  mpe_type t = all_types[_i];
  const mpe_format *f = mpe_format_of(t == MPE_FP32 ? MPE_FP32 : t);
  long groups = 0;
  for (int li = 0; li < 2; li++) {
    mpe_layout lay = li ? MPE_COL_MAJOR : MPE_ROW_MAJOR;
    const int ks[] = { 1, 2, 3, 4, 7, 13, 64 };
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
      int m = 9, k = ks[ki], pad = 2;
      int ld = (lay == MPE_ROW_MAJOR ? k : m) + pad;
      size_t n = (size_t)ld * (lay == MPE_ROW_MAJOR ? m : k);
      void *A = calloc(n, esize(t)), *P = calloc(n, esize(t));
      double *x = malloc(sizeof(double) * (size_t)k);
      ts_bgen g;
      ts_bgen_init(&g, f, NULL, ts_seed() + ki + 100 * (uint64_t)_i);
      for (int i = 0; i < m; i++) {
        ts_bgen_vector(&g, x, (size_t)k, 1);
        if (i % 3 == 1)   /* ties: equal magnitudes of both signs */
          for (int l = 0; l < k; l++)
            x[l] = l % 2 ? -fabs(x[0]) : fabs(x[0]);
        for (int l = 0; l < k; l++)
          put(A, t, at(lay, i, l, ld), x[l]);
      }
      ck_assert_int_eq(mpe_prune_2_4(lay, m, k, A, t, ld, P, ld), 0);
      for (int i = 0; i < m; i++)
        for (int l0 = 0; l0 < k; l0 += 4) {
          double grp[4];
          int nn = k - l0 < 4 ? k - l0 : 4, keep[4];
          for (int j = 0; j < nn; j++)
            grp[j] = get(A, t, at(lay, i, l0 + j, ld));
          ref_keep(grp, nn, keep);
          for (int j = 0; j < nn; j++) {
            size_t e = at(lay, i, l0 + j, ld);
            uint32_t want = keep[j] ? bits(A, t, e) : 0;
            ck_assert_msg(bits(P, t, e) == want, "%s row %d element %d: %x, want %x", mpe_type_name(t), i,
                          l0 + j, bits(P, t, e), want);
          }
          groups++;
        }
      free(A); free(P); free(x);
    }
  }
  printf("check_sparse: prune %s: %ld groups, 0 wrong\n", mpe_type_name(t), groups);
}
END_TEST

/* ------------------------------------------------------------------ compressed form */

START_TEST(test_compress_hand)
{
  /* row 0: 0 5 0 7 | 1 0 0 0 | 0 0 0 0 | 0 0 -2 0 | 3   (k = 17: a padded last group)
     row 1: 4 0 0 8 | 0 0 9 1 | ...zeros...       | 6 */
  float A[2 * 17] = { 0, 5, 0, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, -2, 0, 3,
                      4, 0, 0, 8, 0, 0, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 6 };
  ck_assert_int_eq(mpe_sparse_kept(17), 10);
  ck_assert_int_eq(mpe_sparse_meta_words(17), 2);
  ck_assert_int_eq(mpe_sparse_kept(0), 0);
  ck_assert_int_eq(mpe_sparse_meta_words(16), 1);
  float V[2 * 10];
  uint16_t meta[2 * 2];
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 17, A, MPE_FP32, 17, V, 10, meta, 2), 0);
  const float v0[10] = { 5, 7, 1, 0, 0, 0, 0, -2, 3, 0 };
  for (int q = 0; q < 10; q++)
    ck_assert_msg(ts_f2u(V[q]) == ts_f2u(v0[q]), "V[0][%d] = %a", q, (double)V[q]);
  /* nibbles: (1,3) = 0xd, (0,1) = 0x4, (0,1) = 0x4, (0,2) = 0x8 | group 4: (0,1) = 0x4 */
  ck_assert_uint_eq(meta[0], 0x844d);
  ck_assert_uint_eq(meta[1], 0x0004);
  const float v1[10] = { 4, 8, 9, 1, 0, 0, 0, 0, 6, 0 };
  for (int q = 0; q < 10; q++)
    ck_assert(ts_f2u(V[10 + q]) == ts_f2u(v1[q]));
  /* (0,3) = 0xc, (2,3) = 0xe, 0x4, 0x4 */
  ck_assert_uint_eq(meta[2], 0x44ec);
  ck_assert_uint_eq(meta[3], 0x0004);
  float D[2 * 17];
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 2, 17, V, MPE_FP32, 10, meta, 2, D, 17), 0);
  for (int l = 0; l < 34; l++)
    ck_assert(ts_f2u(D[l]) == ts_f2u(A[l]));
}
END_TEST

/* prune → compress → decompress gives the pruned matrix back, every type,
   both layouts, odd shapes, padded leading dimensions */
START_TEST(test_roundtrip)
{
  mpe_type t = all_types[_i];
  long elems = 0;
  for (int li = 0; li < 2; li++) {
    mpe_layout lay = li ? MPE_COL_MAJOR : MPE_ROW_MAJOR;
    const int ks[] = { 1, 2, 3, 5, 16, 17, 61 };
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
      int m = 11, k = ks[ki], kc = mpe_sparse_kept(k), nw = mpe_sparse_meta_words(k);
      int lda = (li ? m : k) + 3, ldv = (li ? m : kc) + 1, ldm = (li ? m : nw) + 2;
      size_t na = (size_t)lda * (li ? k : m), nv = (size_t)ldv * (li ? kc : m), nm = (size_t)ldm * (li ? nw : m);
      void *A = calloc(na, esize(t)), *P = calloc(na, esize(t)), *D = calloc(na, esize(t));
      void *V = calloc(nv, esize(t));
      uint16_t *meta = calloc(nm, 2);
      ts_bgen g;
      ts_bgen_init(&g, mpe_format_of(t), NULL, ts_seed() ^ (ki * 77 + (uint64_t)_i));
      for (int i = 0; i < m; i++)
        for (int l = 0; l < k; l++)
          put(A, t, at(lay, i, l, lda), i % 4 == 3 && l % 3 ? 0.0 : ts_bgen_next(&g));
      ck_assert_int_eq(mpe_prune_2_4(lay, m, k, A, t, lda, P, lda), 0);
      ck_assert_int_eq(mpe_sparse_compress(lay, m, k, P, t, lda, V, ldv, meta, ldm), 0);
      for (int i = 0; i < m; i++)
        for (int g4 = 0; g4 < (k + 3) / 4; g4++) {
          unsigned nib = (meta[at(lay, i, g4 / 4, ldm)] >> (4 * (g4 % 4))) & 15u;
          ck_assert_msg((nib & 3) < (nib >> 2), "row %d group %d: nibble %x", i, g4, nib);
          for (int s = 0; s < 2; s++) {   /* the kept value is the pruned matrix's element */
            int l = 4 * g4 + (int)(s ? nib >> 2 : nib & 3);
            uint32_t want = l < k ? bits(P, t, at(lay, i, l, lda)) : 0;
            ck_assert_uint_eq(bits(V, t, at(lay, i, 2 * g4 + s, ldv)), want);
          }
        }
      ck_assert_int_eq(mpe_sparse_decompress(lay, m, k, V, t, ldv, meta, ldm, D, lda), 0);
      for (int i = 0; i < m; i++)
        for (int l = 0; l < k; l++, elems++)
          ck_assert_msg(bits(D, t, at(lay, i, l, lda)) == bits(P, t, at(lay, i, l, lda)),
                        "%s layout %d k %d: (%d,%d)", mpe_type_name(t), li, k, i, l);
      free(A); free(P); free(D); free(V); free(meta);
    }
  }
  printf("check_sparse: round trip %s: %ld elements, 0 wrong\n", mpe_type_name(t), elems);
}
END_TEST

START_TEST(test_refusals)
{
  float A[8] = { 1, 2, 3, 0, 0, 0, 0, 0 };
  float V[4] = { 9, 9, 9, 9 }, D[8];
  uint16_t meta[1] = { 0xabcd };
  /* three non-zeros in a group: refused, nothing written */
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 1, 8, A, MPE_FP32, 8, V, 4, meta, 1), MPE_EINVAL);
  ck_assert(V[0] == 9 && meta[0] == 0xabcd);
  A[2] = NAN;   /* a NaN is a non-zero */
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 1, 8, A, MPE_FP32, 8, V, 4, meta, 1), MPE_EINVAL);
  A[2] = -0.0f;   /* -0 is a zero */
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 1, 8, A, MPE_FP32, 8, V, 4, meta, 1), 0);
  /* the same in a column-major FP16 matrix, second row */
  uint16_t h[2 * 4] = { 0 }, hv[2 * 2], hm[2];
  h[1 + 2 * 0] = h[1 + 2 * 1] = h[1 + 2 * 3] = 0x3c00;
  ck_assert_int_eq(mpe_sparse_compress(MPE_COL_MAJOR, 2, 4, h, MPE_FP16, 2, hv, 2, hm, 2), MPE_EINVAL);
  /* metadata that is not two increasing indices */
  const uint16_t badnib[] = { 0x0, 0x5, 0xa, 0xf, 0x1, 0x6, 0xb };
  for (size_t b = 0; b < sizeof badnib / sizeof badnib[0]; b++) {
    uint16_t mm = (uint16_t)(0x44 | badnib[b] << 8);   /* groups 0, 1 fine, group 2 bad (k = 12) */
    float v6[6] = { 1, 2, 3, 4, 5, 6 };
    ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 12, v6, MPE_FP32, 6, &mm, 1, (float[12]){ 0 }, 12),
                     MPE_EINVAL);
    float B[12 * 2] = { 0 }, C[2] = { 0 };
    ck_assert_int_eq(mpe_gemm_sp(mpe_tc_model_get("h100", MPE_FP16), 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 1, 2, 12,
                                 1.0f, v6, MPE_FP32, 6, &mm, 1, B, MPE_FP32, 2, 0.0f, C, MPE_FP32, 2),
                     MPE_EINVAL);
  }
  /* a non-zero kept value at a padding index (k = 6: group 1 holds l = 4, 5 only) */
  float v4[4] = { 1, 2, 3, 4 };
  uint16_t mpad = 0x44;              /* group 1: (0,1), fine */
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 6, v4, MPE_FP32, 4, &mpad, 1, D, 6), 0);
  mpad = 0x84;                       /* group 1: (0,2): l = 6 is past k, its value 4 is not zero */
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 6, v4, MPE_FP32, 4, &mpad, 1, D, 6), MPE_EINVAL);
  v4[3] = 0;
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 6, v4, MPE_FP32, 4, &mpad, 1, D, 6), 0);
}
END_TEST

/* outputs that overlap inputs other than element for element are refused
   with nothing written: in place with another stride, shifted by one element,
   compressed values or metadata inside the dense matrix; sizes near INT_MAX */
START_TEST(test_aliasing)
{
  /* pruning in place, element for element, is allowed */
  float A[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 3, 4, A, MPE_FP32, 4, A, 4), 0);
  const float pruned[12] = { 0, 0, 3, 4, 0, 0, 7, 8, 0, 0, 11, 12 };
  ck_assert(memcmp(A, pruned, sizeof A) == 0);
  /* in place with ldp != lda: row 1's output would land on row 2 before it is read */
  float W[24], keep[24];
  for (int i = 0; i < 24; i++)
    W[i] = keep[i] = (float)(i + 1);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 3, 4, W, MPE_FP32, 4, W, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_COL_MAJOR, 4, 3, W, MPE_FP32, 4, W, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 3, 4, W, MPE_FP32, 4, W + 1, 4), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 3, 4, W + 4, MPE_FP32, 4, W, 4), MPE_EINVAL);
  ck_assert(memcmp(W, keep, sizeof W) == 0);
  /* neighbours that touch without sharing a byte are fine */
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 3, 4, W, MPE_FP32, 4, W + 12, 4), 0);
  /* decompress into the buffer holding V (kept 5 at l = 1, 7 at l = 3): refused, not zeros */
  float buf[8] = { 5, 7, 0, 0, 0, 0, 0, 0 };
  uint16_t meta = 0xd, mbuf[8] = { 0xd };
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 4, buf, MPE_FP32, 2, &meta, 1, buf, 4), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 4, buf + 2, MPE_FP32, 2, &meta, 1, buf, 4), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 4, buf, MPE_FP32, 2, (uint16_t *)(buf + 5), 1, buf + 4, 4),
                   MPE_EINVAL);
  ck_assert(buf[0] == 5 && buf[1] == 7 && buf[4] == 0);
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 1, 4, buf, MPE_FP32, 2, mbuf, 1, buf + 4, 4), 0);
  ck_assert(buf[4] == 0 && buf[5] == 5 && buf[6] == 0 && buf[7] == 7);
  /* compress with V or meta inside A, or meta inside V */
  float C[8] = { 1, 0, 2, 0, 0, 3, 0, 4 }, Ck[8], V[4];
  uint16_t m2[2];
  memcpy(Ck, C, sizeof C);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 4, C, MPE_FP32, 4, C, 2, m2, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 4, C, MPE_FP32, 4, V, 2, (uint16_t *)(C + 7), 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 4, C, MPE_FP32, 4, V, 2, (uint16_t *)(V + 3), 1), MPE_EINVAL);
  ck_assert(memcmp(C, Ck, sizeof C) == 0);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 4, C, MPE_FP32, 4, V, 2, m2, 1), 0);
  ck_assert(V[0] == 1 && V[1] == 2 && V[2] == 3 && V[3] == 4 && m2[0] == 0x8 && m2[1] == 0xd);
  /* the sizes of the compressed form for k near INT_MAX: no int overflow */
  ck_assert_int_eq(mpe_sparse_kept(2147483647), 1073741824);
  ck_assert_int_eq(mpe_sparse_kept(2147483644), 1073741822);
  ck_assert_int_eq(mpe_sparse_meta_words(2147483647), 134217728);
  ck_assert_int_eq(mpe_sparse_meta_words(2147483632), 134217727);
  ck_assert_int_eq(mpe_sparse_kept(5), 4);
  ck_assert_int_eq(mpe_sparse_meta_words(17), 2);
}
END_TEST

START_TEST(test_errors)
{
  float A[16] = { 0 }, V[8], B[16] = { 0 }, C[16];
  uint16_t meta[4] = { 0x4444, 0x4444, 0x4444, 0x4444 };
  const mpe_tc_model *h = mpe_tc_model_get("h100", MPE_FP16);
  /* k near INT_MAX: refused before its padding overflows an int or a buffer is read */
  ck_assert_int_eq(mpe_gemm_sp(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 1, 1, INT_MAX - 3, 1.0f, V, MPE_FP32, INT_MAX / 2,
                               meta, INT_MAX / 16 + 1, B, MPE_FP32, 1, 0.0f, C, MPE_FP32, 1), MPE_EINVAL);
  /* prune */
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 2, 8, NULL, MPE_FP32, 8, A, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 2, 8, A, MPE_FP32, 8, NULL, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 2, 8, A, MPE_FP64, 8, A, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 2, 8, A, MPE_FP32, 7, A, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_COL_MAJOR, 2, 8, A, MPE_FP32, 1, A, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4((mpe_layout)7, 2, 8, A, MPE_FP32, 8, A, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, -1, 8, A, MPE_FP32, 8, A, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, 0, 8, NULL, MPE_FP32, 8, NULL, 8), 0);
  /* compress / decompress */
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 8, A, MPE_FP32, 8, V, 3, meta, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 8, A, MPE_FP32, 8, V, 4, meta, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 8, A, MPE_FP32, 8, V, 4, NULL, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_compress(MPE_COL_MAJOR, 2, 8, A, MPE_FP32, 2, V, 1, meta, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, 2, 8, A, MPE_FP64, 8, V, 4, meta, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 2, 8, NULL, MPE_FP32, 4, meta, 1, A, 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 2, 8, V, MPE_FP32, 4, meta, 1, A, 7), MPE_EINVAL);
  ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, 2, 8, V, (mpe_type)99, 4, meta, 1, A, 8), MPE_EINVAL);
  /* gemm_sp */
  for (int q = 0; q < 8; q++)
    V[q] = 1;
#define SP(model, kb, lay, tb, m, n, k, v, at, ldv, mt, ldm, b, bt, ldb, c, ct, ldc) \
  mpe_gemm_sp(model, kb, lay, tb, m, n, k, 1.0f, v, at, ldv, mt, ldm, b, bt, ldb, 0.0f, c, ct, ldc)
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), 0);
  ck_assert_int_eq(SP(NULL, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, -1, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 1025, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, (mpe_layout)3, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, (mpe_trans)5, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_BF16, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 3, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 0, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, NULL, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, NULL, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 7, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_COL_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 1, meta, 2, B, MPE_FP32, 8, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, NULL, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_BF16, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(mpe_tc_model_get("h100", MPE_TF32), 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4,
                      meta, 1, B, MPE_FP32, 2, C, MPE_FP16, 2), MPE_EUNSUP);
  /* block-scaled models need scales (mpe_gemm_scaled); a custom model with B in
     a format of its own (in_b) would read B against the wrong format */
  ck_assert_int_eq(SP(mpe_tc_model_get("b200:mxf8f6f4", MPE_E4M3), 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V,
                      MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(mpe_tc_model_get("b200:mxf4", MPE_E2M1), 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V,
                      MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  {
    mpe_tc_params p;
    mpe_tc_model *cm;
    ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100", MPE_E4M3), &p), 0);
    p.in_b = MPE_E5M2;
    ck_assert_int_eq(mpe_tc_model_custom(&cm, &p), 0);
    ck_assert_int_eq(SP(cm, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C,
                        MPE_FP32, 2), MPE_EINVAL);
    mpe_tc_model_free(cm);
  }
  /* a grouping whose exact block sum would not fit the engine's int64 */
  mpe_tc_params p;
  mpe_tc_model *wide;
  mpe_tc_model_params(h, &p);
  p.align_bits = 52;
  ck_assert_int_eq(mpe_tc_model_custom(&wide, &p), 0);
  ck_assert_int_eq(SP(wide, 1024, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(SP(wide, 8, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 8, V, MPE_FP32, 4, meta, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), 0);
  mpe_tc_model_free(wide);
  /* empty shapes */
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 0, 2, 8, NULL, MPE_FP32, 4, NULL, 1, B, MPE_FP32, 2, C, MPE_FP32, 2), 0);
  ck_assert_int_eq(SP(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 2, 2, 0, NULL, MPE_FP32, 1, NULL, 1, NULL, MPE_FP32, 2, C, MPE_FP32, 2), 0);
  ck_assert(C[0] == 0 && C[3] == 0);
#undef SP
}
END_TEST

/* ------------------------------------------------------------------ sparse GEMM */

/* zero_sign: outputs where only the sign of a zero differs (fma-chain against
   the dense chain, which also runs fmaf(+0, b, d) at the dropped positions and
   so turns a -0 from an underflowed product into +0) */
typedef struct { long outputs, wrong, zero_sign; } tally;

/* One case: logical pruned A (m×K) and B (K×n) as doubles of the input format. */
typedef struct {
  int m, n, K;
  double *A, *B;
} spcase;

static void fill(spcase *cs, mpe_type in, int window, int b_specials, uint64_t seed)
{
  ts_bgen g;
  ts_bgen_init(&g, mpe_format_of(in), NULL, seed);
  if (window)
    ts_bgen_window(&g, -40, 60);
  g.specials = 0;
  for (int i = 0; i < cs->m; i++)
    ts_bgen_vector(&g, cs->A + (size_t)i * cs->K, (size_t)cs->K, 1);
  for (int j = 0; j < cs->n; j++)
    ts_bgen_vector(&g, cs->B + j, (size_t)cs->K, (size_t)cs->n);
  /* prune A by the documented rule (ref_keep) */
  for (int i = 0; i < cs->m; i++)
    for (int l0 = 0; l0 < cs->K; l0 += 4) {
      double *grp = cs->A + (size_t)i * cs->K + l0;
      int nn = cs->K - l0 < 4 ? cs->K - l0 : 4, keep[4];
      ref_keep(grp, nn, keep);
      for (int j = 0; j < nn; j++)
        if (!keep[j])
          grp[j] = 0.0;
    }
  if (cs->m > 2 && cs->n > 2 && cs->K > 4) {
    uint64_t r = ts_rand64(&g.state);
    int inf_ok = mpe_format_has_inf(mpe_format_of(in));
    /* a kept NaN/inf in the last row of A */
    double *row = cs->A + (size_t)(cs->m - 1) * cs->K;
    for (int l = 0; l < cs->K; l++)
      if (row[l] != 0) {
        row[l] = inf_ok && r % 2 ? -INFINITY : NAN;
        break;
      }
    if (b_specials)   /* inf/NaN in B's last column, also at dropped positions */
      for (int l = 0; l < cs->K; l += 3)
        cs->B[(size_t)l * cs->n + cs->n - 1] = inf_ok && l % 2 ? INFINITY : NAN;
  }
}

static uint32_t want_bits(mpe_type out, double v)
{
  if (isnan(v))
    return out == MPE_FP16 ? 0x7fff : 0x7fffffffu;
  return out == MPE_FP16 ? mpe_fp64_to_fp16(v, MPE_RNE) : ts_f2u((float)v);
}

static uint32_t got_bits(mpe_type out, const void *C, size_t i)
{
  return out == MPE_FP16 ? ((const uint16_t *)C)[i] : ((const uint32_t *)C)[i];
}

static int model_is_fma(const mpe_tc_model *m)
{
  mpe_tc_params p;
  mpe_tc_model_params(m, &p);
  return p.kind == MPE_TC_FMA_CHAIN;
}

/* Store the case in layout lay (B op'd by tb), compress A, run mpe_gemm_sp with
   kept_block kb, and compare every output with want (m×n) when want is given,
   else with mpe_gemm on the decompressed A. */
static void run_case(const mpe_tc_model *model, int kb, const spcase *cs, mpe_type it, mpe_type out, mpe_layout lay,
                     mpe_trans tb, const double *want, tally *t, const char *ctx)
{
  const int m = cs->m, n = cs->n, K = cs->K, kc = mpe_sparse_kept(K), nw = mpe_sparse_meta_words(K);
  const int row = lay == MPE_ROW_MAJOR, pad = 2;
  const int lda = (row ? K : m) + pad, ldv = (row ? kc : m) + pad, ldm = (row ? nw : m) + 1;
  const int b_rows_fast = row == (tb == MPE_NO_TRANS);   /* (l, j) at l*ldb + j */
  const int ldb = (b_rows_fast ? n : K) + pad, ldc = (row ? n : m) + pad;
  const size_t es = esize(it);
  void *A = calloc((size_t)lda * (row ? m : K) + 1, es), *V = calloc((size_t)ldv * (row ? m : kc) + 1, es);
  void *B = calloc((size_t)ldb * (b_rows_fast ? K : n) + 1, es);
  uint16_t *meta = calloc((size_t)ldm * (row ? m : nw) + 1, 2);
  void *C = calloc((size_t)ldc * (row ? m : n) + 1, 4), *D = calloc((size_t)ldc * (row ? m : n) + 1, 4);
  ck_assert(A && V && B && meta && C && D);
  for (int i = 0; i < m; i++)
    for (int l = 0; l < K; l++)
      put(A, it, at(lay, i, l, lda), cs->A[(size_t)i * K + l]);
  for (int l = 0; l < K; l++)
    for (int j = 0; j < n; j++)
      put(B, it, b_rows_fast ? (size_t)l * ldb + j : (size_t)j * ldb + l, cs->B[(size_t)l * n + j]);
  ck_assert_int_eq(mpe_sparse_compress(lay, m, K, A, it, lda, V, ldv, meta, ldm), 0);
  int rc = mpe_gemm_sp(model, kb, lay, tb, m, n, K, 1.0f, V, it, ldv, meta, ldm, B, it, ldb, 0.0f, C, out, ldc);
  ck_assert_msg(rc == 0, "%s: mpe_gemm_sp returned %d", ctx, rc);
  if (!want) {
    /* the dense model on the decompressed matrix */
    void *A2 = calloc((size_t)lda * (row ? m : K) + 1, es);
    ck_assert_int_eq(mpe_sparse_decompress(lay, m, K, V, it, ldv, meta, ldm, A2, lda), 0);
    rc = mpe_gemm(model, lay, MPE_NO_TRANS, tb, m, n, K, 1.0f, A2, it, lda, B, it, ldb, 0.0f, D, out, ldc);
    ck_assert_int_eq(rc, 0);
    free(A2);
  }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      size_t ci = row ? (size_t)i * ldc + j : (size_t)j * ldc + i;
      uint32_t g = got_bits(out, C, ci), w = want ? want_bits(out, want[(size_t)i * n + j]) : got_bits(out, D, ci);
      t->outputs++;
      uint32_t mag = out == MPE_FP16 ? 0x7fffu : 0x7fffffffu;
      if (!want && model_is_fma(model) && g != w && (g & mag) == 0 && (w & mag) == 0) {
        t->zero_sign++;
        continue;
      }
      if (g != w) {
        if (t->wrong++ < 5)
          fprintf(stderr, "WRONG %s: output (%d,%d) got %08x want %08x\n", ctx, i, j, g, w);
      }
    }
  free(A); free(V); free(B); free(meta); free(C); free(D);
}

/* the exact reference over the kept products, grouping kb (from the pages:
   ts_tc_oracle with the model's parameters and block = kb) */
static void oracle(const mpe_tc_params *p0, int kb, const spcase *cs, mpe_type out, double *want)
{
  mpe_tc_params p = *p0;
  if (p.kind == MPE_TC_BLOCK)
    p.block = kb;
  const int K = cs->K, kc = mpe_sparse_kept(K);
  double *a = malloc(sizeof(double) * (size_t)(kc + 1)), *b = malloc(sizeof(double) * (size_t)(kc + 1));
  for (int i = 0; i < cs->m; i++)
    for (int j = 0; j < cs->n; j++) {
      /* kept positions exactly as compress picks them: non-zeros, then the lowest-index zeros */
      int q = 0;
      for (int l0 = 0; l0 < K; l0 += 4) {
        int keep[4] = { 0 }, np = 0;
        for (int s = 0; s < 4; s++)
          if (l0 + s < K && cs->A[(size_t)i * K + l0 + s] != 0)
            keep[s] = 1, np++;
        for (int s = 0; s < 4 && np < 2; s++)
          if (!keep[s])
            keep[s] = 1, np++;
        for (int s = 0; s < 4; s++)
          if (keep[s]) {
            int l = l0 + s;
            a[q] = l < K ? cs->A[(size_t)i * K + l] : 0.0;
            b[q] = l < K ? cs->B[(size_t)l * cs->n + j] : 0.0;
            q++;
          }
      }
      want[(size_t)i * cs->n + j] = ts_tc_oracle(&p, kc, a, 1, b, 1, 0.0, out);
    }
  free(a); free(b);
}

static const struct { int m, n, K; } shapes[] = { { 13, 21, 72 }, { 9, 35, 37 }, { 6, 17, 130 } };
#define NSHAPE 3

/* every model × input type: kept_block = L/2 against the dense model (bits) */
START_TEST(test_gemm_sp_dense)
{
  const char *name = names[_i / NTYPE];
  mpe_type in = types[_i % NTYPE];
  const mpe_tc_model *model = mpe_tc_model_get(name, in);
  if (!model)
    return;
  mpe_tc_params p;
  mpe_tc_model_params(model, &p);
  ck_assert(p.kind != MPE_TC_BLOCK || p.block % 4 == 0);
  const int kb = p.kind == MPE_TC_BLOCK ? p.block / 2 : 0;
  tally t = { 0, 0, 0 };
  for (int si = 0; si < NSHAPE; si++) {
    spcase cs = { shapes[si].m, shapes[si].n, shapes[si].K, NULL, NULL };
    cs.A = malloc(sizeof(double) * (size_t)cs.m * cs.K);
    cs.B = malloc(sizeof(double) * (size_t)cs.K * cs.n);
    for (int window = 0; window < 2; window++) {
      fill(&cs, in, window, 0, ts_seed() + 1000 * (uint64_t)_i + 10 * (uint64_t)si + (uint64_t)window);
      for (int lvl = 0; lvl < 3; lvl++) {
        if (mpe_simd_level_set(lvl) != lvl)
          continue;
        for (int form = 0; form < 4; form++) {
          mpe_layout lay = form % 2 ? MPE_COL_MAJOR : MPE_ROW_MAJOR;
          mpe_trans tb = form >= 2 ? MPE_TRANS : MPE_NO_TRANS;
          mpe_type out = (form == 1 && !(in == MPE_TF32 && p.kind == MPE_TC_BLOCK)) ? MPE_FP16 : MPE_FP32;
          mpe_type it = form == 3 ? MPE_FP32 : in;
          char ctx[160];
          snprintf(ctx, sizeof ctx, "%s %s shape %d window %d level %d form %d kept_block %d", name,
                   mpe_type_name(in), si, window, lvl, form, kb);
          run_case(model, kb, &cs, it, out, lay, tb, NULL, &t, ctx);
        }
      }
      mpe_simd_level_set(-1);
    }
    free(cs.A); free(cs.B);
  }
  printf("check_sparse: %s %s, kept_block %d vs mpe_gemm on the decompressed A: %ld outputs, %ld wrong%s\n", name,
         mpe_type_name(in), kb, t.outputs, t.wrong, p.kind == MPE_TC_FMA_CHAIN ? " (fma-chain: bits compared" : "");
  if (p.kind == MPE_TC_FMA_CHAIN)
    printf("check_sparse:   except %ld zeros whose sign differs, as mpe_gemm_sp(3) documents)\n", t.zero_sign);
  ck_assert_int_eq(t.wrong, 0);
}
END_TEST

/* every model × input type: the default grouping (L kept products per block)
   and one more against the exact reference; B with inf/NaN at dropped positions */
START_TEST(test_gemm_sp_oracle)
{
  const char *name = names[_i / NTYPE];
  mpe_type in = types[_i % NTYPE];
  const mpe_tc_model *model = mpe_tc_model_get(name, in);
  if (!model)
    return;
  mpe_tc_params p;
  mpe_tc_model_params(model, &p);
  const int kbs[2] = { 0, p.kind == MPE_TC_BLOCK ? p.block / 2 + 1 : 0 };
  tally t = { 0, 0, 0 };
  long differ = 0;
  for (int si = 0; si < NSHAPE; si++) {
    spcase cs = { shapes[si].m, shapes[si].n, shapes[si].K, NULL, NULL };
    cs.A = malloc(sizeof(double) * (size_t)cs.m * cs.K);
    cs.B = malloc(sizeof(double) * (size_t)cs.K * cs.n);
    double *want = malloc(sizeof(double) * (size_t)cs.m * cs.n), *dense = malloc(sizeof(double) * (size_t)cs.m * cs.n);
    for (int window = 0; window < 2; window++) {
      fill(&cs, in, window, 1, ts_seed() + 7000 * (uint64_t)_i + 10 * (uint64_t)si + (uint64_t)window);
      for (int ki = 0; ki < 2; ki++) {
        int kb = kbs[ki];
        for (int oi = 0; oi < 2; oi++) {
          mpe_type out = oi ? MPE_FP16 : MPE_FP32;
          if (out == MPE_FP16 && in == MPE_TF32 && p.kind == MPE_TC_BLOCK)
            continue;
          oracle(&p, kb ? kb : p.block, &cs, out, want);
          if (ki == 0 && p.kind == MPE_TC_BLOCK) {
            oracle(&p, p.block / 2, &cs, out, dense);
            for (size_t o = 0; o < (size_t)cs.m * cs.n; o++)
              differ += want_bits(out, want[o]) != want_bits(out, dense[o]);
          }
          for (int lvl = 0; lvl < 3; lvl++) {
            if (mpe_simd_level_set(lvl) != lvl)
              continue;
            for (int form = 0; form < 2; form++) {
              char ctx[160];
              snprintf(ctx, sizeof ctx, "%s %s shape %d window %d kept_block %d out %s level %d form %d", name,
                       mpe_type_name(in), si, window, kb, mpe_type_name(out), lvl, form);
              run_case(model, kb, &cs, in, out, form ? MPE_COL_MAJOR : MPE_ROW_MAJOR,
                       form ? MPE_TRANS : MPE_NO_TRANS, want, &t, ctx);
            }
          }
          mpe_simd_level_set(-1);
        }
      }
    }
    free(cs.A); free(cs.B); free(want); free(dense);
  }
  printf("check_sparse: %s %s, kept_block L=%d and %d vs the exact reference: %ld outputs, %ld wrong"
         " (%ld reference outputs where L and L/2 kept products per block differ)\n",
         name, mpe_type_name(in), p.block, kbs[1], t.outputs, t.wrong, differ);
  ck_assert_int_eq(t.wrong, 0);
}
END_TEST

/* the fast kernels' tile edges against the exact reference: M and N not
   multiples of any kernel or thread tile (fma chain 3 × 32 on AVX2, 6 × 64 on
   AVX-512; thread tiles of 32 kernel rows and 2 kernel widths), K not a
   multiple of the kept-value chunk (64 kept values at 32 columns), inf/NaN in
   A and in B (also at dropped positions), both output types */
static const struct { const char *name; mpe_type in; } tile_models[] = {
  { "fma-chain", MPE_FP16 }, { "fma-chain", MPE_BF16 }, { "h100", MPE_FP16 },
};
static const struct { int m, n, K; } tile_shapes[] = {
  { 1, 70, 261 }, { 7, 33, 130 }, { 70, 65, 67 }, { 97, 129, 259 }, { 5, 97, 516 },
};
#define NTILE_SHAPE 5

START_TEST(test_gemm_sp_tiles)
{
  const char *name = tile_models[_i / NTILE_SHAPE].name;
  const mpe_type in = tile_models[_i / NTILE_SHAPE].in;
  const int si = _i % NTILE_SHAPE;
  const mpe_tc_model *model = mpe_tc_model_get(name, in);
  ck_assert(model);
  mpe_tc_params p;
  mpe_tc_model_params(model, &p);
  spcase cs = { tile_shapes[si].m, tile_shapes[si].n, tile_shapes[si].K, NULL, NULL };
  cs.A = malloc(sizeof(double) * (size_t)cs.m * cs.K);
  cs.B = malloc(sizeof(double) * (size_t)cs.K * cs.n);
  double *want = malloc(sizeof(double) * (size_t)cs.m * cs.n);
  ck_assert(cs.A && cs.B && want);
  tally t = { 0, 0, 0 };
  fill(&cs, in, 1, 1, ts_seed() + 9000 * (uint64_t)_i);
  for (int oi = 0; oi < 2; oi++) {
    mpe_type out = oi ? MPE_FP16 : MPE_FP32;
    oracle(&p, p.block, &cs, out, want);
    for (int lvl = 0; lvl < 3; lvl++) {
      if (mpe_simd_level_set(lvl) != lvl)
        continue;
      for (int form = 0; form < 2; form++) {
        char ctx[160];
        snprintf(ctx, sizeof ctx, "%s %s shape %d×%d×%d out %s level %d form %d", name, mpe_type_name(in), cs.m,
                 cs.n, cs.K, mpe_type_name(out), lvl, form);
        run_case(model, 0, &cs, in, out, form ? MPE_COL_MAJOR : MPE_ROW_MAJOR, form ? MPE_TRANS : MPE_NO_TRANS,
                 want, &t, ctx);
      }
    }
    mpe_simd_level_set(-1);
  }
  printf("check_sparse: tiles %s %s %d×%d×%d vs the exact reference: %ld outputs, %ld wrong\n", name,
         mpe_type_name(in), cs.m, cs.n, cs.K, t.outputs, t.wrong);
  free(cs.A); free(cs.B); free(want);
  ck_assert_int_eq(t.wrong, 0);
}
END_TEST

/* the fast path really runs at level 1 and agrees with level 0 on a large
   random case (and B's specials at dropped positions make no NaN) */
START_TEST(test_gemm_sp_large)
{
  const mpe_tc_model *h = mpe_tc_model_get("h100", MPE_FP16);
  const int m = 70, n = 90, K = 256, kc = mpe_sparse_kept(K);
  float *A = malloc(sizeof(float) * m * K), *V = malloc(sizeof(float) * m * kc), *B = malloc(sizeof(float) * K * n);
  uint16_t *meta = malloc(2 * (size_t)m * mpe_sparse_meta_words(K));
  float *C0 = malloc(sizeof(float) * m * n), *C1 = malloc(sizeof(float) * m * n);
  uint64_t s = ts_seed();
  for (int x = 0; x < m * K; x++)
    A[x] = (float)((double)(ts_rand64(&s) >> 11) * 0x1p-52 - 1.0);
  for (int x = 0; x < K * n; x++)
    B[x] = (float)((double)(ts_rand64(&s) >> 11) * 0x1p-52 - 1.0);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, m, K, A, MPE_FP32, K, A, K), 0);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, m, K, A, MPE_FP32, K, V, kc, meta, mpe_sparse_meta_words(K)), 0);
  /* row 0 of A drops position 0 or 1 (two of the first four); put inf in B there */
  int dropped = A[0] == 0 ? 0 : A[1] == 0 ? 1 : A[2] == 0 ? 2 : 3;
  B[(size_t)dropped * n + 5] = INFINITY;
  long diff = 0;
  for (int lvl = 0; lvl < 2; lvl++) {
    ck_assert_int_eq(mpe_simd_level_set(lvl), lvl);
    ck_assert_int_eq(mpe_gemm_sp(h, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, m, n, K, 1.0f, V, MPE_FP32, kc, meta,
                                 mpe_sparse_meta_words(K), B, MPE_FP32, n, 0.0f, lvl ? C1 : C0, MPE_FP32, n), 0);
  }
  mpe_simd_level_set(-1);
  for (int x = 0; x < m * n; x++)
    diff += ts_f2u(C0[x]) != ts_f2u(C1[x]);
  ck_assert_msg(!isnan(C0[5]), "a dropped position's inf reached the product");
  printf("check_sparse: h100 fp16 %dx%dx%d, levels 0 and 1: %d outputs, %ld different\n", m, n, K, m * n, diff);
  ck_assert_int_eq(diff, 0);
  /* a custom model whose block sums need binary64 lanes (F = 30): the wide
     sparse kernel, levels 0 and 1, and L/2 kept products = the dense model */
  mpe_tc_params p;
  mpe_tc_model *w;
  mpe_tc_model_params(h, &p);
  p.align_bits = 30;
  ck_assert_int_eq(mpe_tc_model_custom(&w, &p), 0);
  float *D = malloc(sizeof(float) * m * n);
  B[(size_t)dropped * n + 5] = 1.0f;
  diff = 0;
  for (int lvl = 0; lvl < 2; lvl++) {
    ck_assert_int_eq(mpe_simd_level_set(lvl), lvl);
    ck_assert_int_eq(mpe_gemm_sp(w, 8, MPE_ROW_MAJOR, MPE_NO_TRANS, m, n, K, 1.0f, V, MPE_FP32, kc, meta,
                                 mpe_sparse_meta_words(K), B, MPE_FP32, n, 0.0f, lvl ? C1 : C0, MPE_FP32, n), 0);
  }
  ck_assert_int_eq(mpe_gemm(w, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, K, 1.0f, A, MPE_FP32, K, B,
                            MPE_FP32, n, 0.0f, D, MPE_FP32, n), 0);
  mpe_simd_level_set(-1);
  for (int x = 0; x < m * n; x++)
    diff += ts_f2u(C0[x]) != ts_f2u(C1[x]) || ts_f2u(D[x]) != ts_f2u(C1[x]);
  printf("check_sparse: custom F=30 model (binary64 sums), levels 0 and 1: %d outputs, %ld wrong\n", m * n, diff);
  ck_assert_int_eq(diff, 0);
  mpe_tc_model_free(w);
  free(D);
  free(A); free(V); free(B); free(meta); free(C0); free(C1);
}
END_TEST


/* The BLAS epilogue: alpha, beta and a C holding inf/NaN, on boundary-case
   data with inf/NaN in A and B, row-major binary32 C (the fast driver applies
   the epilogue tile by tile) and column-major (through a buffer), levels 0 and
   1, against mpe_gemm on the decompressed A with kept_block = L/2 (bits); and
   a C that overlaps B or V (all of V and B read before C is written) against
   the same call with C apart. */
START_TEST(test_gemm_sp_epilogue)
{
  static const struct { const char *name; mpe_type in; } ms[] = {
    { "h100", MPE_FP16 }, { "a100", MPE_BF16 }, { "b200", MPE_E4M3 }, { "fma-chain", MPE_FP16 },
  };
  static const float ab[][2] = { { -1.5f, 0.5f }, { 2.0f, 0.0f }, { 1.0f, 1.0f }, { 0.75f, -3.0f } };
  const mpe_tc_model *model = mpe_tc_model_get(ms[_i].name, ms[_i].in);
  ck_assert(model != NULL);
  mpe_tc_params p;
  mpe_tc_model_params(model, &p);
  const int kb = p.kind == MPE_TC_BLOCK ? p.block / 2 : 0, m = 37, n = 45, K = 132;
  const int kc = mpe_sparse_kept(K), nw = mpe_sparse_meta_words(K);
  const mpe_type it = ms[_i].in;
  const size_t es = esize(it);
  spcase cs = { m, n, K, malloc(sizeof(double) * m * K), malloc(sizeof(double) * K * n) };
  void *A = calloc((size_t)m * K, es), *A2 = calloc((size_t)m * K, es), *V = calloc((size_t)m * kc, es);
  void *B = calloc((size_t)K * n, es);
  uint16_t *meta = calloc((size_t)m * nw, 2);
  float *C0 = malloc(sizeof(float) * m * n), *Cs = malloc(sizeof(float) * m * n), *Cd = malloc(sizeof(float) * m * n);
  ck_assert(cs.A && cs.B && A && A2 && V && B && meta && C0 && Cs && Cd);
  long outputs = 0, wrong = 0, zero_sign = 0;
  for (int window = 0; window < 2; window++) {
    fill(&cs, it, window, 1, ts_seed() + 91000 * (uint64_t)_i + (uint64_t)window);
    for (int x = 0; x < m * K; x++)
      put(A, it, (size_t)x, cs.A[x]);
    for (int x = 0; x < K * n; x++)
      put(B, it, (size_t)x, cs.B[x]);
    ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, m, K, A, it, K, V, kc, meta, nw), 0);
    ck_assert_int_eq(mpe_sparse_decompress(MPE_ROW_MAJOR, m, K, V, it, kc, meta, nw, A2, K), 0);
    uint64_t st = ts_seed() + 17 * (uint64_t)_i + (uint64_t)window;
    for (int x = 0; x < m * n; x++)
      C0[x] = (float)((double)(ts_rand64(&st) >> 11) * 0x1p-50 - 4.0);
    C0[3] = INFINITY;
    C0[n + 1] = NAN;
    C0[2 * n + 7] = -0.0f;
    for (size_t ai = 0; ai < sizeof ab / sizeof ab[0]; ai++)
      for (int lvl = 0; lvl < 3; lvl++) {
        if (mpe_simd_level_set(lvl) != lvl)
          continue;
        for (int col = 0; col < 2; col++) {
          /* column-major: the same arrays read as the transposed problem is not
             the same product, so C alone changes layout: C^T stored n x m */
          mpe_layout lay = col ? MPE_COL_MAJOR : MPE_ROW_MAJOR;
          for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
              size_t ci = col ? (size_t)j * m + i : (size_t)i * n + j;
              Cs[ci] = Cd[ci] = C0[(size_t)i * n + j];
            }
          if (col) {
            /* column-major operands: V, meta, A2 and B transposed into scratch */
            void *Vt = malloc((size_t)m * kc * es), *A2t = malloc((size_t)m * K * es), *Bt = malloc((size_t)K * n * es);
            uint16_t *mt = malloc((size_t)m * nw * 2);
            ck_assert(Vt && A2t && Bt && mt);
            for (int i = 0; i < m; i++) {
              for (int q = 0; q < kc; q++)
                memcpy((char *)Vt + ((size_t)q * m + i) * es, (char *)V + ((size_t)i * kc + q) * es, es);
              for (int l = 0; l < K; l++)
                memcpy((char *)A2t + ((size_t)l * m + i) * es, (char *)A2 + ((size_t)i * K + l) * es, es);
              for (int w = 0; w < nw; w++)
                mt[(size_t)w * m + i] = meta[(size_t)i * nw + w];
            }
            for (int l = 0; l < K; l++)
              for (int j = 0; j < n; j++)
                memcpy((char *)Bt + ((size_t)j * K + l) * es, (char *)B + ((size_t)l * n + j) * es, es);
            ck_assert_int_eq(mpe_gemm_sp(model, kb, lay, MPE_NO_TRANS, m, n, K, ab[ai][0], Vt, it, m, mt, m, Bt, it,
                                         K, ab[ai][1], Cs, MPE_FP32, m), 0);
            ck_assert_int_eq(mpe_gemm(model, lay, MPE_NO_TRANS, MPE_NO_TRANS, m, n, K, ab[ai][0], A2t, it, m, Bt,
                                      it, K, ab[ai][1], Cd, MPE_FP32, m), 0);
            free(Vt); free(A2t); free(Bt); free(mt);
          } else {
            ck_assert_int_eq(mpe_gemm_sp(model, kb, lay, MPE_NO_TRANS, m, n, K, ab[ai][0], V, it, kc, meta, nw, B, it,
                                         n, ab[ai][1], Cs, MPE_FP32, n), 0);
            ck_assert_int_eq(mpe_gemm(model, lay, MPE_NO_TRANS, MPE_NO_TRANS, m, n, K, ab[ai][0], A2, it, K, B, it, n,
                                      ab[ai][1], Cd, MPE_FP32, n), 0);
          }
          for (int x = 0; x < m * n; x++) {
            uint32_t g = ts_f2u(Cs[x]), w = ts_f2u(Cd[x]);
            outputs++;
            if (g != w && p.kind == MPE_TC_FMA_CHAIN && !(g & 0x7fffffffu) && !(w & 0x7fffffffu)) {
              zero_sign++;   /* as in test_gemm_sp_dense */
              continue;
            }
            if (g != w && wrong++ < 5)
              fprintf(stderr, "WRONG %s %s alpha %g beta %g level %d col %d: output %d got %08x want %08x\n",
                      ms[_i].name, mpe_type_name(it), ab[ai][0], ab[ai][1], lvl, col, x, g, w);
          }
        }
      }
    mpe_simd_level_set(-1);
  }
  /* C overlapping B (FP32 operands, m2 = 200 rows: several thread tiles; C
     starts 32 values into B, so the first tiles' C overwrites B's first rows,
     which the recomputation of the outputs of B's last column, holding an inf,
     reads in the later tiles): the result is that of the same call with C apart */
  if (it == MPE_FP16) {
    const int m2 = 200;
    float *A2f = malloc(sizeof(float) * m2 * K), *Vf = malloc(sizeof(float) * m2 * kc);
    uint16_t *meta2 = malloc(sizeof(uint16_t) * m2 * nw);
    float *BC = malloc(sizeof(float) * ((size_t)K * n + (size_t)m2 * n + 32));
    float *Bv = malloc(sizeof(float) * K * n), *Ca = malloc(sizeof(float) * m2 * n);
    ck_assert(A2f && Vf && meta2 && BC && Bv && Ca);
    uint64_t st = ts_seed() + 5 * (uint64_t)_i;
    for (int x = 0; x < m2 * K; x++)
      A2f[x] = (float)((double)(ts_rand64(&st) >> 11) * 0x1p-52 - 1.0);
    ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, m2, K, A2f, MPE_FP32, K, A2f, K), 0);
    ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, m2, K, A2f, MPE_FP32, K, Vf, kc, meta2, nw), 0);
    for (int lvl = 0; lvl < 3; lvl++) {
      if (mpe_simd_level_set(lvl) != lvl)
        continue;
      uint64_t sb = st;
      for (int x = 0; x < K * n; x++)
        BC[x] = (float)((double)(ts_rand64(&sb) >> 11) * 0x1p-52 - 1.0);
      for (int x = 0; x < m2 * n; x++)   /* C's initial values, over B */
        BC[32 + x] = 0.25f * (float)(x % 7) - 1.0f;
      BC[(size_t)(K - 1) * n + n - 1] = INFINITY;   /* B's last column: recomputed outputs */
      memcpy(Bv, BC, sizeof(float) * K * n);
      memcpy(Ca, BC + 32, sizeof(float) * m2 * n);
      ck_assert_int_eq(mpe_gemm_sp(model, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, m2, n, K, -1.0f, Vf, MPE_FP32, kc, meta2,
                                   nw, Bv, MPE_FP32, n, 0.5f, Ca, MPE_FP32, n), 0);
      ck_assert_int_eq(mpe_gemm_sp(model, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, m2, n, K, -1.0f, Vf, MPE_FP32, kc, meta2,
                                   nw, BC, MPE_FP32, n, 0.5f, BC + 32, MPE_FP32, n), 0);
      for (int x = 0; x < m2 * n; x++) {
        outputs++;
        if (ts_f2u(BC[32 + x]) != ts_f2u(Ca[x]) && wrong++ < 5)
          fprintf(stderr, "WRONG %s C over B, level %d: output %d got %08x want %08x\n", ms[_i].name, lvl, x,
                  ts_f2u(BC[32 + x]), ts_f2u(Ca[x]));
      }
    }
    /* C overlapping V: C starts at V's row m2/2 (its first values are kept
       values of V, the rest follow V), so writing C's first rows overwrites
       kept values of rows still to be multiplied: the result is that of the
       same call with V apart (Vf) on the same starting C */
    float *VC = malloc(sizeof(float) * ((size_t)m2 * kc + (size_t)m2 * n)), *Cw = malloc(sizeof(float) * m2 * n);
    ck_assert(VC && Cw);
    const int co = m2 / 2 * kc;
    for (int lvl = 0; lvl < 3; lvl++) {
      if (mpe_simd_level_set(lvl) != lvl)
        continue;
      for (int x = 0; x < K * n; x++)
        Bv[x] = (float)((double)(ts_rand64(&st) >> 11) * 0x1p-52 - 1.0);
      memcpy(VC, Vf, sizeof(float) * m2 * kc);
      for (int x = m2 * kc; x < co + m2 * n; x++)
        VC[x] = 0.25f * (float)(x % 5) - 0.5f;
      memcpy(Cw, VC + co, sizeof(float) * m2 * n);
      ck_assert_int_eq(mpe_gemm_sp(model, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, m2, n, K, 1.5f, Vf, MPE_FP32, kc, meta2,
                                   nw, Bv, MPE_FP32, n, -2.0f, Cw, MPE_FP32, n), 0);
      ck_assert_int_eq(mpe_gemm_sp(model, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, m2, n, K, 1.5f, VC, MPE_FP32, kc, meta2,
                                   nw, Bv, MPE_FP32, n, -2.0f, VC + co, MPE_FP32, n), 0);
      for (int x = 0; x < m2 * n; x++) {
        outputs++;
        if (ts_f2u(VC[co + x]) != ts_f2u(Cw[x]) && wrong++ < 5)
          fprintf(stderr, "WRONG %s C over V, level %d: output %d got %08x want %08x\n", ms[_i].name, lvl, x,
                  ts_f2u(VC[co + x]), ts_f2u(Cw[x]));
      }
    }
    mpe_simd_level_set(-1);
    free(A2f); free(Vf); free(meta2); free(BC); free(Bv); free(Ca); free(VC); free(Cw);
  }
  printf("check_sparse: %s %s epilogue (alpha, beta, C with inf/NaN, both layouts, C over B, C over V) vs mpe_gemm on the"
         " decompressed A: %ld outputs, %ld wrong%s\n", ms[_i].name, mpe_type_name(it), outputs, wrong,
         p.kind == MPE_TC_FMA_CHAIN ? " (zeros whose sign differs skipped, as above)" : "");
  if (p.kind == MPE_TC_FMA_CHAIN)
    printf("check_sparse:   %ld zeros whose sign differs\n", zero_sign);
  ck_assert_int_eq(wrong, 0);
  free(cs.A); free(cs.B); free(A); free(A2); free(V); free(B); free(meta); free(C0); free(Cs); free(Cd);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("sparse");
  TCase *tc = tcase_create("format");
  tcase_add_test(tc, test_prune_hand);
  tcase_add_loop_test(tc, test_prune_types, 0, NALL);
  tcase_add_test(tc, test_compress_hand);
  tcase_add_loop_test(tc, test_roundtrip, 0, NALL);
  tcase_add_test(tc, test_refusals);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_aliasing);
  suite_add_tcase(s, tc);
  TCase *tg = tcase_create("gemm");
  tcase_set_timeout(tg, 1200);
  tcase_add_loop_test(tg, test_gemm_sp_dense, 0, NNAME * NTYPE);
  tcase_add_loop_test(tg, test_gemm_sp_oracle, 0, NNAME * NTYPE);
  tcase_add_test(tg, test_gemm_sp_large);
  tcase_add_loop_test(tg, test_gemm_sp_tiles, 0, 3 * NTILE_SHAPE);
  tcase_add_loop_test(tg, test_gemm_sp_epilogue, 0, 4);
  suite_add_tcase(s, tg);
  return ts_run(s);
}
