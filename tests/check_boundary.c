/* Boundary cases against exact references, at every SIMD level.

   - The boundary generator (tests/support/boundary.c) and Philox4x32-10 are
     checked first (representability, determinism, known-answer vectors).
   - The tensor-core oracle, written from mpe_tc_model_get(3), mpe_mma(3) and
     mpe_gemm(3) with GMP integers, is proven on the real GPU outputs of
     the tensor-core conformance data (tests/conformance), then every built-in model x input type
     x SIMD level runs boundary GEMMs (maximum magnitudes, all-ones
     significands, cancellation, subnormals, K below / at / well beyond the
     block length, FP32 and FP16 outputs, row- and column-major, transposes,
     mpe_mma with boundary C) against it.
   - Array rounding (mpe_round_f32, mpe_round_f64) and the correctly rounded
     element-wise kernels against MPFR, every format x mode x level.
   Counts are printed per configuration; any wrong output fails the test. */
#include <math.h>
#include <stdlib.h>
#include <mpfr.h>
#include "testsupport.h"
#include "boundary.h"

static const int levels[] = { 0, 1, 2 };
#define NLEVEL 3

/* the level really in force for `lv`, or -1 when the CPU lacks it */
static int set_level(int lv)
{
  return mpe_simd_level_set(lv) == lv ? lv : -1;
}

/* ------------------------------------------------------------------ generator */

START_TEST(test_generator)
{
  static const mpe_type ts[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2, MPE_FP32 };
  uint64_t seed = ts_seed();
  double *tab = malloc(sizeof(double) * 8192);
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
    const mpe_format *t = mpe_format_of(ts[i]);
    for (int s = 0; s < 3; s++) {
      const mpe_format *src = s == 0 ? mpe_format_of(MPE_FP32) : s == 1 ? mpe_format_of(MPE_FP64) : t;
      ts_fmt sf = ts_fmt_of(src), tf = ts_fmt_of(t);
      ts_bgen g, h;
      ts_bgen_init(&g, t, src, seed);
      ts_bgen_init(&h, t, src, seed);
      size_t n = ts_bgen_table(&g, tab, 8192);
      ck_assert_msg(n > 200, "%s: table of %zu", mpe_format_name(t), n);
      int has_max = 0, has_minsub = 0, has_tie = 0;
      for (size_t j = 0; j < n; j++) {
        double x = tab[j];
        if (isfinite(x))
          ck_assert_msg(ts_fmt_fits(&sf, x), "%s: %a not in the source", mpe_format_name(t), x);
        has_max |= fabs(x) == tf.maxv;
        has_minsub |= fabs(x) == ldexp(1, tf.emin - tf.p + 1);
        /* a tie of the target: exactly halfway, in the source */
        if (isfinite(x) && x != 0 && !ts_fmt_fits(&tf, x) && fabs(x) < tf.maxv) {
          double d = ts_round_d(x, &tf, MPE_RZ), u = ts_round_d(x, &tf, MPE_RU);
          if (x > 0 && x - d == u - x)
            has_tie = 1;
        }
      }
      ck_assert_msg(has_max && has_minsub && (sf.p <= tf.p || has_tie), "%s from %s: max %d minsub %d tie %d",
                    mpe_format_name(t), mpe_format_name(src), has_max, has_minsub, has_tie);
      int specials = 0, sub = 0;
      for (int j = 0; j < 4000; j++) {
        double x = ts_bgen_next(&g), y = ts_bgen_next(&h);
        ck_assert(ts_same_f64(x, y) && ts_d2u(x) == ts_d2u(y));   /* deterministic */
        if (!isfinite(x) || x == 0)
          specials++;
        else {
          ck_assert_msg(ts_fmt_fits(&sf, x), "%a", x);
          sub += fabs(x) < ldexp(1, tf.emin);
        }
      }
      ck_assert(specials > 50 && sub > 50);
    }
  }
  /* a window is respected, vectors stay in the source */
  ts_bgen g;
  ts_bgen_init(&g, mpe_format_of(MPE_BF16), NULL, seed);
  ts_bgen_window(&g, -48, 62);
  g.specials = 0;
  double v[64];
  for (int r = 0; r < 200; r++) {
    ts_bgen_vector(&g, v, 64, 1);
    for (int j = 0; j < 64; j++)
      ck_assert_msg(v[j] == 0 || (ilogb(v[j]) >= -48 && ilogb(v[j]) <= 62), "%a", v[j]);
  }
  free(tab);
}
END_TEST

/* Random123's known-answer vectors for Philox4x32-10 */
START_TEST(test_philox_kat)
{
  static const struct { uint32_t ctr[4], key[2], out[4]; } kat[] = {
    { { 0, 0, 0, 0 }, { 0, 0 }, { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
    { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff },
      { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
    { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 },
      { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
  };
  for (int i = 0; i < 3; i++) {
    uint32_t o[4];
    ts_philox4x32(o, kat[i].ctr, kat[i].key);
    for (int j = 0; j < 4; j++)
      ck_assert_msg(o[j] == kat[i].out[j], "kat %d word %d: %08x", i, j, o[j]);
  }
}
END_TEST

/* the word of element idx of the stream `seed` (mpemu(3): word idx%4 of the block at counter idx/4) */
static uint32_t sr_word(uint64_t seed, uint64_t idx)
{
  uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
  uint32_t ctr[4] = { (uint32_t)(idx / 4), (uint32_t)(idx / 4 >> 32), 0, 0 }, o[4];
  ts_philox4x32(o, ctr, key);
  return o[idx % 4];
}

/* ------------------------------------------------------------------ tensor-core models */

/* the table of mpe_tc_model_get(3), written out again */
static const struct {
  const char *name;
  mpe_type in;
  int L, F, rb, late;
  mpe_round r32;
} doc_models[] = {
  { "v100", MPE_FP16, 4, 23, 0, 0, MPE_RZ }, { "t4", MPE_FP16, 8, 24, 0, 0, MPE_RZ },
  { "a100", MPE_FP16, 8, 24, 0, 0, MPE_RZ }, { "a100", MPE_BF16, 8, 24, 0, 0, MPE_RZ },
  { "a100", MPE_TF32, 4, 24, 0, 0, MPE_RZ },
  { "ada", MPE_FP16, 8, 24, 0, 0, MPE_RZ }, { "ada", MPE_BF16, 8, 24, 0, 0, MPE_RZ },
  { "ada", MPE_TF32, 4, 24, 0, 0, MPE_RZ }, { "ada", MPE_E4M3, 16, 13, 13, 0, MPE_RZ },
  { "ada", MPE_E5M2, 16, 13, 13, 0, MPE_RZ },
  { "h100", MPE_FP16, 16, 25, 0, 0, MPE_RZ }, { "h100", MPE_BF16, 16, 25, 0, 0, MPE_RZ },
  { "h100", MPE_TF32, 8, 25, 0, 0, MPE_RZ }, { "h100", MPE_E4M3, 32, 13, 13, 0, MPE_RZ },
  { "h100", MPE_E5M2, 32, 13, 13, 0, MPE_RZ },
  { "b200", MPE_FP16, 16, 25, 0, 0, MPE_RZ }, { "b200", MPE_BF16, 16, 25, 0, 0, MPE_RZ },
  { "b200", MPE_TF32, 8, 25, 0, 0, MPE_RZ }, { "b200", MPE_E4M3, 32, 25, 0, 0, MPE_RZ },
  { "b200", MPE_E5M2, 32, 25, 0, 0, MPE_RZ },
  { "b200:mma.sync", MPE_E4M3, 32, 25, 0, 1, MPE_RZ }, { "b200:mma.sync", MPE_E5M2, 32, 25, 0, 1, MPE_RZ },
  { "h100:mma.sync", MPE_BF16, 16, 25, 0, 0, MPE_RZ }, { "h100:mma.sync", MPE_E4M3, 32, 13, 13, 0, MPE_RZ },
  { "rtx-pro-6000", MPE_E4M3, 32, 25, 0, 0, MPE_RZ },
};
#define NDOC (int)(sizeof doc_models / sizeof doc_models[0])

START_TEST(test_tc_params_documented)
{
  for (int i = 0; i < NDOC; i++) {
    mpe_tc_params p;
    const mpe_tc_model *m = mpe_tc_model_get(doc_models[i].name, doc_models[i].in);
    ck_assert_msg(m != NULL, "%s %s", doc_models[i].name, mpe_type_name(doc_models[i].in));
    ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
    ck_assert_msg(p.kind == MPE_TC_BLOCK && p.block == doc_models[i].L && p.align_bits == doc_models[i].F &&
                      p.result_bits == doc_models[i].rb && p.late_c == doc_models[i].late &&
                      p.round_fp32 == doc_models[i].r32 && p.round_fp16 == MPE_RNE && p.zero_c_counts == 1 &&
                      p.input_round == (doc_models[i].in == MPE_TF32 ? MPE_RZ : MPE_RNE),
                  "%s %s: parameters differ from mpe_tc_model_get(3)", doc_models[i].name,
                  mpe_type_name(doc_models[i].in));
  }
}
END_TEST

/* binary16 bit pattern of a binary16 value (NaN: the canonical 0x7fff of mpe_mma(3)) */
static uint16_t h_bits(double v)
{
  if (isnan(v))
    return 0x7fff;
  uint16_t s = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (isinf(a))
    return s | 0x7c00;
  if (a < 0x1p-14)
    return s | (uint16_t)ldexp(a, 24);
  int e = ilogb(a);
  return s | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(a, 10 - e) - 1024);
}

static uint32_t f_bits(double v)
{
  return isnan(v) ? 0x7fffffffu : ts_f2u((float)v);
}

/* a value of input type t as its packed pattern (fp16 5/10, bf16 8/7, e4m3 4/3, e5m2 5/2) */
static unsigned pack(mpe_type t, double v)
{
  int eb = t == MPE_BF16 ? 8 : t == MPE_E4M3 ? 4 : 5, mb = t == MPE_FP16 ? 10 : t == MPE_BF16 ? 7 : t == MPE_E4M3 ? 3 : 2;
  int bias = (1 << (eb - 1)) - 1, emin = 1 - bias;
  unsigned s = signbit(v) ? 1u << (eb + mb) : 0;
  if (isnan(v))
    return t == MPE_E4M3 ? 0x7f : (((1u << eb) - 1) << mb) | (1u << (mb - 1));
  double a = fabs(v);
  if (isinf(a))
    return s | (((1u << eb) - 1) << mb);
  if (a < ldexp(1, emin))
    return s | (unsigned)ldexp(a, mb - emin);
  int e = ilogb(a);
  return s | ((unsigned)(e + bias) << mb) | (unsigned)(ldexp(a, mb - e) - ldexp(1, mb));
}

static size_t type_size(mpe_type t)
{
  return t == MPE_TF32 || t == MPE_FP32 ? 4 : t == MPE_FP16 || t == MPE_BF16 ? 2 : 1;
}

/* store value v of input type t at element i of a packed array */
static void put(void *arr, mpe_type t, size_t i, double v)
{
  if (t == MPE_TF32 || t == MPE_FP32)
    ((float *)arr)[i] = (float)v;
  else if (type_size(t) == 2)
    ((uint16_t *)arr)[i] = (uint16_t)pack(t, v);
  else
    ((uint8_t *)arr)[i] = (uint8_t)pack(t, v);
}

/* ---- oracle against the real GPU data */

static int read_words(const char *rel, int hex, uint32_t **out, int *per_line, int max_rows)
{
  return ts_conf_rows(rel, hex ? 16 : 2, max_rows, out, per_line);
}

static const struct { const char *gpu, *model, *in; mpe_type t; } gpu_sets[] = {
  { "V100", "v100", "fp16", MPE_FP16 }, { "A100", "a100", "fp16", MPE_FP16 }, { "A100", "a100", "bf16", MPE_BF16 },
  { "A100", "a100", "tf32", MPE_TF32 }, { "A2", "a2", "fp16", MPE_FP16 }, { "A2", "a2", "bf16", MPE_BF16 },
  { "A2", "a2", "tf32", MPE_TF32 }, { "Ada", "ada", "fp16", MPE_FP16 }, { "Ada", "ada", "bf16", MPE_BF16 },
  { "Ada", "ada", "tf32", MPE_TF32 }, { "Ada", "ada", "E4M3", MPE_E4M3 }, { "Ada", "ada", "E5M2", MPE_E5M2 },
  { "L40S", "l40s", "fp16", MPE_FP16 }, { "L40S", "l40s", "bf16", MPE_BF16 }, { "L40S", "l40s", "tf32", MPE_TF32 },
  { "L40S", "l40s", "E4M3", MPE_E4M3 }, { "L40S", "l40s", "E5M2", MPE_E5M2 },
  { "H100", "h100", "fp16", MPE_FP16 }, { "H100", "h100", "bf16", MPE_BF16 }, { "H100", "h100", "tf32", MPE_TF32 },
  { "H100", "h100", "E4M3", MPE_E4M3 }, { "H100", "h100", "E5M2", MPE_E5M2 },
  { "H200", "h200", "fp16", MPE_FP16 }, { "H200", "h200", "bf16", MPE_BF16 }, { "H200", "h200", "tf32", MPE_TF32 },
  { "H200", "h200", "E4M3", MPE_E4M3 }, { "H200", "h200", "E5M2", MPE_E5M2 },
  /* the B200 rows are mma.sync results ("b200" is tcgen05.mma, whose FP8 differs) */
  { "B200", "b200:mma.sync", "fp16", MPE_FP16 }, { "B200", "b200:mma.sync", "bf16", MPE_BF16 },
  { "B200", "b200:mma.sync", "tf32", MPE_TF32 }, { "B200", "b200:mma.sync", "E4M3", MPE_E4M3 },
  { "B200", "b200:mma.sync", "E5M2", MPE_E5M2 },
};
#define NGPUSET (int)(sizeof gpu_sets / sizeof gpu_sets[0])
enum { ORACLE_ROWS = 2500 };

/* The oracle reproduces ORACLE_ROWS rows of every required GPU file
   (binary32 outputs; binary16 outputs of the fp16 sets). */
START_TEST(test_oracle_gpu_data)
{
  const char *g = gpu_sets[_i].gpu, *in = gpu_sets[_i].in;
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get(gpu_sets[_i].model, gpu_sets[_i].t), &p), 0);
  int fp8 = gpu_sets[_i].t == MPE_E4M3 || gpu_sets[_i].t == MPE_E5M2;
  char rel[256];
  uint32_t *a, *b, *c, *d32, *d16 = NULL;
  int ka, kb, one;
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/a_%s_%s.txt", g, in, g, in);
  int ra = read_words(rel, 1, &a, &ka, ORACLE_ROWS);
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/b_%s_%s.txt", g, in, g, in);
  int rb = read_words(rel, 1, &b, &kb, ORACLE_ROWS);
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/c_%s_fp32.txt", g, in, g);
  int rc = read_words(rel, 0, &c, &one, ORACLE_ROWS);
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/d_%s_fp32.txt", g, in, g);
  int rd = read_words(rel, 0, &d32, &one, ORACLE_ROWS);
  int rh = -1;
  /* binary16 rows: the fp16 sets, and the FP8 sets but L40S's (mma.sync runs: Ada's
     F = 13 with no 13-bit cut, Hopper's and B200's fp16_split; mpe_tc_model_get(3)) */
  mpe_tc_params p16 = p;
  if (fp8 && g[0] == 'H')
    ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100:mma.sync", gpu_sets[_i].t), &p16), 0);
  if (gpu_sets[_i].t == MPE_FP16 || (fp8 && strcmp(g, "L40S"))) {
    snprintf(rel, sizeof rel, "tensor-cores/%s/%s/d_%s_fp16.txt", g, in, g);
    rh = read_words(rel, 0, &d16, &one, ORACLE_ROWS);
  }
  ck_assert_msg(ra > 0 && rb == ra && rc == ra && rd == ra && ka == kb, "%s/%s: rows %d %d %d %d", g, in, ra,
                rb, rc, rd);
  int K = ka, bad = 0, n = 0;
  double av[64], bv[64];
  ck_assert(K <= 64);
  for (int r = 0; r < ra; r++) {
    for (int k = 0; k < K; k++) {
      av[k] = ts_u2f(a[(size_t)r * K + k]);
      bv[k] = ts_u2f(b[(size_t)r * K + k]);
    }
    /* H100/H200 FP8 rows were made with c = 0 (conformance README) */
    int c_zero = fp8 && (g[0] == 'H');
    double cv = c_zero ? 0.0 : ts_u2f(c[r]);
    double want = ts_tc_oracle(&p, K, av, 1, bv, 1, cv, MPE_FP32);
    n++;
    if (f_bits(want) != d32[r]) {
      if (bad++ < 5)
        fprintf(stderr, "oracle %s/%s fp32 row %d: oracle %08x GPU %08x\n", g, in, r + 1, f_bits(want), d32[r]);
    }
    if (rh > r) {
      /* binary16 runs: c rounded to binary16 first */
      ts_fmt hf = ts_fmt_type(MPE_FP16);
      double ch = ts_round_d(ts_u2f(c[r]), &hf, MPE_RNE);
      double w16 = ts_tc_oracle(&p16, K, av, 1, bv, 1, ch, MPE_FP16);
      n++;
      if (f_bits(w16) != d16[r] && bad++ < 5)
        fprintf(stderr, "oracle %s/%s fp16 row %d: oracle %08x GPU %08x\n", g, in, r + 1, f_bits(w16), d16[r]);
    }
  }
  printf("tc oracle vs GPU %s/%s: K=%d %d outputs, %d wrong\n", g, in, K, n, bad);
  fflush(stdout);
  ck_assert_int_eq(bad, 0);
  free(a); free(b); free(c); free(d32); free(d16);
}
END_TEST

/* ---- boundary GEMMs */

static const char *const tc_names[] = { "v100", "t4", "a100", "ada", "h100", "b200", "exact", "fma-chain" };
static const mpe_type tc_types[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2 };
#define NTCNAME 8
#define NTCTYPE 5

typedef struct {
  long outputs[NLEVEL], wrong[NLEVEL];
  int reported;
} tally;

static void report(tally *t, const char *what, const char *ctx, int i, int j, uint32_t got, uint32_t want)
{
  if (t->reported++ < 6)
    fprintf(stderr, "WRONG %s %s: output (%d,%d) got %08x want %08x\n", what, ctx, i, j, got, want);
}

/* Logical A (m x K) and B (K x n), doubles of the input format, row-major. */
typedef struct {
  int m, n, K;
  double *A, *B, *C;      /* C: m x n values of the output format (for mpe_mma) */
  double *want_gemm;      /* m x n, accumulator from +0 */
  double *want_mma;       /* m x n, accumulator from C */
} tc_case;

static void fill_case(tc_case *cs, const mpe_tc_params *p, mpe_type out, int window, uint64_t seed)
{
  ts_bgen g;
  ts_bgen_init(&g, mpe_format_of(p->in), NULL, seed);
  if (window)
    ts_bgen_window(&g, -48, 62);
  g.specials = 0;
  int m = cs->m, n = cs->n, K = cs->K;
  for (int i = 0; i < m; i++)
    ts_bgen_vector(&g, cs->A + (size_t)i * K, (size_t)K, 1);
  for (int j = 0; j < n; j++)
    ts_bgen_vector(&g, cs->B + j, (size_t)K, (size_t)n);
  /* one row of A and one column of B carry a special (rows with inf/NaN take the portable engine) */
  if (m > 2 && n > 2 && K > 0) {
    uint64_t r = ts_rand64(&g.state);
    int inf_ok = mpe_format_has_inf(mpe_format_of(p->in));
    cs->A[(size_t)(m - 1) * K + r % (uint64_t)K] = (r >> 20) % 2 && inf_ok ? -INFINITY : NAN;
    cs->B[(size_t)((r >> 30) % (uint64_t)K) * n + n - 1] = inf_ok ? INFINITY : NAN;
  }
  ts_bgen gc;
  ts_bgen_init(&gc, mpe_format_of(out), NULL, seed ^ 0xc0ffee);
  gc.specials = 0;
  for (int i = 0; i < m; i++)
    ts_bgen_vector(&gc, cs->C + (size_t)i * n, (size_t)n, 1);
  cs->C[0] = INFINITY;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      cs->want_gemm[i * n + j] = ts_tc_oracle(p, K, cs->A + (size_t)i * K, 1, cs->B + j, (size_t)n, 0.0, out);
      cs->want_mma[i * n + j] = ts_tc_oracle(p, K, cs->A + (size_t)i * K, 1, cs->B + j, (size_t)n,
                                             cs->C[i * n + j], out);
    }
}

static uint32_t out_bits(mpe_type out, const void *arr, size_t idx)
{
  return out == MPE_FP16 ? ((const uint16_t *)arr)[idx] : ts_f2u(((const float *)arr)[idx]);
}

static uint32_t want_bits(mpe_type out, double v)
{
  return out == MPE_FP16 ? h_bits(v) : f_bits(v);
}

/* the operands of one output, for a reproducer */
static void dump_dot(const tc_case *cs, int i, int j, double c)
{
  fprintf(stderr, "  K=%d c=%a\n  a:", cs->K, c);
  for (int k = 0; k < cs->K; k++)
    fprintf(stderr, " %a", cs->A[(size_t)i * cs->K + k]);
  fprintf(stderr, "\n  b:");
  for (int k = 0; k < cs->K; k++)
    fprintf(stderr, " %a", cs->B[(size_t)k * cs->n + j]);
  fprintf(stderr, "\n");
}

/* the four stored forms of op(A), op(B), C: row-major NN, column-major NN,
   row-major TT, column-major TN; leading dimensions padded */
static long run_gemm_forms(const mpe_tc_model *model, const tc_case *cs, mpe_type it, mpe_type out, int li,
                           tally *t, const char *ctx)
{
  int m = cs->m, n = cs->n, K = cs->K, pad = 3;
  long bad = 0;
  size_t es = type_size(it);
  for (int form = 0; form < 4; form++) {
    mpe_layout lay = form % 2 ? MPE_COL_MAJOR : MPE_ROW_MAJOR;
    mpe_trans ta = form >= 2 ? MPE_TRANS : MPE_NO_TRANS, tb = form == 2 ? MPE_TRANS : MPE_NO_TRANS;
    /* stored A: row-major NN m x K; col-major NN m x K by columns; row-major T: K x m rows; col-major T: K x m by columns */
    int a_rows_fast = (lay == MPE_ROW_MAJOR) == (ta == MPE_NO_TRANS);   /* element (i,k) at i*lda + k */
    int b_rows_fast = (lay == MPE_ROW_MAJOR) == (tb == MPE_NO_TRANS);   /* element (k,j) at k*ldb + j */
    int lda = (a_rows_fast ? K : m) + pad, ldb = (b_rows_fast ? n : K) + pad;
    int ldc = (lay == MPE_ROW_MAJOR ? n : m) + pad;
    size_t asz = (size_t)lda * (a_rows_fast ? m : K) + 1, bsz = (size_t)ldb * (b_rows_fast ? K : n) + 1;
    void *A = calloc(asz, es), *B = calloc(bsz, es);
    void *C = calloc((size_t)ldc * (lay == MPE_ROW_MAJOR ? m : n) + 1, 4);
    for (int i = 0; i < m; i++)
      for (int k = 0; k < K; k++)
        put(A, it, a_rows_fast ? (size_t)i * lda + k : (size_t)k * lda + i, cs->A[(size_t)i * K + k]);
    for (int k = 0; k < K; k++)
      for (int j = 0; j < n; j++)
        put(B, it, b_rows_fast ? (size_t)k * ldb + j : (size_t)j * ldb + k, cs->B[(size_t)k * n + j]);
    int rc = mpe_gemm(model, lay, ta, tb, m, n, K, 1.0f, A, it, lda, B, it, ldb, 0.0f, C, out, ldc);
    ck_assert_msg(rc == 0, "%s form %d: mpe_gemm returned %d", ctx, form, rc);
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        size_t ci = lay == MPE_ROW_MAJOR ? (size_t)i * ldc + j : (size_t)j * ldc + i;
        uint32_t got = out_bits(out, C, ci), want = want_bits(out, cs->want_gemm[i * n + j]);
        t->outputs[li]++;
        if (got != want) {
          t->wrong[li]++;
          bad++;
          char buf[224];
          snprintf(buf, sizeof buf, "%s gemm form %d (layout %d ta %d tb %d)", ctx, form, lay, ta, tb);
          report(t, "tc", buf, i, j, got, want);
        }
      }
    free(A); free(B); free(C);
  }
  return bad;
}

/* mpe_mma: row-major, C from the boundary set; every second call in place (D == C) */
static long run_mma(const mpe_tc_model *model, const tc_case *cs, mpe_type it, mpe_type out, int li, tally *t,
                    const char *ctx, int in_place)
{
  int m = cs->m, n = cs->n, K = cs->K;
  size_t es = type_size(it);
  void *A = calloc((size_t)m * K + 1, es), *B = calloc((size_t)K * n + 1, es);
  void *C = calloc((size_t)m * n, 4), *D = in_place ? C : calloc((size_t)m * n, 4);
  for (size_t x = 0; x < (size_t)m * K; x++)
    put(A, it, x, cs->A[x]);
  for (size_t x = 0; x < (size_t)K * n; x++)
    put(B, it, x, cs->B[x]);
  for (size_t x = 0; x < (size_t)m * n; x++) {
    if (out == MPE_FP16)
      ((uint16_t *)C)[x] = h_bits(cs->C[x]);
    else
      ((float *)C)[x] = (float)cs->C[x];
  }
  int rc = mpe_mma(model, m, n, K, A, it, K, B, it, n, C, n, D, out, n);
  ck_assert_msg(rc == 0, "%s: mpe_mma returned %d", ctx, rc);
  long bad = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      uint32_t got = out_bits(out, D, (size_t)i * n + j), want = want_bits(out, cs->want_mma[i * n + j]);
      t->outputs[li]++;
      if (got != want) {
        t->wrong[li]++;
        bad++;
        char buf[224];
        snprintf(buf, sizeof buf, "%s mma%s", ctx, in_place ? " in place" : "");
        report(t, "tc", buf, i, j, got, want);
        if (t->reported <= 2)
          dump_dot(cs, i, j, cs->C[i * n + j]);
      }
    }
  free(A); free(B); free(C);
  if (!in_place)
    free(D);
  return bad;
}

/* binary32 operands (atype = btype = MPE_FP32) through the model's input rule */
static long run_fp32_operands(const mpe_tc_model *model, const mpe_tc_params *p, mpe_type out, int li,
                              tally *t, uint64_t seed)
{
  enum { M = 6, N = 5 };
  int K = 2 * p->block + 1;
  ts_bgen g;
  ts_bgen_init(&g, mpe_format_of(p->in), mpe_format_of(MPE_FP32), seed);
  if (p->in == MPE_BF16 || p->in == MPE_TF32)
    ts_bgen_window(&g, -40, 50);
  g.specials = 0;
  float *A = malloc(sizeof(float) * M * (size_t)K), *B = malloc(sizeof(float) * (size_t)K * N);
  double *Ad = malloc(sizeof(double) * M * (size_t)K), *Bd = malloc(sizeof(double) * (size_t)K * N);
  for (int x = 0; x < M * K; x++) {
    A[x] = (float)ts_bgen_next(&g);
    Ad[x] = ts_tc_input(p, A[x]);
  }
  for (int x = 0; x < K * N; x++) {
    B[x] = (float)ts_bgen_next(&g);
    Bd[x] = ts_tc_input(p, B[x]);
  }
  A[0] = INFINITY;                         /* FP8: saturates to max */
  Ad[0] = ts_tc_input(p, A[0]);
  void *C = calloc(M * N, 4);
  int rc = mpe_gemm(model, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, A, MPE_FP32, K, B,
                    MPE_FP32, N, 0.0f, C, out, N);
  ck_assert_int_eq(rc, 0);
  long bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double w = ts_tc_oracle(p, K, Ad + (size_t)i * K, 1, Bd + j, N, 0.0, out);
      uint32_t got = out_bits(out, C, (size_t)i * N + j), want = want_bits(out, w);
      t->outputs[li]++;
      if (got != want) {
        t->wrong[li]++;
        bad++;
        report(t, "tc", "binary32 operands", i, j, got, want);
      }
    }
  free(A); free(B); free(Ad); free(Bd); free(C);
  return bad;
}

/* every case of one model: K below, at and well beyond L, both outputs, both value
   regimes for BF16/TF32 (whole range, and exponents in [-48, 62] where the fast
   kernels run), the four stored forms, mpe_mma, binary32 operands; at every level */
static long tc_model_boundary(const mpe_tc_model *model, const char *label, uint64_t seed, tally *t)
{
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(model, &p), 0);
  mpe_type it = p.in;
  int L = p.kind == MPE_TC_BLOCK ? p.block : 16;
  int Ks[] = { 1, L - 1, L, L + 1, 2 * L, 8 * L + 5 };
  int tf32 = it == MPE_TF32;
  long total_bad = 0;
  enum { M = 11, N = 9 };
  for (int out = 0; out < 2; out++) {
    mpe_type ot = out ? MPE_FP16 : MPE_FP32;
    /* no binary16 output on the TF32 GPU models (MPE_EUNSUP); fma-chain has no binary16 rule */
    if (out && (p.kind == MPE_TC_FMA_CHAIN || (tf32 && p.kind == MPE_TC_BLOCK)))
      continue;
    for (int window = 0; window < ((it == MPE_BF16 || tf32) ? 2 : 1); window++)
      for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
        int K = Ks[ki] > 0 ? Ks[ki] : 1;
        tc_case cs = { M, N, K, NULL, NULL, NULL, NULL, NULL };
        cs.A = malloc(sizeof(double) * M * (size_t)K);
        cs.B = malloc(sizeof(double) * (size_t)K * N);
        cs.C = malloc(sizeof(double) * M * N);
        cs.want_gemm = malloc(sizeof(double) * M * N);
        cs.want_mma = malloc(sizeof(double) * M * N);
        fill_case(&cs, &p, ot, window, seed + 17 * ki + 1009 * (uint64_t)window + (uint64_t)out);
        for (int li = 0; li < NLEVEL; li++) {
          if (set_level(levels[li]) < 0)
            continue;
          char ctx[128];
          snprintf(ctx, sizeof ctx, "%s %s level%d K=%d out=%s window=%d", label, mpe_type_name(it), levels[li], K,
                   mpe_type_name(ot), window);
          long bad = run_gemm_forms(model, &cs, it, ot, li, t, ctx);
          bad += run_mma(model, &cs, it, ot, li, t, ctx, (int)(ki % 2));
          if (bad && t->reported <= 6)
            fprintf(stderr, "  in %s\n", ctx);
          total_bad += bad;
        }
        free(cs.A); free(cs.B); free(cs.C); free(cs.want_gemm); free(cs.want_mma);
      }
    for (int li = 0; li < NLEVEL; li++)
      if (set_level(levels[li]) >= 0)
        total_bad += run_fp32_operands(model, &p, ot, li, t, seed + 5 + (uint64_t)out);
  }
  for (int li = 0; li < NLEVEL; li++) {
    if (set_level(levels[li]) < 0)
      printf("tc boundary: %s %s level%d: not on this CPU\n", label, mpe_type_name(it), levels[li]);
    else
      printf("tc boundary: %s %s level%d: %ld outputs, %ld wrong\n", label, mpe_type_name(it), levels[li],
             t->outputs[li], t->wrong[li]);
  }
  mpe_simd_level_set(-1);
  fflush(stdout);
  return total_bad;
}

START_TEST(test_tc_boundary)
{
  const char *name = tc_names[_i];
  long total_bad = 0;
  for (int ti = 0; ti < NTCTYPE; ti++) {
    const mpe_tc_model *model = mpe_tc_model_get(name, tc_types[ti]);
    if (!model)
      continue;
    tally t = { { 0 }, { 0 }, 0 };
    total_bad += tc_model_boundary(model, name, ts_seed() + 1000 * (uint64_t)_i + 101 * (uint64_t)ti, &t);
  }
  ck_assert_msg(total_bad == 0, "%s: %ld wrong tensor-core outputs (see stderr)", name, total_bad);
}
END_TEST

/* Custom models at the edges of every block-sum lane of mpe_tc_model_get(3)
   ("How the fast kernels hold a block sum"): one int32 sum at its limit, two
   int32 halves, binary64 lanes at their limit, the portable engine just past
   it; and the other parameters (result_bits, late_c, zero_c_counts = 0, a zero c at
   the output's emin (zero_c_exp = 0) or far below it, the IEEE sign of a zero result
   (zero_sign = 0), every binary32 output rounding, input rules). zce: 0 keeps the base
   model's zero_c_exp, -1 sets 0 (the output's emin), else that exponent; zs: 1 sets the
   IEEE sign rule (zero_sign = 0), 0 keeps the base model's. */
static const struct {
  int L, F, rb, late, zc;
  mpe_round r32, inr;
  const char *why;
  int zce, zs;
} custom_models[] = {
  { 16, 25, 0, 0, 1, MPE_RZ, MPE_RNE, "int32 at its limit", 0, 0 },
  { 1, 29, 0, 0, 1, MPE_RZ, MPE_RNE, "int32, F = 29", 0, 0 },
  { 16, 26, 0, 0, 1, MPE_RZ, MPE_RNE, "two int32 halves", 0, 0 },
  { 31, 25, 0, 0, 1, MPE_RZ, MPE_RNE, "two halves, odd L", 0, 0 },
  { 16, 27, 0, 0, 1, MPE_RZ, MPE_RNE, "binary64 lanes", 0, 0 },
  { 16, 46, 0, 0, 1, MPE_RZ, MPE_RNE, "binary64 at its limit", 0, 0 },
  { 16, 47, 0, 0, 1, MPE_RZ, MPE_RNE, "portable, just past binary64", 0, 0 },
  { 3, 58, 0, 0, 1, MPE_RZ, MPE_RNE, "portable, F = 58", 0, 0 },
  { 8, 24, 0, 0, 0, MPE_RNE, MPE_RZ, "zero c drops out, RNE out", 0, 0 },
  { 32, 13, 13, 0, 1, MPE_RU, MPE_RNA, "13-bit result, RU out", 0, 0 },
  { 32, 25, 0, 1, 1, MPE_RD, MPE_RNE, "late c, RD out", 0, 0 },
  { 5, 20, 7, 1, 0, MPE_RNA, MPE_RZ, "late c, 7-bit result, RNA out", 0, 0 },
  { 16, 25, 0, 0, 1, MPE_RZ, MPE_RNE, "zero c at emin, IEEE zero sign", -1, 1 },
  { 8, 24, 0, 0, 1, MPE_RNE, MPE_RZ, "zero c at -300, RNE out", -300, 0 },
  { 32, 13, 13, 1, 1, MPE_RZ, MPE_RNE, "late c, 13 bits, IEEE zero sign", 0, 1 },
};
#define NCUSTOM (int)(sizeof custom_models / sizeof custom_models[0])

/* the fp16_split models (mma.sync FP8 on Hopper and B200) on the same boundary cases,
   binary16 output against the oracle's own two blocks */
START_TEST(test_tc_fp16_split_boundary)
{
  static const char *const names[] = { "h100:mma.sync", "b200:mma.sync" };
  long total_bad = 0;
  for (int ni = 0; ni < 2; ni++)
    for (int ti = 3; ti < NTCTYPE; ti++) {   /* E4M3, E5M2 */
      tally t = { { 0 }, { 0 }, 0 };
      total_bad += tc_model_boundary(mpe_tc_model_get(names[ni], tc_types[ti]), names[ni],
                                     ts_seed() + 9000 + 10 * (uint64_t)ni + (uint64_t)ti, &t);
    }
  ck_assert_msg(total_bad == 0, "%ld wrong tensor-core outputs (see stderr)", total_bad);
}
END_TEST

START_TEST(test_tc_custom_boundary)
{
  const struct { const char *name; mpe_type t; } bases[] = { { "h100", MPE_FP16 }, { "h100", MPE_BF16 },
                                                             { "h100", MPE_TF32 }, { "h100", MPE_E4M3 },
                                                             { "b200", MPE_E5M2 } };
  long total_bad = 0;
  for (int bi = 0; bi < 5; bi++) {
    mpe_tc_params p;
    ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get(bases[bi].name, bases[bi].t), &p), 0);
    p.block = custom_models[_i].L;
    p.align_bits = custom_models[_i].F;
    p.result_bits = custom_models[_i].rb;
    p.late_c = custom_models[_i].late;
    p.zero_c_counts = custom_models[_i].zc;
    p.round_fp32 = custom_models[_i].r32;
    p.input_round = custom_models[_i].inr;
    if (custom_models[_i].zce)
      p.zero_c_exp = custom_models[_i].zce == -1 ? 0 : custom_models[_i].zce;
    if (custom_models[_i].zs)
      p.zero_sign = 0;
    mpe_tc_model *m = NULL;
    int rc = mpe_tc_model_custom(&m, &p);
    ck_assert_msg(rc == 0, "custom L=%d F=%d (%s) %s: %d", p.block, p.align_bits, custom_models[_i].why,
                  mpe_type_name(p.in), rc);
    char label[96];
    snprintf(label, sizeof label, "custom L=%d F=%d (%s)", p.block, p.align_bits, custom_models[_i].why);
    tally t = { { 0 }, { 0 }, 0 };
    total_bad += tc_model_boundary(m, label, ts_seed() + 7000 + 31 * (uint64_t)_i + (uint64_t)bi, &t);
    mpe_tc_model_free(m);
  }
  ck_assert_msg(total_bad == 0, "%ld wrong tensor-core outputs (see stderr)", total_bad);
}
END_TEST

/* issue 12: b200 FP8, every entry of A and B equal, alpha 1, beta 0, FP32 out, at every
   level: 16x16x32 of 1.875 (E4M3; 1.75 for E5M2, which cannot hold 1.875), and the
   maximum finite inputs with K = 64 and 128 (448 and 57344). */
START_TEST(test_tc_b200_fp8_reproducer)
{
  static const struct { mpe_type t; double v; int k; double want; } rep[] = {
    { MPE_E4M3, 1.875, 32, 112.5 }, { MPE_E5M2, 1.75, 32, 98.0 },
    { MPE_E4M3, 448, 64, 448.0 * 448 * 64 }, { MPE_E4M3, 448, 128, 448.0 * 448 * 128 },
    { MPE_E5M2, 57344, 64, 57344.0 * 57344 * 64 }, { MPE_E5M2, 57344, 128, 57344.0 * 57344 * 128 },
    { MPE_E4M3, -448, 128, 448.0 * 448 * 128 },
  };
  static uint8_t a[16 * 128], b[128 * 16];
  float c[256];
  for (size_t r = 0; r < sizeof rep / sizeof rep[0]; r++) {
    const mpe_tc_model *m = mpe_tc_model_get("b200", rep[r].t);
    int k = rep[r].k;
    memset(a, (int)pack(rep[r].t, rep[r].v), (size_t)16 * k);
    memset(b, (int)pack(rep[r].t, rep[r].v), (size_t)16 * k);
    for (int li = 0; li < NLEVEL; li++) {
      if (set_level(levels[li]) < 0)
        continue;
      ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 16, 16, k, 1.0f, a, rep[r].t, k, b,
                                rep[r].t, 16, 0.0f, c, MPE_FP32, 16), 0);
      for (int x = 0; x < 256; x++)
        ck_assert_msg(c[x] == (float)rep[r].want, "%s %g K=%d level %d: %g, want %g", mpe_type_name(rep[r].t),
                      rep[r].v, k, levels[li], c[x], rep[r].want);
    }
  }
  mpe_simd_level_set(-1);
}
END_TEST

/* ------------------------------------------------------------------ array rounding against MPFR */

/* what the array kernels must give for x under opts (mpe_round_f32(3), mpemu(3)):
   NaN sign-preserving canonical, overflow and saturation, flushing. Deterministic modes. */
static double expect_round(double x, const ts_fmt *f, const mpe_round_opts *o, int *nan_from_number)
{
  *nan_from_number = 0;
  if (isnan(x))
    return x;
  double r = isinf(x) ? (f->has_inf ? x : NAN) : ts_round_d(x, f, o->round);
  if (isnan(r)) {
    *nan_from_number = 1;
    if (o->saturate)
      return x < 0 ? -f->maxv : f->maxv;
    return r;
  }
  if (isinf(r) && o->saturate)
    return r < 0 ? -f->maxv : f->maxv;
  if (o->flush_subnormals && r != 0 && fabs(r) < ldexp(1, f->emin))
    return r < 0 ? -0.0 : 0.0;
  return r;
}

/* stochastic: the documented decision (mpemu(3)): w = Philox word of element
   idx; MPE_SR up (away from zero) iff w < floor(frac 2^32), frac the distance
   from the value toward zero in quanta; MPE_SR_EQ up iff w's top bit is set.
   *skip for values whose away neighbour overflows (not compared). */
static double expect_sr(const mpz_t S, long X, const ts_fmt *f, mpe_round mode, uint32_t w, int *skip)
{
  *skip = 0;
  int inex;
  double t = ts_round_z(S, X, f, MPE_RZ, 1, &inex);
  if (isinf(t)) {           /* beyond the largest finite value: overflow, not an SR decision */
    *skip = 1;
    return t;
  }
  if (!inex)
    return t;
  double a = ts_round_z(S, X, f, mpz_sgn(S) > 0 ? MPE_RU : MPE_RD, 0, NULL);
  if (!isfinite(a) || fabs(a) > f->maxv) {
    *skip = 1;
    return t;
  }
  int up;
  if (mode == MPE_SR_EQ)
    up = (int)(w >> 31);
  else {
    /* floor(frac * 2^32) = floor((|S| 2^X - |t|) 2^(32 - qe)) */
    double at = fabs(t);
    long e = (long)mpz_sizeinbase(S, 2) - 1 + X;
    long qe = (e > f->emin ? e : f->emin) - f->p + 1;
    mpz_t D, T;
    mpz_inits(D, T, NULL);
    mpz_abs(D, S);
    /* D = |S| - |t| 2^-X, in units 2^X (t is a multiple of 2^qe >= 2^X here) */
    mpz_set_d(T, ldexp(at, (int)-qe));
    if (qe - X >= 0)
      mpz_mul_2exp(T, T, (mp_bitcnt_t)(qe - X));
    mpz_sub(D, D, T);
    long sh = 32 - (qe - X);
    if (sh >= 0)
      mpz_mul_2exp(D, D, (mp_bitcnt_t)sh);
    else
      mpz_fdiv_q_2exp(D, D, (mp_bitcnt_t)-sh);
    up = mpz_cmp_ui(D, w) > 0;
    mpz_clears(D, T, NULL);
  }
  return up ? a : t;
}

static void d_to_z(mpz_t S, long *X, double x)
{
  int e;
  double m = frexp(x, &e);
  mpz_set_d(S, ldexp(m, 53));
  *X = e - 53;
}

typedef struct {
  const char *name;
  const mpe_format *f;
  int custom;
} fmt_case;

/* NaN results: canonical quiet NaN with the input's sign (binary32 0x7fc00000, binary64 0x7ff8...) */
static int same_result32(float got, double want, float x, int nan_from_number)
{
  if (isnan(want)) {
    if (!isnan(got))
      return 0;
    if (nan_from_number)
      return 1;
    return ts_f2u(got) == (0x7fc00000u | (ts_f2u(x) & 0x80000000u));
  }
  return ts_f2u(got) == ts_f2u((float)want);
}

static int same_result64(double got, double want, double x, int nan_from_number)
{
  if (isnan(want)) {
    if (!isnan(got))
      return 0;
    return nan_from_number || ts_d2u(got) == (0x7ff8000000000000ull | (ts_d2u(x) & 0x8000000000000000ull));
  }
  return ts_d2u(got) == ts_d2u(want);
}

static const char *const opt_names[3] = { "", "+sat", "+flush" };

START_TEST(test_round_arrays)
{
  /* _i: 0 = mpe_round_f32 (binary32 source), 1 = mpe_round_f64 (binary64 source) */
  int f64 = _i;
  mpe_format *cust = NULL, *wide = NULL;
  ck_assert_int_eq(mpe_format_custom(&cust, 5, -20, 21), 0);
  ck_assert_int_eq(mpe_format_custom(&wide, 40, -300, 300), 0);
  fmt_case fs[] = { { "fp16", mpe_format_of(MPE_FP16), 0 }, { "bf16", mpe_format_of(MPE_BF16), 0 },
                    { "tf32", mpe_format_of(MPE_TF32), 0 }, { "e4m3", mpe_format_of(MPE_E4M3), 0 },
                    { "e5m2", mpe_format_of(MPE_E5M2), 0 }, { "p5[-20,21]", cust, 1 },
                    { "fp32", mpe_format_of(MPE_FP32), 0 }, { "p40[-300,300]", wide, 1 } };
  int nf = f64 ? 8 : 6;
  const mpe_format *src = mpe_format_of(f64 ? MPE_FP64 : MPE_FP32);
  uint64_t seed = ts_seed() + 77 + (uint64_t)f64;
  enum { NDRAW = 6000, CAP = 16384 };
  double *xd = malloc(sizeof(double) * CAP), *yd = malloc(sizeof(double) * CAP);
  float *xf = malloc(sizeof(float) * CAP), *yf = malloc(sizeof(float) * CAP);
  double *want = malloc(sizeof(double) * CAP);
  int *nfn = malloc(sizeof(int) * CAP), *skip = malloc(sizeof(int) * CAP);
  long all_bad = 0, oracle_checks = 0;
  for (int fi = 0; fi < nf; fi++) {
    const mpe_format *f = fs[fi].f;
    ts_fmt tf = ts_fmt_of(f);
    ts_bgen g;
    ts_bgen_init(&g, f, src, seed + (uint64_t)fi);
    size_t n = ts_bgen_table(&g, xd, CAP - NDRAW);
    for (int j = 0; j < NDRAW; j++, n++) {
      if (f64)
        xd[n] = ts_bgen_next(&g);
      else {
        xf[n] = ts_bgen_next_f32(&g);
        xd[n] = xf[n];
      }
    }
    if (!f64)
      for (size_t j = 0; j < n; j++)
        xf[j] = j < n - NDRAW ? (float)xd[j] : xf[j];
    for (int mode = 0; mode < MPE_NROUND; mode++)
      for (int opt = 0; opt < 3; opt++) {
        if (opt && (mode == MPE_SR || mode == MPE_SR_EQ))
          continue;
        mpe_round_opts o = { (mpe_round)mode, opt == 2, opt == 1, seed ^ 0x5eed5eedull, 12345 };
        for (size_t j = 0; j < n; j++) {
          skip[j] = 0;
          if (mode >= MPE_SR && isfinite(xd[j]) && xd[j] != 0) {
            mpz_t S;
            long X;
            mpz_init(S);
            d_to_z(S, &X, xd[j]);
            want[j] = expect_sr(S, X, &tf, (mpe_round)mode, sr_word(o.seed, o.offset + j), &skip[j]);
            nfn[j] = 0;
            mpz_clear(S);
          } else {
            mpe_round_opts od = o;
            od.round = mode >= MPE_SR ? MPE_RNE : (mpe_round)mode;   /* specials and zeros only */
            want[j] = expect_round(xd[j], &tf, &od, &nfn[j]);
            /* the GMP reference and the suite's MPFR one (ts_round_mpfr) agree */
            if (mode < MPE_SR && isfinite(xd[j]) && xd[j] != 0) {
              double m = ts_round_mpfr_d(xd[j], &tf, (mpe_round)mode);
              ck_assert_msg(ts_same_f64(m, ts_round_d(xd[j], &tf, (mpe_round)mode)), "references differ at %a", xd[j]);
              oracle_checks++;
            }
          }
        }
        long cnt[NLEVEL] = { 0 }, bad[NLEVEL] = { 0 }, skipped = 0;
        for (size_t j = 0; j < n; j++)
          skipped += skip[j];
        for (int li = 0; li < NLEVEL; li++) {
          if (set_level(levels[li]) < 0) {
            cnt[li] = -1;
            continue;
          }
          int rc = f64 ? mpe_round_f64(yd, xd, n, f, &o) : mpe_round_f32(yf, xf, n, f, &o);
          ck_assert_int_eq(rc, 0);
          int shown = 0;
          for (size_t j = 0; j < n; j++) {
            if (skip[j])
              continue;
            int ok = f64 ? same_result64(yd[j], want[j], xd[j], nfn[j]) : same_result32(yf[j], want[j], xf[j], nfn[j]);
            cnt[li]++;
            if (!ok) {
              bad[li]++;
              if (shown++ < 4)
                fprintf(stderr, "WRONG round_%s %s %s%s level%d: x=%a got %a want %a\n", f64 ? "f64" : "f32",
                        fs[fi].name, mpe_round_name((mpe_round)mode), opt_names[opt], levels[li], xd[j],
                        f64 ? yd[j] : (double)yf[j], want[j]);
            }
          }
          all_bad += bad[li];
        }
        printf("round %s %s %s%s:", f64 ? "f64" : "f32", fs[fi].name, mpe_round_name((mpe_round)mode), opt_names[opt]);
        for (int li = 0; li < NLEVEL; li++)
          if (cnt[li] < 0)
            printf(" level%d n/a;", levels[li]);
          else
            printf(" level%d %ld values, %ld wrong;", levels[li], cnt[li], bad[li]);
        if (skipped)
          printf(" (%ld overflowing SR cases not compared)", skipped);
        printf("\n");
      }
  }
  printf("round %s: the GMP and MPFR references agree on %ld values\n", f64 ? "f64" : "f32", oracle_checks);
  mpe_simd_level_set(-1);
  fflush(stdout);
  mpe_format_free(cust);
  mpe_format_free(wide);
  free(xd); free(yd); free(xf); free(yf); free(want); free(nfn); free(skip);
  ck_assert_msg(all_bad == 0, "%ld wrong rounded values (see stderr)", all_bad);
}
END_TEST

/* ------------------------------------------------------------------ element-wise kernels against MPFR */

enum { EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_FMA, EW_SCALE, EW_SQRT, EW_RECIP, NEW };
static const char *const ew_names[NEW] = { "add", "sub", "mul", "div", "fma", "scale", "sqrt", "recip" };
enum { EWP = 800 };   /* bits: exact for sums and products of binary32, sticky for the rest */

/* op on binary32 inputs with MPFR: truncated at EWP bits with a sticky bit (so that one
   more rounding to <= 24 bits is correct in every mode), as S * 2^X; returns 0, or
   1 for NaN (*v), 2 for inf or zero (*v with its sign). */
static int ew_exact(int op, float x, float y, float z, mpe_round mode, mpz_t S, long *X, double *v)
{
  mpfr_t a, b, c, r;
  mpfr_inits2(EWP, a, b, c, r, (mpfr_ptr)0);
  mpfr_set_flt(a, x, MPFR_RNDN);
  mpfr_set_flt(b, y, MPFR_RNDN);
  mpfr_set_flt(c, z, MPFR_RNDN);
  int ret = 0;
  for (int pass = 0; pass < 2; pass++) {
    /* pass 1 only for an exact zero under RD: the IEEE sign of a zero sum */
    mpfr_rnd_t rm = pass ? MPFR_RNDD : MPFR_RNDZ;
    int t;
    switch (op) {
    case EW_ADD: t = mpfr_add(r, a, b, rm); break;
    case EW_SUB: t = mpfr_sub(r, a, b, rm); break;
    case EW_MUL: case EW_SCALE: t = mpfr_mul(r, a, b, rm); break;
    case EW_DIV: t = mpfr_div(r, a, b, rm); break;
    case EW_FMA: t = mpfr_fma(r, a, b, c, rm); break;
    case EW_SQRT: t = mpfr_sqrt(r, a, rm); break;
    default: t = mpfr_ui_div(r, 1, a, rm); break;
    }
    if (mpfr_nan_p(r)) {
      *v = NAN;
      ret = 1;
      break;
    }
    if (mpfr_inf_p(r) || mpfr_zero_p(r)) {
      if (mpfr_zero_p(r) && t == 0 && mode == MPE_RD && pass == 0 && op != EW_SQRT)
        continue;
      *v = mpfr_get_d(r, MPFR_RNDN);
      ret = 2;
      break;
    }
    mpfr_exp_t e = mpfr_get_z_2exp(S, r);
    *X = (long)e;
    if (t) {                  /* sticky: round to odd at EWP bits */
      int neg = mpz_sgn(S) < 0;
      mpz_abs(S, S);
      mpz_setbit(S, 0);
      if (neg)
        mpz_neg(S, S);
    }
    break;
  }
  mpfr_clears(a, b, c, r, (mpfr_ptr)0);
  return ret;
}

/* The same value by MPFR alone: the operation truncated to EWP - 1 bits with a
   sticky bit at the EWP-th, rounded by the suite's MPFR oracle (which checks
   RNE, RZ, RU and RD against MPFR's own rounding in the format's range). */
static double ew_mpfr_oracle(int op, float x, float y, float z, const ts_fmt *f, mpe_round mode)
{
  mpfr_t a, b, c, r, t;
  mpfr_inits2(24, a, b, c, (mpfr_ptr)0);
  mpfr_init2(r, EWP);
  mpfr_init2(t, EWP - 1);
  mpfr_set_flt(a, x, MPFR_RNDN);
  mpfr_set_flt(b, y, MPFR_RNDN);
  mpfr_set_flt(c, z, MPFR_RNDN);
  int ix;
  switch (op) {
  case EW_ADD: ix = mpfr_add(t, a, b, MPFR_RNDZ); break;
  case EW_SUB: ix = mpfr_sub(t, a, b, MPFR_RNDZ); break;
  case EW_MUL: case EW_SCALE: ix = mpfr_mul(t, a, b, MPFR_RNDZ); break;
  case EW_DIV: ix = mpfr_div(t, a, b, MPFR_RNDZ); break;
  case EW_FMA: ix = mpfr_fma(t, a, b, c, MPFR_RNDZ); break;
  case EW_SQRT: ix = mpfr_sqrt(t, a, MPFR_RNDZ); break;
  default: ix = mpfr_ui_div(t, 1, a, MPFR_RNDZ); break;
  }
  mpfr_set(r, t, MPFR_RNDN);   /* exact */
  if (ix && mpfr_regular_p(r)) {
    mpfr_set_si_2exp(t, mpfr_sgn(r), mpfr_get_exp(r) - EWP, MPFR_RNDN);
    mpfr_add(r, r, t, MPFR_RNDN);   /* exact */
  }
  double v = ts_round_mpfr(r, f, mode, 0, NULL);
  mpfr_clears(a, b, c, r, t, (mpfr_ptr)0);
  return v;
}

static int ew_call(int op, float *out, const float *x, const float *y, const float *z, float alpha, size_t n,
                   const mpe_format *f, const mpe_round_opts *o)
{
  switch (op) {
  case EW_ADD: return mpe_ew_add(out, x, y, n, f, o);
  case EW_SUB: return mpe_ew_sub(out, x, y, n, f, o);
  case EW_MUL: return mpe_ew_mul(out, x, y, n, f, o);
  case EW_DIV: return mpe_ew_div(out, x, y, n, f, o);
  case EW_FMA: return mpe_ew_fma(out, x, y, z, n, f, o);
  case EW_SCALE: return mpe_ew_scale(out, alpha, x, n, f, o);
  case EW_SQRT: return mpe_ew_sqrt(out, x, n, f, o);
  default: return mpe_ew_recip(out, x, n, f, o);
  }
}

START_TEST(test_elementwise)
{
  int op = _i;
  static const mpe_type fts[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2, MPE_FP32 };
  static const float alphas[] = { 0x1.fffffep127f, 0x1p-149f, -0x1.000002p0f, 3.0f, 0.5f, -0.0f };
  uint64_t seed = ts_seed() + 3000 + 10 * (uint64_t)op;
  enum { N = 3000 };
  float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N), *z = malloc(sizeof(float) * N);
  float *out = malloc(sizeof(float) * N);
  double *want = malloc(sizeof(double) * N);
  int *nanin = malloc(sizeof(int) * N), *skip = malloc(sizeof(int) * N);
  long all_bad = 0, oracle_checks = 0;
  for (size_t fi = 0; fi < sizeof fts / sizeof fts[0]; fi++) {
    const mpe_format *f = mpe_format_of(fts[fi]);
    ts_fmt tf = ts_fmt_of(f);
    ts_bgen g;
    ts_bgen_init(&g, f, mpe_format_of(MPE_FP32), seed + fi);
    float alpha = alphas[fi % 6];
    for (int j = 0; j < N; j++) {
      x[j] = ts_bgen_next_f32(&g);
      z[j] = ts_bgen_next_f32(&g);
      /* y: independent, exact negation (cancellation), one ulp off, a power-of-two scaling */
      switch (ts_rand64(&g.state) % 4) {
      case 0: y[j] = ts_bgen_next_f32(&g); break;
      case 1: y[j] = -x[j]; break;
      case 2: y[j] = -nextafterf(x[j], (ts_rand64(&g.state) & 1) ? INFINITY : 0.0f); break;
      default: y[j] = ldexpf(x[j], (int)(ts_rand64(&g.state) % 60) - 30); break;
      }
      if (op == EW_FMA && j % 3 == 0)   /* z cancels x*y when it can */
        z[j] = -(float)((double)x[j] * y[j]);
    }
    for (int mode = 0; mode < MPE_NROUND; mode++)
      for (int opt = 0; opt < 3; opt++) {
        if (opt && mode >= MPE_SR)
          continue;
        mpe_round_opts o = { (mpe_round)mode, opt == 2, opt == 1, seed ^ 0xabcdefull, 99 };
        for (int j = 0; j < N; j++) {
          float yy = op == EW_SCALE ? alpha : y[j];
          const float xx = op == EW_SCALE ? alpha : x[j];
          float a1 = op == EW_SCALE ? x[j] : yy;
          mpz_t S;
          long X = 0;
          double v;
          mpz_init(S);
          int k = ew_exact(op, xx, a1, z[j], (mpe_round)mode, S, &X, &v);
          nanin[j] = 0;
          skip[j] = 0;
          if (k == 1) {
            /* sign of the first NaN operand (x, y, z; alpha after x), else +NaN */
            float ops[3] = { x[j], op == EW_SCALE ? alpha : y[j], z[j] };
            int nops = op == EW_FMA ? 3 : (op == EW_SQRT || op == EW_RECIP) ? 1 : 2;
            uint32_t bits = 0x7fc00000u;
            for (int q = 0; q < nops; q++)
              if (isnan(ops[q])) {
                bits |= ts_f2u(ops[q]) & 0x80000000u;
                break;
              }
            want[j] = ts_u2f(bits);
            nanin[j] = 2;   /* exact bits */
          } else if (k == 2) {
            mpe_round_opts od = o;
            od.round = mode >= MPE_SR ? MPE_RNE : (mpe_round)mode;
            int nfn;
            want[j] = expect_round(v, &tf, &od, &nfn);
            nanin[j] = nfn;
          } else if (mode >= MPE_SR) {
            want[j] = expect_sr(S, X, &tf, (mpe_round)mode, sr_word(o.seed, o.offset + (uint64_t)j), &skip[j]);
          } else {
            double r = ts_round_z(S, X, &tf, (mpe_round)mode, 0, NULL);
            double m = ew_mpfr_oracle(op, xx, a1, z[j], &tf, (mpe_round)mode);
            ck_assert_msg(ts_same_f64(m, r), "ew_%s %s references differ: %a %a %a: %a vs %a", ew_names[op],
                          mpe_round_name((mpe_round)mode), xx, a1, z[j], m, r);
            oracle_checks++;
            int nfn = isnan(r);
            if (isnan(r) || isinf(r))
              r = o.saturate ? (mpz_sgn(S) < 0 ? -tf.maxv : tf.maxv) : r;
            if (o.flush_subnormals && r != 0 && fabs(r) < ldexp(1, tf.emin))
              r = r < 0 ? -0.0 : 0.0;
            want[j] = r;
            nanin[j] = nfn;
          }
          mpz_clear(S);
        }
        long cnt[NLEVEL] = { 0 }, bad[NLEVEL] = { 0 };
        for (int li = 0; li < NLEVEL; li++) {
          if (set_level(levels[li]) < 0) {
            cnt[li] = -1;
            continue;
          }
          ck_assert_int_eq(ew_call(op, out, x, y, z, alpha, N, f, &o), 0);
          int shown = 0;
          for (int j = 0; j < N; j++) {
            if (skip[j])
              continue;
            int ok;
            if (isnan(want[j]))
              ok = isnan(out[j]) && (nanin[j] != 2 || ts_f2u(out[j]) == ts_f2u((float)want[j]));
            else
              ok = ts_f2u(out[j]) == ts_f2u((float)want[j]);
            cnt[li]++;
            if (!ok) {
              bad[li]++;
              if (shown++ < 4)
                fprintf(stderr, "WRONG ew_%s %s %s%s level%d: x=%a y=%a z=%a alpha=%a got %a want %a\n",
                        ew_names[op], mpe_format_name(f), mpe_round_name((mpe_round)mode), opt_names[opt],
                        levels[li], x[j], y[j], z[j], alpha, out[j], want[j]);
            }
          }
          all_bad += bad[li];
        }
        printf("ew_%s %s %s%s:", ew_names[op], mpe_format_name(f), mpe_round_name((mpe_round)mode), opt_names[opt]);
        for (int li = 0; li < NLEVEL; li++)
          if (cnt[li] < 0)
            printf(" level%d n/a;", levels[li]);
          else
            printf(" level%d %ld, %ld wrong;", levels[li], cnt[li], bad[li]);
        printf("\n");
      }
  }
  printf("ew_%s: the GMP and MPFR references agree on %ld values\n", ew_names[op], oracle_checks);
  mpe_simd_level_set(-1);
  fflush(stdout);
  free(x); free(y); free(z); free(out); free(want); free(nanin); free(skip);
  ck_assert_msg(all_bad == 0, "ew_%s: %ld wrong values (see stderr)", ew_names[op], all_bad);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("boundary");
  TCase *tc = tcase_create("generator");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_generator);
  tcase_add_test(tc, test_philox_kat);
  suite_add_tcase(s, tc);
  tc = tcase_create("tensor cores");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_tc_params_documented);
  tcase_add_loop_test(tc, test_oracle_gpu_data, 0, NGPUSET);
  tcase_add_loop_test(tc, test_tc_boundary, 0, NTCNAME);
  tcase_add_loop_test(tc, test_tc_custom_boundary, 0, NCUSTOM);
  tcase_add_test(tc, test_tc_fp16_split_boundary);
  tcase_add_test(tc, test_tc_b200_fp8_reproducer);
  suite_add_tcase(s, tc);
  tc = tcase_create("rounding");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_round_arrays, 0, 2);
  tcase_add_loop_test(tc, test_elementwise, 0, NEW);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
