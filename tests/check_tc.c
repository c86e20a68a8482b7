/* Tensor cores: mpe_mma / mpe_gemm against real GPU outputs, the hand vectors
   of docs/DESIGN.md §5, the exact and fma-chain references, the BLAS interface, the
   documented choices for zeros and specials, and independence from the SIMD
   level and the thread count. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <mpfr.h>
#include "testsupport.h"

/* ------------------------------------------------------------------ conformance */

static const struct { const char *gpu, *in; mpe_type t; int fp16; } configs[] = {
  { "V100", "fp16", MPE_FP16, 1 },
  { "A100", "fp16", MPE_FP16, 1 }, { "A100", "bf16", MPE_BF16, 0 }, { "A100", "tf32", MPE_TF32, 0 },
  { "A2", "fp16", MPE_FP16, 1 }, { "A2", "bf16", MPE_BF16, 0 }, { "A2", "tf32", MPE_TF32, 0 },
  { "Ada", "fp16", MPE_FP16, 1 }, { "Ada", "bf16", MPE_BF16, 0 }, { "Ada", "tf32", MPE_TF32, 0 },
  { "Ada", "E4M3", MPE_E4M3, 0 }, { "Ada", "E5M2", MPE_E5M2, 0 },
  { "L40S", "fp16", MPE_FP16, 1 }, { "L40S", "bf16", MPE_BF16, 0 }, { "L40S", "tf32", MPE_TF32, 0 },
  { "L40S", "E4M3", MPE_E4M3, 0 }, { "L40S", "E5M2", MPE_E5M2, 0 },
  { "H100", "fp16", MPE_FP16, 1 }, { "H100", "bf16", MPE_BF16, 0 }, { "H100", "tf32", MPE_TF32, 0 },
  { "H100", "E4M3", MPE_E4M3, 0 }, { "H100", "E5M2", MPE_E5M2, 0 },
  { "H200", "fp16", MPE_FP16, 1 }, { "H200", "bf16", MPE_BF16, 0 }, { "H200", "tf32", MPE_TF32, 0 },
  { "H200", "E4M3", MPE_E4M3, 0 }, { "H200", "E5M2", MPE_E5M2, 0 },
  { "B200", "fp16", MPE_FP16, 1 }, { "B200", "bf16", MPE_BF16, 0 }, { "B200", "tf32", MPE_TF32, 0 },
  { "B200", "E4M3", MPE_E4M3, 0 }, { "B200", "E5M2", MPE_E5M2, 0 },
};
#define NCONFIG (int)(sizeof configs / sizeof configs[0])

typedef struct {
  int rows, k;
  float *a, *b;        /* rows × k */
  uint32_t *c, *d;     /* rows */
} confdata;

/* One row per line: hex binary32 words (a, b) or one 32-digit binary string (c, d). */
static int read_rows(const char *rel, int base, uint32_t **out, int *k)
{
  int rows = ts_conf_rows(rel, base, 0, out, k);
  ck_assert_msg(rows >= 0, "%s: %s", rel, rows == -1 ? "missing (see the note above)" : "malformed (see stderr)");
  return rows;
}

/* binary32 bit patterns to their values; frees the patterns */
static float *to_floats(uint32_t *u, size_t n)
{
  float *v = malloc((n ? n : 1) * sizeof *v);
  ck_assert_ptr_nonnull(v);
  for (size_t i = 0; i < n; i++)
    v[i] = ts_u2f(u[i]);
  free(u);
  return v;
}

static int load_conf(int ci, const char *dfile, confdata *cd)
{
  char rel[512];
  const char *g = configs[ci].gpu, *in = configs[ci].in;
  int ka, kb, kc, kd;
  uint32_t *a, *b;
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/a_%s_%s.txt", g, in, g, in);
  int ra = read_rows(rel, 16, &a, &ka);
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/b_%s_%s.txt", g, in, g, in);
  int rb = read_rows(rel, 16, &b, &kb);
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/c_%s_fp32.txt", g, in, g);
  int rc = read_rows(rel, 2, &cd->c, &kc);
  snprintf(rel, sizeof rel, "tensor-cores/%s/%s/%s", g, in, dfile);
  int rd = read_rows(rel, 2, &cd->d, &kd);
  ck_assert_msg(ra > 0 && rb == ra && rc == ra && rd == ra && ka == kb && kc == 1 && kd == 1,
                "%s/%s: rows a=%d b=%d c=%d d=%d", g, in, ra, rb, rc, rd);
  cd->a = to_floats(a, (size_t)ra * ka);
  cd->b = to_floats(b, (size_t)rb * kb);
  cd->rows = ra;
  cd->k = ka;
  return ra;
}

static void free_conf(confdata *cd)
{
  free(cd->a); free(cd->b); free(cd->c); free(cd->d);
}

/* The GPU's model; the B200 rows are mma.sync results, whose FP8 model (late c)
   differs from the tcgen05.mma one that "b200" names. sync: the mma.sync model
   of every GPU (the FP8 runs with binary16 output issue mma.sync m16n8k32). */
static const mpe_tc_model *model_sync(int ci, int sync)
{
  char name[32];
  const char *g = configs[ci].gpu;
  size_t i = 0;
  for (; g[i] && i < 16; i++)
    name[i] = (char)(g[i] >= 'A' && g[i] <= 'Z' ? g[i] - 'A' + 'a' : g[i]);
  name[i] = 0;
  if (sync || !strcmp(name, "b200"))
    strcat(name, ":mma.sync");
  return mpe_tc_model_get(name, configs[ci].t);
}

static const mpe_tc_model *model_for(int ci)
{
  return model_sync(ci, 0);
}

static int same_bits(uint32_t got, uint32_t want)
{
  if ((want & 0x7fffffffu) > 0x7f800000u)
    return (got & 0x7fffffffu) > 0x7f800000u;
  return got == want;
}

/* Every row through mpe_mma with m = n = 1, then the same rows in square
   batches (row r of A times column r of B, C on the diagonal) so that the
   fast kernels see the data too. Under MPE_CHECK_SUBSET: every Nth row and
   every row whose d is zero, subnormal, infinite or NaN; every Nth batch and
   the last one (a partial batch where the rows do not fill it). Returns the
   mismatches; *compared gets the number of rows compared (once or twice). */
static int conf_row_kept(const confdata *cd, int r)
{
  const uint32_t de = cd->d[r] & 0x7f800000u;
  return ts_in_subset((unsigned long)r) || de == 0 || de == 0x7f800000u;
}

static int check_conf(const mpe_tc_model *m, int ci, const confdata *cd, int out16, int c_zero, long *compared)
{
  ck_assert_ptr_nonnull(m);
  int bad = 0, K = cd->k;
  *compared = 0;
  for (int r = 0; r < cd->rows; r++) {
    if (!conf_row_kept(cd, r))
      continue;
    ++*compared;
    float c = c_zero ? 0.0f : ts_u2f(cd->c[r]);
    uint32_t got;
    if (out16) {
      uint16_t ch = mpe_fp32_to_fp16(c, MPE_RNE), dh = 0;
      ck_assert_int_eq(mpe_mma(m, 1, 1, K, cd->a + (size_t)r * K, MPE_FP32, K, cd->b + (size_t)r * K,
                               MPE_FP32, 1, &ch, 1, &dh, MPE_FP16, 1), 0);
      got = ts_f2u(mpe_fp16_to_fp32(dh));
    } else {
      float d = 0;
      ck_assert_int_eq(mpe_mma(m, 1, 1, K, cd->a + (size_t)r * K, MPE_FP32, K, cd->b + (size_t)r * K,
                               MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1), 0);
      got = ts_f2u(d);
    }
    if (!same_bits(got, cd->d[r])) {
      if (bad < 5)
        fprintf(stderr, "%s/%s %s row %d: got %08x want %08x\n", configs[ci].gpu, configs[ci].in,
                out16 ? "fp16" : "fp32", r + 1, got, cd->d[r]);
      bad++;
    }
  }
  /* batches: B is K × n with column j = b-row (r0 + j) */
  enum { NB = 40 };
  float *bm = malloc(sizeof(float) * (size_t)K * NB), *cm = malloc(sizeof(float) * NB * NB);
  float *dm = malloc(sizeof(float) * NB * NB);
  uint16_t *ch = malloc(2 * NB * NB), *dh = malloc(2 * NB * NB);
  for (int r0 = 0; r0 < cd->rows; r0 += NB) {
    int nb = cd->rows - r0 < NB ? cd->rows - r0 : NB;
    if (!ts_in_subset((unsigned long)(r0 / NB)) && r0 + NB < cd->rows)
      continue;
    for (int i = 0; i < nb; i++)
      *compared += !conf_row_kept(cd, r0 + i);
    for (int l = 0; l < K; l++)
      for (int j = 0; j < nb; j++)
        bm[(size_t)l * nb + j] = cd->b[(size_t)(r0 + j) * K + l];
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) {
        float c = c_zero ? 0.0f : ts_u2f(cd->c[r0 + (i == j ? i : (i + j) % nb)]);
        cm[i * nb + j] = c;
        ch[i * nb + j] = mpe_fp32_to_fp16(c, MPE_RNE);
      }
    if (out16)
      ck_assert_int_eq(mpe_mma(m, nb, nb, K, cd->a + (size_t)r0 * K, MPE_FP32, K, bm, MPE_FP32, nb,
                               ch, nb, dh, MPE_FP16, nb), 0);
    else
      ck_assert_int_eq(mpe_mma(m, nb, nb, K, cd->a + (size_t)r0 * K, MPE_FP32, K, bm, MPE_FP32, nb,
                               cm, nb, dm, MPE_FP32, nb), 0);
    for (int i = 0; i < nb; i++) {
      uint32_t got = out16 ? ts_f2u(mpe_fp16_to_fp32(dh[i * nb + i])) : ts_f2u(dm[i * nb + i]);
      if (!same_bits(got, cd->d[r0 + i])) {
        if (bad < 10)
          fprintf(stderr, "%s/%s batch row %d: got %08x want %08x\n", configs[ci].gpu,
                  configs[ci].in, r0 + i + 1, got, cd->d[r0 + i]);
        bad++;
      }
    }
  }
  free(bm); free(cm); free(dm); free(ch); free(dh);
  return bad;
}

START_TEST(test_conformance_fp32)
{
  int ci = _i;
  char dfile[64];
  snprintf(dfile, sizeof dfile, "d_%s_fp32.txt", configs[ci].gpu);
  confdata cd;
  ck_assert_int_gt(load_conf(ci, dfile, &cd), 0);
  int fp8 = configs[ci].t == MPE_E4M3 || configs[ci].t == MPE_E5M2;
  int c_zero = fp8 && configs[ci].gpu[0] == 'H';   /* H100/H200 FP8 runs used c = 0 */
  long compared;
  int bad = check_conf(model_for(ci), ci, &cd, 0, c_zero, &compared);
  printf("check_tc: conformance %s/%s fp32: K=%d rows=%d compared=%ld mismatches=%d\n", configs[ci].gpu,
         configs[ci].in, cd.k, cd.rows, compared, bad);
  ts_conf_tally(compared, bad);
  free_conf(&cd);
  ck_assert_int_eq(bad, 0);
}
END_TEST

START_TEST(test_conformance_fp16)
{
  int ci = _i;
  if (!configs[ci].fp16)
    return;
  char dfile[64];
  snprintf(dfile, sizeof dfile, "d_%s_fp16.txt", configs[ci].gpu);
  confdata cd;
  ck_assert_int_gt(load_conf(ci, dfile, &cd), 0);
  long compared;
  int bad = check_conf(model_for(ci), ci, &cd, 1, 0, &compared);
  printf("check_tc: conformance %s/%s fp16: K=%d rows=%d compared=%ld mismatches=%d\n", configs[ci].gpu,
         configs[ci].in, cd.k, cd.rows, compared, bad);
  ts_conf_tally(compared, bad);
  free_conf(&cd);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* ------------------------------------------------------------------ MMA-Sim vectors */

/* The instructions of tests/conformance/mmasim (its generate.py and index.txt):
   MMA-Sim 2.1.1's outputs for random-bit and adversarial inputs of every
   instruction it and mpemu both model, against mpemu's built-in model of that
   instruction. late: the difference is documented (mpe_tc_model_get(3)): MMA-Sim
   has no mma.sync FP8 for B200, and mpemu's b200:mma.sync adds c after the block
   as the real B200 mma.sync rows show; compared with MMA-Sim's tcgen05.mma the
   differences are counted, not failed. FP64 sets (out = 2) hold binary64 A, B, C, D. */
static const struct {
  int id;
  const char *file, *what, *model;
  mpe_type t;
  int late;
  int nanany;   /* a NaN matches any NaN: MMA-Sim's FP64 fma chain and its CDNA1/CDNA2
                   models keep the host CPU's NaN bits, mpemu gives its one quiet NaN */
} mmasim_instrs[] = {
  { 1, "fp16_k4_f32", "Volta mma.m8n8k4.f32.f16.f16.f32", "v100", MPE_FP16, 0, 0 },
  { 2, "fp16_k4_f16", "Volta mma.m8n8k4.f16.f16.f16.f16", "v100", MPE_FP16, 0, 0 },
  { 3, "fp16_k8_f32", "Turing mma.m16n8k8.f32.f16.f16.f32", "t4", MPE_FP16, 0, 0 },
  { 4, "fp16_k8_f16", "Turing mma.m16n8k8.f16.f16.f16.f16", "t4", MPE_FP16, 0, 0 },
  { 10, "fp16_k8_f32", "Ampere mma.m16n8k8.f32.f16.f16.f32", "a100", MPE_FP16, 0, 0 },
  { 11, "fp16_k8_f16", "Ampere mma.m16n8k8.f16.f16.f16.f16", "a100", MPE_FP16, 0, 0 },
  { 12, "fp16_k16_f32", "Ampere mma.m16n8k16.f32.f16.f16.f32", "a100", MPE_FP16, 0, 0 },
  { 13, "fp16_k16_f16", "Ampere mma.m16n8k16.f16.f16.f16.f16", "a100", MPE_FP16, 0, 0 },
  { 14, "bf16_k8_f32", "Ampere mma.m16n8k8.f32.bf16.bf16.f32", "a100", MPE_BF16, 0, 0 },
  { 15, "bf16_k16_f32", "Ampere mma.m16n8k16.f32.bf16.bf16.f32", "a100", MPE_BF16, 0, 0 },
  { 16, "tf32_k4_f32", "Ampere mma.m16n8k4.f32.tf32.tf32.f32", "a100", MPE_TF32, 0, 0 },
  { 17, "tf32_k8_f32", "Ampere mma.m16n8k8.f32.tf32.tf32.f32", "a100", MPE_TF32, 0, 0 },
  { 20, "fp16_k8_f32", "Ada Lovelace mma.m16n8k8.f32.f16.f16.f32", "ada", MPE_FP16, 0, 0 },
  { 21, "fp16_k8_f16", "Ada Lovelace mma.m16n8k8.f16.f16.f16.f16", "ada", MPE_FP16, 0, 0 },
  { 22, "fp16_k16_f32", "Ada Lovelace mma.m16n8k16.f32.f16.f16.f32", "ada", MPE_FP16, 0, 0 },
  { 23, "fp16_k16_f16", "Ada Lovelace mma.m16n8k16.f16.f16.f16.f16", "ada", MPE_FP16, 0, 0 },
  { 24, "bf16_k8_f32", "Ada Lovelace mma.m16n8k8.f32.bf16.bf16.f32", "ada", MPE_BF16, 0, 0 },
  { 25, "bf16_k16_f32", "Ada Lovelace mma.m16n8k16.f32.bf16.bf16.f32", "ada", MPE_BF16, 0, 0 },
  { 26, "tf32_k4_f32", "Ada Lovelace mma.m16n8k4.f32.tf32.tf32.f32", "ada", MPE_TF32, 0, 0 },
  { 27, "tf32_k8_f32", "Ada Lovelace mma.m16n8k8.f32.tf32.tf32.f32", "ada", MPE_TF32, 0, 0 },
  { 28, "e4m3_k16_f32", "Ada Lovelace mma.m16n8k16.f32.e4m3.e4m3.f32", "ada", MPE_E4M3, 0, 0 },
  { 29, "e4m3_k16_f16", "Ada Lovelace mma.m16n8k16.f16.e4m3.e4m3.f16", "ada", MPE_E4M3, 0, 0 },
  { 30, "e4m3_k32_f32", "Ada Lovelace mma.m16n8k32.f32.e4m3.e4m3.f32", "ada", MPE_E4M3, 0, 0 },
  { 31, "e4m3_k32_f16", "Ada Lovelace mma.m16n8k32.f16.e4m3.e4m3.f16", "ada", MPE_E4M3, 0, 0 },
  { 32, "e5m2_k16_f32", "Ada Lovelace mma.m16n8k16.f32.e5m2.e5m2.f32", "ada", MPE_E5M2, 0, 0 },
  { 33, "e5m2_k16_f16", "Ada Lovelace mma.m16n8k16.f16.e5m2.e5m2.f16", "ada", MPE_E5M2, 0, 0 },
  { 34, "e5m2_k32_f32", "Ada Lovelace mma.m16n8k32.f32.e5m2.e5m2.f32", "ada", MPE_E5M2, 0, 0 },
  { 35, "e5m2_k32_f16", "Ada Lovelace mma.m16n8k32.f16.e5m2.e5m2.f16", "ada", MPE_E5M2, 0, 0 },
  { 40, "fp16_k8_f32", "Hopper mma.m16n8k8.f32.f16.f16.f32", "h100:mma.sync", MPE_FP16, 0, 0 },
  { 41, "fp16_k8_f16", "Hopper mma.m16n8k8.f16.f16.f16.f16", "h100:mma.sync", MPE_FP16, 0, 0 },
  { 42, "fp16_k16_f32", "Hopper mma.m16n8k16.f32.f16.f16.f32", "h100:mma.sync", MPE_FP16, 0, 0 },
  { 43, "fp16_k16_f16", "Hopper mma.m16n8k16.f16.f16.f16.f16", "h100:mma.sync", MPE_FP16, 0, 0 },
  { 44, "bf16_k8_f32", "Hopper mma.m16n8k8.f32.bf16.bf16.f32", "h100:mma.sync", MPE_BF16, 0, 0 },
  { 45, "bf16_k16_f32", "Hopper mma.m16n8k16.f32.bf16.bf16.f32", "h100:mma.sync", MPE_BF16, 0, 0 },
  { 46, "tf32_k4_f32", "Hopper mma.m16n8k4.f32.tf32.tf32.f32", "h100:mma.sync", MPE_TF32, 0, 0 },
  { 47, "tf32_k8_f32", "Hopper mma.m16n8k8.f32.tf32.tf32.f32", "h100:mma.sync", MPE_TF32, 0, 0 },
  { 50, "tf32_k8_f32", "Hopper wgmma.m64n8k8.f32.tf32.tf32", "h100", MPE_TF32, 0, 0 },
  { 51, "fp16_k16_f32", "Hopper wgmma.m64n8k16.f32.f16.f16", "h100", MPE_FP16, 0, 0 },
  { 52, "fp16_k16_f16", "Hopper wgmma.m64n8k16.f16.f16.f16", "h100", MPE_FP16, 0, 0 },
  { 53, "bf16_k16_f32", "Hopper wgmma.m64n8k16.f32.bf16.bf16", "h100", MPE_BF16, 0, 0 },
  { 54, "e4m3_k32_f32", "Hopper wgmma.m64n8k32.f32.e4m3.e4m3", "h100", MPE_E4M3, 0, 0 },
  { 55, "e4m3_k32_f16", "Hopper wgmma.m64n8k32.f16.e4m3.e4m3", "h100", MPE_E4M3, 0, 0 },
  { 56, "e5m2_k32_f32", "Hopper wgmma.m64n8k32.f32.e5m2.e5m2", "h100", MPE_E5M2, 0, 0 },
  { 57, "e5m2_k32_f16", "Hopper wgmma.m64n8k32.f16.e5m2.e5m2", "h100", MPE_E5M2, 0, 0 },
  { 60, "fp16_k8_f32", "Blackwell mma.m16n8k8.f32.f16.f16.f32", "b200:mma.sync", MPE_FP16, 0, 0 },
  { 61, "fp16_k8_f16", "Blackwell mma.m16n8k8.f16.f16.f16.f16", "b200:mma.sync", MPE_FP16, 0, 0 },
  { 62, "fp16_k16_f32", "Blackwell mma.m16n8k16.f32.f16.f16.f32", "b200:mma.sync", MPE_FP16, 0, 0 },
  { 63, "fp16_k16_f16", "Blackwell mma.m16n8k16.f16.f16.f16.f16", "b200:mma.sync", MPE_FP16, 0, 0 },
  { 64, "bf16_k8_f32", "Blackwell mma.m16n8k8.f32.bf16.bf16.f32", "b200:mma.sync", MPE_BF16, 0, 0 },
  { 65, "bf16_k16_f32", "Blackwell mma.m16n8k16.f32.bf16.bf16.f32", "b200:mma.sync", MPE_BF16, 0, 0 },
  { 66, "tf32_k4_f32", "Blackwell mma.m16n8k4.f32.tf32.tf32.f32", "b200:mma.sync", MPE_TF32, 0, 0 },
  { 67, "tf32_k8_f32", "Blackwell mma.m16n8k8.f32.tf32.tf32.f32", "b200:mma.sync", MPE_TF32, 0, 0 },
  { 70, "tf32_k8_f32", "Blackwell tcgen05.mma.m64n8k8.kind::tf32.f32.tf32.tf32", "b200", MPE_TF32, 0, 0 },
  { 71, "fp16_k16_f32", "Blackwell tcgen05.mma.m64n8k16.kind::f16.f32.f16.f16", "b200", MPE_FP16, 0, 0 },
  { 72, "fp16_k16_f16", "Blackwell tcgen05.mma.m64n8k16.kind::f16.f16.f16.f16", "b200", MPE_FP16, 0, 0 },
  { 73, "bf16_k16_f32", "Blackwell tcgen05.mma.m64n8k16.kind::f16.f32.bf16.bf16", "b200", MPE_BF16, 0, 0 },
  { 74, "e4m3_k32_f32", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f32.e4m3.e4m3", "b200", MPE_E4M3, 0, 0 },
  { 75, "e4m3_k32_f16", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f16.e4m3.e4m3", "b200", MPE_E4M3, 0, 0 },
  { 76, "e5m2_k32_f32", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f32.e5m2.e5m2", "b200", MPE_E5M2, 0, 0 },
  { 77, "e5m2_k32_f16", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f16.e5m2.e5m2", "b200", MPE_E5M2, 0, 0 },
  { 84, "e4m3_k32_f32", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f32.e4m3.e4m3", "b200:mma.sync", MPE_E4M3, 1, 0 },
  { 85, "e4m3_k32_f16", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f16.e4m3.e4m3", "b200:mma.sync", MPE_E4M3, 1, 0 },
  { 86, "e5m2_k32_f32", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f32.e5m2.e5m2", "b200:mma.sync", MPE_E5M2, 1, 0 },
  { 87, "e5m2_k32_f16", "Blackwell tcgen05.mma.m64n8k32.kind::f8f6f4.f16.e5m2.e5m2", "b200:mma.sync", MPE_E5M2, 1, 0 },
  { 100, "fp16_k8_f32", "RTX Blackwell mma.m16n8k8.f32.f16.f16.f32", "rtx-pro-6000", MPE_FP16, 0, 0 },
  { 101, "fp16_k8_f16", "RTX Blackwell mma.m16n8k8.f16.f16.f16.f16", "rtx-pro-6000", MPE_FP16, 0, 0 },
  { 102, "fp16_k16_f32", "RTX Blackwell mma.m16n8k16.f32.f16.f16.f32", "rtx-pro-6000", MPE_FP16, 0, 0 },
  { 103, "fp16_k16_f16", "RTX Blackwell mma.m16n8k16.f16.f16.f16.f16", "rtx-pro-6000", MPE_FP16, 0, 0 },
  { 104, "bf16_k8_f32", "RTX Blackwell mma.m16n8k8.f32.bf16.bf16.f32", "rtx-pro-6000", MPE_BF16, 0, 0 },
  { 105, "bf16_k16_f32", "RTX Blackwell mma.m16n8k16.f32.bf16.bf16.f32", "rtx-pro-6000", MPE_BF16, 0, 0 },
  { 106, "tf32_k4_f32", "RTX Blackwell mma.m16n8k4.f32.tf32.tf32.f32", "rtx-pro-6000", MPE_TF32, 0, 0 },
  { 107, "tf32_k8_f32", "RTX Blackwell mma.m16n8k8.f32.tf32.tf32.f32", "rtx-pro-6000", MPE_TF32, 0, 0 },
  { 108, "e4m3_k16_f32", "RTX Blackwell mma.m16n8k16.f32.e4m3.e4m3.f32", "rtx-pro-6000", MPE_E4M3, 0, 0 },
  { 109, "e4m3_k16_f16", "RTX Blackwell mma.m16n8k16.f16.e4m3.e4m3.f16", "rtx-pro-6000", MPE_E4M3, 0, 0 },
  { 110, "e4m3_k32_f32", "RTX Blackwell mma.m16n8k32.f32.e4m3.e4m3.f32", "rtx-pro-6000", MPE_E4M3, 0, 0 },
  { 111, "e4m3_k32_f16", "RTX Blackwell mma.m16n8k32.f16.e4m3.e4m3.f16", "rtx-pro-6000", MPE_E4M3, 0, 0 },
  { 112, "e5m2_k16_f32", "RTX Blackwell mma.m16n8k16.f32.e5m2.e5m2.f32", "rtx-pro-6000", MPE_E5M2, 0, 0 },
  { 113, "e5m2_k16_f16", "RTX Blackwell mma.m16n8k16.f16.e5m2.e5m2.f16", "rtx-pro-6000", MPE_E5M2, 0, 0 },
  { 114, "e5m2_k32_f32", "RTX Blackwell mma.m16n8k32.f32.e5m2.e5m2.f32", "rtx-pro-6000", MPE_E5M2, 0, 0 },
  { 115, "e5m2_k32_f16", "RTX Blackwell mma.m16n8k32.f16.e5m2.e5m2.f16", "rtx-pro-6000", MPE_E5M2, 0, 0 },
  { 116, "e4m3_k32_f32", "RTX Blackwell mma.m16n8k32.kind::f8f6f4.f32.e4m3.e4m3.f32", "rtx-pro-6000", MPE_E4M3, 0, 0 },
  { 117, "e4m3_k32_f16", "RTX Blackwell mma.m16n8k32.kind::f8f6f4.f16.e4m3.e4m3.f16", "rtx-pro-6000", MPE_E4M3, 0, 0 },
  { 118, "e5m2_k32_f32", "RTX Blackwell mma.m16n8k32.kind::f8f6f4.f32.e5m2.e5m2.f32", "rtx-pro-6000", MPE_E5M2, 0, 0 },
  { 119, "e5m2_k32_f16", "RTX Blackwell mma.m16n8k32.kind::f8f6f4.f16.e5m2.e5m2.f16", "rtx-pro-6000", MPE_E5M2, 0, 0 },
  /* FP64 (DMMA) and AMD CDNA v_mfma */
  { 150, "f64_k4_f64", "Ampere mma.m8n8k4.f64.f64.f64.f64", "a100", MPE_FP64, 0, 1 },
  { 151, "f64_k4_f64", "Ada Lovelace mma.m8n8k4.f64.f64.f64.f64", "ada", MPE_FP64, 0, 1 },
  { 152, "f64_k4_f64", "Hopper mma.m8n8k4.f64.f64.f64.f64", "h100", MPE_FP64, 0, 1 },
  { 153, "f64_k4_f64", "Hopper mma.m16n8k4.f64.f64.f64.f64", "h100", MPE_FP64, 0, 1 },
  { 154, "f64_k8_f64", "Hopper mma.m16n8k8.f64.f64.f64.f64", "h100", MPE_FP64, 0, 1 },
  { 155, "f64_k16_f64", "Hopper mma.m16n8k16.f64.f64.f64.f64", "h100", MPE_FP64, 0, 1 },
  { 156, "f64_k4_f64", "Blackwell mma.m8n8k4.f64.f64.f64.f64", "b200", MPE_FP64, 0, 1 },
  { 157, "f64_k4_f64", "RTX Blackwell mma.m8n8k4.f64.f64.f64.f64", "rtx-pro-6000", MPE_FP64, 0, 1 },
  { 200, "fp16_k4_f32", "CDNA1 v_mfma_f32_4x4x4f16", "mi100", MPE_FP16, 0, 1 },
  { 201, "fp16_k8_f32", "CDNA1 v_mfma_f32_32x32x8f16", "mi100", MPE_FP16, 0, 1 },
  { 202, "fp16_k16_f32", "CDNA1 v_mfma_f32_16x16x16f16", "mi100", MPE_FP16, 0, 1 },
  { 203, "bf16_k2_f32", "CDNA1 v_mfma_f32_4x4x2bf16", "mi100", MPE_BF16, 0, 1 },
  { 204, "bf16_k4_f32", "CDNA1 v_mfma_f32_32x32x4bf16", "mi100", MPE_BF16, 0, 1 },
  { 205, "bf16_k8_f32", "CDNA1 v_mfma_f32_16x16x8bf16", "mi100", MPE_BF16, 0, 1 },
  { 210, "fp16_k4_f32", "CDNA2 v_mfma_f32_4x4x4f16", "mi250", MPE_FP16, 0, 1 },
  { 211, "fp16_k8_f32", "CDNA2 v_mfma_f32_32x32x8f16", "mi250", MPE_FP16, 0, 1 },
  { 212, "fp16_k16_f32", "CDNA2 v_mfma_f32_16x16x16f16", "mi250", MPE_FP16, 0, 1 },
  { 213, "bf16_k2_f32", "CDNA2 v_mfma_f32_4x4x2bf16", "mi250:bf16", MPE_BF16, 0, 1 },
  { 214, "bf16_k4_f32", "CDNA2 v_mfma_f32_32x32x4bf16", "mi250:bf16", MPE_BF16, 0, 1 },
  { 215, "bf16_k8_f32", "CDNA2 v_mfma_f32_16x16x8bf16", "mi250:bf16", MPE_BF16, 0, 1 },
  { 220, "bf16_k4_f32", "CDNA2 v_mfma_f32_4x4x4bf16_1k", "mi250", MPE_BF16, 0, 1 },
  { 221, "bf16_k8_f32", "CDNA2 v_mfma_f32_32x32x8bf16_1k", "mi250", MPE_BF16, 0, 1 },
  { 222, "bf16_k16_f32", "CDNA2 v_mfma_f32_16x16x16bf16_1k", "mi250", MPE_BF16, 0, 1 },
  { 223, "f64_k4_f64", "CDNA2 v_mfma_f64_16x16x4f64", "mi250", MPE_FP64, 0, 1 },
  { 230, "fp16_k4_f32", "CDNA3 v_mfma_f32_4x4x4_16b_f16", "mi300", MPE_FP16, 0, 0 },
  { 231, "fp16_k8_f32", "CDNA3 v_mfma_f32_32x32x8_f16", "mi300", MPE_FP16, 0, 0 },
  { 232, "fp16_k16_f32", "CDNA3 v_mfma_f32_16x16x16_f16", "mi300", MPE_FP16, 0, 0 },
  { 233, "bf16_k4_f32", "CDNA3 v_mfma_f32_4x4x4_16b_bf16", "mi300", MPE_BF16, 0, 0 },
  { 234, "bf16_k8_f32", "CDNA3 v_mfma_f32_32x32x8_bf16", "mi300", MPE_BF16, 0, 0 },
  { 235, "bf16_k16_f32", "CDNA3 v_mfma_f32_16x16x16_bf16", "mi300", MPE_BF16, 0, 0 },
  { 236, "tf32_k4_f32", "CDNA3 v_mfma_f32_32x32x4_xf32", "mi300", MPE_TF32, 0, 0 },
  { 237, "tf32_k8_f32", "CDNA3 v_mfma_f32_16x16x8_xf32", "mi300", MPE_TF32, 0, 0 },
  { 238, "f64_k4_f64", "CDNA3 v_mfma_f64_16x16x4_f64", "mi300", MPE_FP64, 0, 1 },
  /* CDNA3 FP8 (gen_cdna3_fp8.py): fp8 = E4M3FNUZ, bf8 = E5M2FNUZ */
  { 240, "fnuz_k32_f32", "CDNA3 v_mfma_f32_16x16x32_fp8_fp8", "mi300", MPE_E4M3FNUZ, 0, 0 },
  { 241, "fnuz_k32_f32", "CDNA3 v_mfma_f32_16x16x32_fp8_bf8", "mi300", MPE_E4M3FNUZ, 0, 0 },
  { 242, "fnuz_k32_f32", "CDNA3 v_mfma_f32_16x16x32_bf8_fp8", "mi300", MPE_E5M2FNUZ, 0, 0 },
  { 243, "fnuz_k32_f32", "CDNA3 v_mfma_f32_16x16x32_bf8_bf8", "mi300", MPE_E5M2FNUZ, 0, 0 },
  { 244, "fnuz_k16_f32", "CDNA3 v_mfma_f32_32x32x16_fp8_fp8", "mi300", MPE_E4M3FNUZ, 0, 0 },
  { 245, "fnuz_k16_f32", "CDNA3 v_mfma_f32_32x32x16_fp8_bf8", "mi300", MPE_E4M3FNUZ, 0, 0 },
  { 246, "fnuz_k16_f32", "CDNA3 v_mfma_f32_32x32x16_bf8_fp8", "mi300", MPE_E5M2FNUZ, 0, 0 },
  { 247, "fnuz_k16_f32", "CDNA3 v_mfma_f32_32x32x16_bf8_bf8", "mi300", MPE_E5M2FNUZ, 0, 0 },
};
#define NMMASIM (int)(sizeof mmasim_instrs / sizeof mmasim_instrs[0])
/* B's format where it differs from A's: the mixed FNUZ FP8 pairs (_fp8_bf8,
   _bf8_fp8), whose sets hold byte codes each instruction reads in its own
   formats; else t */
static mpe_type mm_btype(int id, mpe_type t)
{
  return id == 241 || id == 245 ? MPE_E5M2FNUZ : id == 242 || id == 246 ? MPE_E4M3FNUZ : t;
}
/* the operand sets, one file each */
static const char *const mmasim_files[] = {
  "fp16_k4_f32", "fp16_k4_f16", "fp16_k8_f32", "fp16_k8_f16", "fp16_k16_f32", "fp16_k16_f16",
  "bf16_k8_f32", "bf16_k16_f32", "tf32_k4_f32", "tf32_k8_f32",
  "e4m3_k16_f32", "e4m3_k16_f16", "e4m3_k32_f32", "e4m3_k32_f16",
  "e5m2_k16_f32", "e5m2_k16_f16", "e5m2_k32_f32", "e5m2_k32_f16",
  "bf16_k2_f32", "bf16_k4_f32", "f64_k4_f64", "f64_k8_f64", "f64_k16_f64", "fnuz_k32_f32", "fnuz_k16_f32",
};
#define NMMASIM_FILES (int)(sizeof mmasim_files / sizeof mmasim_files[0])

/* the next line of f as words; fails the test on a short or malformed line */
static int mm_line(ts_conf *f, const char *name, uint64_t *w, int max, int want)
{
  int n;
  while ((n = ts_conf_words(f, 16, w, max)) == 0)
    ;
  ck_assert_msg(n == want || (want < 0 && n > 0), "mmasim/%s line %ld: %d words, want %d", name,
                ts_conf_lineno(f), n, want);
  return n;
}

/* bits x of a dt value is a NaN */
static int mm_isnan(uint64_t x, mpe_type dt)
{
  if (dt == MPE_FP64)
    return (x & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (x & 0xfffffffffffffull);
  if (dt == MPE_FP16)
    return (x & 0x7c00u) == 0x7c00u && (x & 0x3ffu);
  return (x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu);
}

/* the place in the file's block of output o of the compared rows */
static int ow_of(const int *rows, int Cc, int o)
{
  return rows[o / Cc] * Cc + o % Cc;
}

/* The documented class of the CDNA3 FP8 sets: an inf or NaN c. MMA-Sim reads
   its exponent with torch.frexp, which gives 0 for inf and NaN, so that where
   the largest partial sum's exponent exceeds align_bits (24) its MMA_GTR_FDPA
   drops c as it drops any c below the grid, and the result is that of c = +0;
   mpemu keeps IEEE's rule (c's inf or NaN is the result), as a c whose
   all-ones exponent is the largest would give. With K > 16 the running c
   that is inf or NaN may be dropped at any block (a NaN kept by one block is
   dropped by a later one with large products, and so is the NaN result of a
   block with a NaN operand): the result is then that of the blocks from there
   on, with c = +0. Returns 1 when output o (row o / Cc, column o % Cc of the
   operands in pa, pb) is that class: mpemu's result got is inf or NaN, and
   its result of the blocks from some block on (the first only when c is inf
   or NaN) with c = +0 is MMA-Sim's finite want. */
static int mm_cdrop(const mpe_tc_model *m, const char *what, const unsigned char *pa, mpe_type at,
                    const unsigned char *pb, mpe_type bt, int es, int K, int Cc, int o, uint64_t c, uint64_t got,
                    uint64_t want)
{
  if ((!strstr(what, "fp8") && !strstr(what, "bf8")) || ((uint32_t)got & 0x7f800000u) != 0x7f800000u)
    return 0;
  const float zero = 0.0f;
  for (int k0 = ((uint32_t)c & 0x7f800000u) == 0x7f800000u ? 0 : 16; k0 < K; k0 += 16) {
    float d;
    ck_assert_int_eq(mpe_mma(m, 1, 1, K - k0, pa + ((size_t)(o / Cc) * K + k0) * es, at, K,
                             pb + ((size_t)k0 * Cc + o % Cc) * es, bt, Cc, &zero, 1, &d, MPE_FP32, 1), 0);
    if (ts_f2u(d) == (uint32_t)want && isfinite(d))
      return 1;
  }
  return 0;
}

START_TEST(test_conformance_mmasim)
{
  const char *name = mmasim_files[_i];
  char rel[96];
  snprintf(rel, sizeof rel, "mmasim/%s.txt.gz", name);
  ts_conf *f = ts_conf_open(rel);
  ck_assert_msg(f != NULL, "%s: missing (see the note above)", rel);
  uint64_t w[80];
  mm_line(f, name, w, 80, 5);
  ck_assert_uint_eq(w[0], 0x4d4d4153u);
  const int K = (int)w[1], out16 = w[2] == 1, out64 = w[2] == 2, nblk = (int)w[3], ncols = (int)w[4];
  ck_assert(K >= 1 && K <= 64 && w[2] <= 2 && nblk >= 1 && ncols >= 1 && ncols <= 16);
  /* which column holds which instruction's outputs */
  int col_of[NMMASIM];
  for (int i = 0; i < NMMASIM; i++)
    col_of[i] = -1;
  for (int j = 0; j < ncols; j++) {
    int n = mm_line(f, name, w, 80, -1);
    ck_assert(w[0] == (uint64_t)j && n == 2 + (int)w[1]);
    for (int q = 2; q < n; q++) {
      int hit = 0;
      for (int i = 0; i < NMMASIM; i++)
        if (mmasim_instrs[i].id == (int)w[q] && !strcmp(mmasim_instrs[i].file, name)) {
          col_of[i] = j;
          hit = 1;
        }
      ck_assert_msg(hit, "mmasim/%s: instruction %d is not in this test's table", name, (int)w[q]);
    }
  }
  for (int i = 0; i < NMMASIM; i++)
    ck_assert_msg(strcmp(mmasim_instrs[i].file, name) || col_of[i] >= 0, "mmasim/%s: no outputs of %s", name,
                  mmasim_instrs[i].what);
  long outputs = 0, bad[NMMASIM] = { 0 }, catbad[NMMASIM][16] = { { 0 } }, cdrop[NMMASIM] = { 0 };
  for (int blk = 0; blk < nblk; blk++) {
    mm_line(f, name, w, 80, 3);
    const int R = (int)w[0], Cc = (int)w[1], cat = (int)w[2];
    ck_assert(R >= 1 && R <= 64 && Cc >= 1 && Cc <= 64 && cat < 16);
    uint64_t *A = malloc(sizeof *A * (size_t)R * K), *B = malloc(sizeof *B * (size_t)Cc * K);
    uint64_t *Cw = malloc(sizeof *Cw * (size_t)R * Cc), *Dw = malloc(sizeof *Dw * (size_t)R * Cc * ncols);
    ck_assert(A && B && Cw && Dw);
    for (int r = 0; r < R; r++) {
      mm_line(f, name, w, 80, K);
      for (int l = 0; l < K; l++)
        A[r * K + l] = w[l];
    }
    for (int c = 0; c < Cc; c++) {
      mm_line(f, name, w, 80, K);
      for (int l = 0; l < K; l++)
        B[c * K + l] = w[l];
    }
    for (int o = 0; o < R * Cc; o++) {
      mm_line(f, name, w, 80, 1 + ncols);
      Cw[o] = w[0];
      for (int j = 0; j < ncols; j++)
        Dw[(size_t)o * ncols + j] = w[1 + j];
    }
    /* the rows of A compared: all, or under MPE_CHECK_SUBSET every Nth row of
       the random categories (0-3; the adversarial ones are kept whole) */
    int rows[64], Rk = 0;
    for (int r = 0; r < R; r++)
      if (cat > 3 || ts_in_subset((unsigned long)r))
        rows[Rk++] = r;
    outputs += Rk * Cc;
    for (int i = 0; i < NMMASIM; i++) {
      if (col_of[i] < 0)
        continue;
      const mpe_tc_model *m = mpe_tc_model_get(mmasim_instrs[i].model, mmasim_instrs[i].t);
      ck_assert_msg(m != NULL, "%s", mmasim_instrs[i].model);
      const mpe_type t = mmasim_instrs[i].t;
      /* operands as stored: packed FP16/BF16/FP8 bits, TF32 as the raw binary32
         word, FP64 as binary64 */
      const int es = t == MPE_FP64 ? 8 : t == MPE_TF32 ? 4
                     : t == MPE_E4M3 || t == MPE_E5M2 || t == MPE_E4M3FNUZ || t == MPE_E5M2FNUZ ? 1 : 2;
      const mpe_type at = t == MPE_TF32 ? MPE_FP32 : t, bt = mm_btype(mmasim_instrs[i].id, at);
      const mpe_type dt = out64 ? MPE_FP64 : out16 ? MPE_FP16 : MPE_FP32;
      unsigned char *pa = malloc((size_t)R * K * es), *pb = malloc((size_t)K * Cc * es);
      void *pc = malloc((size_t)R * Cc * 8), *pd = malloc((size_t)R * Cc * 8);
      ck_assert(pa && pb && pc && pd);
      for (int r = 0; r < Rk; r++)
        for (int l = 0; l < K; l++)
          memcpy(pa + ((size_t)r * K + l) * es, &A[rows[r] * K + l], (size_t)es);   /* little-endian low bytes */
      for (int l = 0; l < K; l++)
        for (int c = 0; c < Cc; c++)
          memcpy(pb + ((size_t)l * Cc + c) * es, &B[c * K + l], (size_t)es);
      for (int o = 0; o < Rk * Cc; o++) {
        const int ow = rows[o / Cc] * Cc + o % Cc;   /* the output's place in the file's block */
        if (out64)
          memcpy((char *)pc + (size_t)o * 8, &Cw[ow], 8);
        else if (out16)
          ((uint16_t *)pc)[o] = (uint16_t)Cw[ow];
        else
          ((float *)pc)[o] = ts_u2f(Cw[ow]);
      }
      /* every SIMD level: level 2 against MMA-Sim, the others against level 2 */
      uint64_t *l2 = malloc(sizeof *l2 * (size_t)R * Cc);
      ck_assert_ptr_nonnull(l2);
      for (int lvl = 2; lvl >= 0; lvl--) {
        mpe_simd_level_set(lvl);
        ck_assert_int_eq(mpe_mma(m, Rk, Cc, K, pa, at, K, pb, bt, Cc, pc, Cc, pd, dt, Cc), 0);
        for (int o = 0; o < Rk * Cc; o++) {
          uint64_t got, want = Dw[(size_t)(rows[o / Cc] * Cc + o % Cc) * ncols + col_of[i]];
          if (out64)
            memcpy(&got, (char *)pd + (size_t)o * 8, 8);
          else
            got = out16 ? ((uint16_t *)pd)[o] : ts_f2u(((float *)pd)[o]);
          if (lvl < 2) {
            ck_assert_msg(got == l2[o], "mmasim %s: SIMD level %d output %d: %08llx, level 2 %08llx",
                          mmasim_instrs[i].what, lvl, o, (unsigned long long)got, (unsigned long long)l2[o]);
            continue;
          }
          l2[o] = got;
          if (mmasim_instrs[i].nanany && mm_isnan(got, dt) && mm_isnan(want, dt))
            continue;
          if (got != want && mm_cdrop(m, mmasim_instrs[i].what, pa, at, pb, bt, es, K, Cc, o, Cw[ow_of(rows, Cc, o)],
                                      got, want)) {
            cdrop[i]++;
            continue;
          }
          if (got != want) {
            if (bad[i] < 3 && !mmasim_instrs[i].late)
              fprintf(stderr, "mmasim %s (%s) block %d (category %d) output %d: got %08llx want %08llx\n",
                      mmasim_instrs[i].what, mmasim_instrs[i].model, blk, cat, o, (unsigned long long)got,
                      (unsigned long long)want);
            bad[i]++;
            catbad[i][cat]++;
          }
        }
      }
      free(l2);
      mpe_simd_level_set(-1);
      free(pa); free(pb); free(pc); free(pd);
    }
    free(A); free(B); free(Cw); free(Dw);
  }
  int tail;
  while ((tail = ts_conf_words(f, 16, w, 80)) == 0)
    ;
  ck_assert_msg(tail == -1, "mmasim/%s: data after the last block", name);
  ts_conf_close(f);
  long fails = 0;
  for (int i = 0; i < NMMASIM; i++) {
    if (col_of[i] < 0)
      continue;
    if (mmasim_instrs[i].late) {
      printf("check_tc: conformance mmasim %s against %s: outputs=%ld differences=%ld (documented: c added "
             "after the block, as the real B200 mma.sync rows show)\n",
             mmasim_instrs[i].what, mmasim_instrs[i].model, outputs, bad[i]);
      ck_assert_msg(bad[i] > 0, "%s: the late-c class should show on these inputs", mmasim_instrs[i].what);
      continue;
    }
    printf("check_tc: conformance mmasim %s as %s: outputs=%ld mismatches=%ld\n", mmasim_instrs[i].what,
           mmasim_instrs[i].model, outputs, bad[i]);
    if (cdrop[i])
      printf("check_tc:   documented (non-finite c that MMA-Sim drops): %ld\n", cdrop[i]);
    for (int c = 0; c < 16; c++)
      if (catbad[i][c])
        printf("check_tc:   category %d: %ld\n", c, catbad[i][c]);
    ts_conf_tally(outputs, bad[i]);
    fails += bad[i];
  }
  ck_assert_int_eq(fails, 0);
}
END_TEST

/* ------------------------------------------------------------------ helpers */

static uint16_t h(double x) { return mpe_fp64_to_fp16(x, MPE_RNE); }

/* row 0 of A times column 0 of B, K = 16 fp16, FP32 out */
static float hand(const char *model, const double *a, const double *b, int n, double c)
{
  uint16_t A[16] = { 0 }, B[16] = { 0 };
  for (int i = 0; i < n; i++) {
    A[i] = h(a[i]);
    B[i] = h(b[i]);
    ck_assert(isnan(a[i]) || mpe_fp16_to_fp32(A[i]) == (float)a[i]);
    ck_assert(isnan(b[i]) || mpe_fp16_to_fp32(B[i]) == (float)b[i]);
  }
  float C = (float)c, D = -1;
  ck_assert(isnan(c) || (double)C == c);
  const mpe_tc_model *m = mpe_tc_model_get(model, MPE_FP16);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(mpe_mma(m, 1, 1, 16, A, MPE_FP16, 16, B, MPE_FP16, 1, &C, 1, &D, MPE_FP32, 1), 0);
  return D;
}

/* docs/DESIGN.md §5: the Fasi et al. vectors that random data miss */
START_TEST(test_hand_vectors)
{
  static const char *const gpus[] = { "v100", "t4", "a100", "a2", "a30" };
  for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
    int v100 = g == 0;
    double x = 1 - 0x1p-11;
    double a1[] = { x }, b1[] = { x };
    ck_assert(hand(gpus[g], a1, b1, 1, 0) == (float)(1 - 0x1p-10 + 0x1p-22));
    double a2[] = { 1, 1 }, b2[] = { 2, 3 * 0x1p-24 };
    ck_assert(hand(gpus[g], a2, b2, 2, 0) == 2.0f);
    double a3[] = { 1 }, b3[] = { 1 };
    ck_assert(hand(gpus[g], a3, b3, 1, -(1 - 0x1p-24)) == (v100 ? 0x1p-23f : 0x1p-24f));
    double a4[] = { 1, 1, 1, 1 }, b4[] = { 1, 1, 1, 0x1p-23 };
    ck_assert(hand(gpus[g], a4, b4, 4, 1 + 0x1p-22 + 0x1p-23) == (float)(4 + 0x1p-21));
    double b5[] = { 1, 1, 1, 1 };
    ck_assert(hand(gpus[g], a4, b5, 4, 1 + 0x1p-22 + 0x1p-23) == 5.0f);
  }
  /* H100 keeps one more alignment bit than A100: same answers here */
  double a3[] = { 1 }, b3[] = { 1 };
  ck_assert(hand("h100", a3, b3, 1, -(1 - 0x1p-24)) == 0x1p-24f);
  /* the references */
  ck_assert(hand("exact", (double[]){ 1, 1 }, (double[]){ 2, 3 * 0x1p-24 }, 2, 0) == 2 + 0x1p-22f);
  ck_assert(hand("exact", (double[]){ 1, 1, 1, 1 }, (double[]){ 1, 1, 1, 1 }, 4, 1 + 0x1p-22 + 0x1p-23) ==
            (float)(5 + 0x1p-21));
  ck_assert(hand("fma-chain", (double[]){ 1, 1, 1, 1 }, (double[]){ 1, 1, 1, 1 }, 4, 1 + 0x1p-22 + 0x1p-23) ==
            (float)(5 + 0x1p-21));
}
END_TEST

/* The choices of mpe_tc_model_get(3) for the points the data do not settle. */
START_TEST(test_open_points)
{
  /* a product with a zero factor does not take part in E_max */
  ck_assert(hand("h100", (double[]){ 0x1p-20, 0 }, (double[]){ 1, 0x1p15 }, 2, 1) == (float)(1 + 0x1p-20));
  ck_assert(hand("v100", (double[]){ 0x1p-20, 0 }, (double[]){ 1, 0x1p15 }, 2, 1) == (float)(1 + 0x1p-20));
  /* an exact zero sum is +0, also from c = -0 and no products */
  float d = hand("h100", (double[]){ 1, -1 }, (double[]){ 1, 1 }, 2, 0);
  ck_assert(d == 0 && !signbit(d));
  d = hand("h100", (double[]){ 0 }, (double[]){ 0 }, 1, -0.0);
  ck_assert(d == 0 && !signbit(d));
  {
    /* the exact model follows IEEE: -0 only when every addend is -0 */
    double mz[16], pz[16];
    for (int i = 0; i < 16; i++) { mz[i] = -0.0; pz[i] = 0.0; }
    d = hand("exact", mz, pz, 16, -0.0);
    ck_assert(d == 0 && signbit(d));
    d = hand("exact", pz, pz, 16, -0.0);
    ck_assert(d == 0 && !signbit(d));
  }
  /* a tiny negative result that does not round to zero keeps its sign */
  d = hand("h100", (double[]){ -0x1p-24 }, (double[]){ 0x1p-24 }, 1, 0);
  ck_assert(d == -0x1p-48f);
  /* c = 0 counts with exponent -133 (Hopper, Blackwell), -132 (Turing..Ada):
     a = [2^-70, -2^-79], b = [2^-70, 2^-79]: -2^-158 is kept at F = 25 below
     E_max = -133 and cut at F = 24 below -132 */
  const mpe_tc_model *hb = mpe_tc_model_get("h100", MPE_BF16);
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(hb, &p), 0);
  ck_assert_int_eq(p.zero_c_counts, 1);
  ck_assert_int_eq(p.zero_c_exp, -133);
  p.zero_c_counts = 0;
  mpe_tc_model *nofloor;
  ck_assert_int_eq(mpe_tc_model_custom(&nofloor, &p), 0);
  ck_assert_str_eq(mpe_tc_model_name(nofloor), "custom");
  uint16_t A[2] = { mpe_fp64_to_bf16(0x1p-70, MPE_RNE), mpe_fp64_to_bf16(-0x1p-79, MPE_RNE) };
  uint16_t B[2] = { mpe_fp64_to_bf16(0x1p-70, MPE_RNE), mpe_fp64_to_bf16(0x1p-79, MPE_RNE) };
  float C = 0, D;
  ck_assert_int_eq(mpe_mma(hb, 1, 1, 2, A, MPE_BF16, 2, B, MPE_BF16, 1, &C, 1, &D, MPE_FP32, 1), 0);
  ck_assert(D == 0x1p-140f - 0x1p-149f);
  ck_assert_int_eq(mpe_mma(mpe_tc_model_get("a100", MPE_BF16), 1, 1, 2, A, MPE_BF16, 2, B, MPE_BF16, 1, &C, 1, &D,
                           MPE_FP32, 1), 0);
  ck_assert(D == 0x1p-140f);
  ck_assert_int_eq(mpe_mma(nofloor, 1, 1, 2, A, MPE_BF16, 2, B, MPE_BF16, 1, &C, 1, &D, MPE_FP32, 1), 0);
  ck_assert(D == 0x1p-140f - 0x1p-149f);
  mpe_tc_model_free(nofloor);
  mpe_tc_model_free(NULL);
  mpe_tc_model_free((mpe_tc_model *)hb);   /* built-in: ignored */
  ck_assert_ptr_nonnull(mpe_tc_model_get("h100", MPE_BF16));
}
END_TEST

/* d = a.b + c for one row (binary32 operands, exact in the model's input
   format or, for TF32, raw bits), as a 40 x 56 mpe_mma whose every output is
   that row, at every SIMD level: all outputs of all levels must agree; returns
   their bits (binary32, or binary16 with out16). */
static uint32_t repro_levels(const mpe_tc_model *m, const float *a, const float *b, int k, float c, int out16)
{
  enum { M = 40, N = 56 };
  float *A = malloc(sizeof(float) * M * (size_t)k), *B = malloc(sizeof(float) * (size_t)k * N);
  static float C[M * N], D[M * N];
  static uint16_t Ch[M * N], Dh[M * N];
  ck_assert(A && B);
  for (int i = 0; i < M; i++)
    for (int l = 0; l < k; l++)
      A[i * k + l] = a[l];
  for (int l = 0; l < k; l++)
    for (int j = 0; j < N; j++)
      B[l * N + j] = b[l];
  for (int i = 0; i < M * N; i++) {
    C[i] = c;
    Ch[i] = mpe_fp32_to_fp16(c, MPE_RNE);
  }
  uint32_t ref = 0;
  for (int lvl = 2; lvl >= 0; lvl--) {
    mpe_simd_level_set(lvl);
    if (out16)
      ck_assert_int_eq(mpe_mma(m, M, N, k, A, MPE_FP32, k, B, MPE_FP32, N, Ch, N, Dh, MPE_FP16, N), 0);
    else
      ck_assert_int_eq(mpe_mma(m, M, N, k, A, MPE_FP32, k, B, MPE_FP32, N, C, N, D, MPE_FP32, N), 0);
    for (int i = 0; i < M * N; i++) {
      uint32_t got = out16 ? Dh[i] : ts_f2u(D[i]);
      if (lvl == 2 && i == 0)
        ref = got;
      ck_assert_msg(got == ref, "level %d output %d: %08x, level 2 gave %08x", lvl, i, got, ref);
    }
  }
  mpe_simd_level_set(-1);
  free(A);
  free(B);
  return ref;
}

/* a built-in model with some fields changed */
static mpe_tc_model *variant(const char *name, mpe_type in, int zero_c_exp, int zero_sign, int tf32_nan)
{
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get(name, in), &p), 0);
  p.zero_c_exp = zero_c_exp;
  p.zero_sign = zero_sign;
  p.tf32_nan = tf32_nan;
  mpe_tc_model *m;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), 0);
  return m;
}

/* The four classes where mpemu and MMA-Sim 2.1.1 once differed, each with its
   reproducer, the built-in models' answer and the other setting's, at every
   SIMD level (mpe_tc_model_get(3), "Where the models are settled"). */
START_TEST(test_agreement_classes)
{
  /* 1. B200 FP8 (FP32 out, E4M3): a = [1], b = [1], c = 3*2^-25. tcgen05.mma keeps c
     in the truncating block (MMA-Sim): 1; mma.sync adds it late (the real rows): 1 + 2^-23 */
  const float one = 1.0f;
  const mpe_tc_model *tc5 = mpe_tc_model_get("b200", MPE_E4M3), *sync = mpe_tc_model_get("b200:mma.sync", MPE_E4M3);
  ck_assert_ptr_eq(tc5, mpe_tc_model_get("b200:tcgen05", MPE_E4M3));
  ck_assert_uint_eq(repro_levels(tc5, &one, &one, 1, 3 * 0x1p-25f, 0), 0x3f800000u);
  ck_assert_uint_eq(repro_levels(sync, &one, &one, 1, 3 * 0x1p-25f, 0), 0x3f800001u);
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("rtx-pro-6000", MPE_E4M3), &one, &one, 1, 3 * 0x1p-25f, 0),
                    0x3f800000u);
  /* 2. the zero-C floor (h100 BF16, FP32 out): a = [2^-65, -2^-76], b = [2^-65, 2^-76],
     c = 0: E_max = max(-130, -133) keeps -2^-152: 2^-130 - 2^-149; at emin it is cut */
  const float a2[2] = { 0x1p-65f, -0x1p-76f }, b2[2] = { 0x1p-65f, 0x1p-76f };
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("h100", MPE_BF16), a2, b2, 2, 0, 0), 0x0007ffffu);
  mpe_tc_model *old = variant("h100", MPE_BF16, 0, 1, 0);
  ck_assert_uint_eq(repro_levels(old, a2, b2, 2, 0, 0), 0x00080000u);
  mpe_tc_model_free(old);
  /* the binary16-output floor (-21 Hopper, -20 Turing..Ada, -19 Volta): fp16
     a = [3*2^-13, -2^-23], b = [2^-12, 2^-23], c = 0: 3*2^-25 - 2^-46 is just
     below the tie 1.5 * 2^-24 when -2^-46 is kept (E_max = -21, F = 25: 0x0001),
     the tie itself, to even, when it is cut (0x0002). In the fast kernels' window. */
  const float a3[2] = { 3 * 0x1p-13f, -0x1p-23f }, b3[2] = { 0x1p-12f, 0x1p-23f };
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("h100", MPE_FP16), a3, b3, 2, 0, 1), 0x0001u);
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("b200", MPE_FP16), a3, b3, 2, 0, 1), 0x0001u);
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("a100", MPE_FP16), a3, b3, 2, 0, 1), 0x0002u);
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("v100", MPE_FP16), a3, b3, 2, 0, 1), 0x0002u);
  old = variant("h100", MPE_FP16, 0, 1, 0);
  ck_assert_uint_eq(repro_levels(old, a3, b3, 2, 0, 1), 0x0002u);
  mpe_tc_model_free(old);
  mpe_tc_model *deep = variant("a100", MPE_FP16, -134, 1, 0);   /* -22 with binary16 out */
  ck_assert_uint_eq(repro_levels(deep, a3, b3, 2, 0, 1), 0x0001u);
  mpe_tc_model_free(deep);
  /* 3. the sign of a zero result: a negative sum that rounds to zero. FP32 out
     (bf16 -2^-75 * 2^-75 = -2^-150) and binary16 out (fp16 -2^-13 * 2^-13 =
     -2^-26, in the fast kernels' window): +0 by default, -0 under the IEEE rule */
  const float a4 = -0x1p-75f, b4 = 0x1p-75f, a5 = -0x1p-13f, b5 = 0x1p-13f;
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("h100", MPE_BF16), &a4, &b4, 1, 0, 0), 0x00000000u);
  ck_assert_uint_eq(repro_levels(mpe_tc_model_get("h100", MPE_FP16), &a5, &b5, 1, 0, 1), 0x0000u);
  mpe_tc_model *ieee = variant("h100", MPE_BF16, -133, 0, 0);
  ck_assert_uint_eq(repro_levels(ieee, &a4, &b4, 1, 0, 0), 0x80000000u);
  mpe_tc_model_free(ieee);
  ieee = variant("h100", MPE_FP16, -133, 0, 0);
  ck_assert_uint_eq(repro_levels(ieee, &a5, &b5, 1, 0, 1), 0x8000u);
  ck_assert_uint_eq(repro_levels(ieee, &a5, &b5, 1, -0.0f, 1), 0x8000u);
  mpe_tc_model_free(ieee);
  /* 4. TF32 NaN with its payload only in the 13 dropped bits: +-inf by default
     (the bits are dropped first), the canonical NaN with tf32_nan = 0 */
  const float nanlo = ts_u2f(0x7f800001u), nneg = ts_u2f(0xff801000u), nanhi = ts_u2f(0x7fc00000u);
  const mpe_tc_model *tf = mpe_tc_model_get("h100", MPE_TF32);
  ck_assert_uint_eq(repro_levels(tf, &nanlo, &one, 1, 0, 0), 0x7f800000u);
  ck_assert_uint_eq(repro_levels(tf, &nneg, &one, 1, 1, 0), 0xff800000u);
  ck_assert_uint_eq(repro_levels(tf, &nanhi, &one, 1, 0, 0), 0x7fffffffu);
  ck_assert_uint_eq(repro_levels(tf, &nanlo, &nneg, 1, 0, 0), 0xff800000u);
  mpe_tc_model *keep = variant("h100", MPE_TF32, -133, 1, 0);
  ck_assert_uint_eq(repro_levels(keep, &nanlo, &one, 1, 0, 0), 0x7fffffffu);
  mpe_tc_model_free(keep);
  /* cuBLAS's rounding input rule keeps a NaN a NaN (tf32_nan acts with truncation only) */
  mpe_tc_params p;
  mpe_tc_model_params(tf, &p);
  ck_assert_int_eq(p.tf32_nan, 1);
  p.input_round = MPE_RNE;
  mpe_tc_model *bad;
  ck_assert_int_eq(mpe_tc_model_custom(&bad, &p), 0);
  ck_assert_uint_eq(repro_levels(bad, &nanlo, &one, 1, 0, 0), 0x7fffffffu);
  mpe_tc_model_free(bad);
}
END_TEST

/* fp16_split (mpe_tc_model_get(3), "split"): hand vectors whose binary16 results follow
   from the definition, at every SIMD level, against the same models without it. */
static mpe_tc_model *split_variant(const char *name, mpe_type in, int split)
{
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get(name, in), &p), 0);
  p.fp16_split = split;
  mpe_tc_model *m;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), 0);
  return m;
}

START_TEST(test_fp16_split)
{
  const char *names[] = { "h100:mma.sync", "b200:mma.sync" };
  for (int ni = 0; ni < 2; ni++) {
    const mpe_tc_model *m = mpe_tc_model_get(names[ni], MPE_E5M2);
    mpe_tc_params p;
    ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
    ck_assert_int_eq(p.fp16_split, 25);
    mpe_tc_model *m0 = split_variant(names[ni], MPE_E5M2, 0), *m18 = split_variant(names[ni], MPE_E5M2, 18);
    /* F': the first block (k = 0) gives 1; the second sums that, 2^-11 (k = 2) and
       2^-j (k = 3): above the tie 1 + 2^-11 (so 1 + 2^-10) when 2^-j survives, j <= F' */
    for (int j = 18; j <= 26; j++) {
      float a[4] = { 1, 0, 0x1p-5f, 0x1p-14f }, b[4] = { 1, 0, 0x1p-6f, ldexpf(1, 14 - j) };
      ck_assert_uint_eq(repro_levels(m, a, b, 4, 0, 1), j <= 25 ? 0x3c01u : 0x3c00u);
      ck_assert_uint_eq(repro_levels(m18, a, b, 4, 0, 1), j <= 18 ? 0x3c01u : 0x3c00u);
    }
    /* the halves: k mod 4 in {0, 1} first. [1, 2^-11 | 2^-22]: the first block rounds
       its tie 1 + 2^-11 to 1, so 2^-22 meets 1 alone; [2^-22 | 1, 2^-11]: the second
       block holds all three, above the tie */
    float a1[4] = { 1, 0x1p-5f, 0x1p-11f, 0 }, b1[4] = { 1, 0x1p-6f, 0x1p-11f, 0 };
    float a2[4] = { 0x1p-11f, 0, 1, 0x1p-5f }, b2[4] = { 0x1p-11f, 0, 1, 0x1p-6f };
    ck_assert_uint_eq(repro_levels(m, a1, b1, 4, 0, 1), 0x3c00u);
    ck_assert_uint_eq(repro_levels(m, a2, b2, 4, 0, 1), 0x3c01u);
    /* the same a1, b1 with the halves in other 4-groups of a K = 8 block: k = 4, 5, 6 */
    float a3[8] = { 0, 0, 0, 0, 1, 0x1p-5f, 0x1p-11f, 0 }, b3[8] = { 0, 0, 0, 0, 1, 0x1p-6f, 0x1p-11f, 0 };
    ck_assert_uint_eq(repro_levels(m, a3, b3, 8, 0, 1), 0x3c00u);
    /* c after the blocks: the products 1 and 2^-11 tie to 1, c = 2^-11 (binary16) is added
       to that 1 (a tie again: 1); inside a block the three would make 1 + 2^-10 */
    float a4[2] = { 1, 0x1p-5f }, b4[2] = { 1, 0x1p-6f };
    ck_assert_uint_eq(repro_levels(m, a4, b4, 2, 0x1p-11f, 1), 0x3c00u);
    /* specials: the first block overflows to +inf; c = -inf then gives NaN (0x7fff), where a
       c inside the block gives -inf */
    float a5[4] = { 57344, 0, 1, 0 }, b5[4] = { 57344, 0, 1, 0 };
    ck_assert_uint_eq(repro_levels(m, a5, b5, 4, -INFINITY, 1), 0x7fffu);
    ck_assert_uint_eq(repro_levels(m, a5, b5, 4, 0, 1), 0x7c00u);
    /* binary32 output does not read the field */
    ck_assert_uint_eq(repro_levels(m, a1, b1, 4, 0, 0), repro_levels(m0, a1, b1, 4, 0, 0));
    ck_assert_uint_eq(repro_levels(m, a2, b2, 4, 0x1p-11f, 0), repro_levels(m0, a2, b2, 4, 0x1p-11f, 0));
    /* without the field: one block (h100:mma.sync F = 13 with c inside; b200:mma.sync
       products alone, then c) */
    float a6[4] = { 1, 0, 0x1p-5f, 0x1p-14f }, b6[4] = { 1, 0, 0x1p-6f, 0x1p-8f };   /* j = 22 */
    ck_assert_uint_eq(repro_levels(m0, a6, b6, 4, 0, 1), ni == 0 ? 0x3c00u : 0x3c01u);
    ck_assert_uint_eq(repro_levels(m0, a1, b1, 4, 0, 1), ni == 0 ? 0x3c00u : 0x3c01u);
    mpe_tc_model_free(m0);
    mpe_tc_model_free(m18);
  }
  /* 2:4 sparse with binary16 C: refused (what mma.sp computes there is not known) */
  float v[2] = { 1, 1 }, bs[4] = { 1, 1, 1, 1 };
  uint16_t meta = 0, ch = 0;
  ck_assert_int_eq(mpe_gemm_sp(mpe_tc_model_get("h100:mma.sync", MPE_E4M3), 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 1,
                               1, 4, 1.0f, v, MPE_FP32, 2, &meta, 1, bs, MPE_FP32, 1, 0.0f, &ch, MPE_FP16, 1),
                   MPE_EUNSUP);
  /* parameter checks */
  mpe_tc_params p;
  mpe_tc_model *bad = NULL;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100:mma.sync", MPE_E4M3), &p), 0);
  for (int v = -1; v <= 60; v += 61) {
    p.fp16_split = v;
    ck_assert_int_eq(mpe_tc_model_custom(&bad, &p), MPE_EINVAL);
  }
  p.fp16_split = 54;   /* L = 32: F' + 2 + 6 <= 62 */
  ck_assert_int_eq(mpe_tc_model_custom(&bad, &p), 0);
  mpe_tc_model_free(bad);
  p.fp16_split = 55;
  ck_assert_int_eq(mpe_tc_model_custom(&bad, &p), MPE_EINVAL);
  p.fp16_split = 25;
  p.block = 30;        /* not a multiple of 4 */
  ck_assert_int_eq(mpe_tc_model_custom(&bad, &p), MPE_EINVAL);
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100:mma.sync", MPE_FP16), &p), 0);
  p.fp16_split = 25;   /* FP8 models only */
  ck_assert_int_eq(mpe_tc_model_custom(&bad, &p), MPE_EINVAL);
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("mi300", MPE_E4M3FNUZ), &p), 0);
  p.fp16_split = 25;
  ck_assert_int_eq(mpe_tc_model_custom(&bad, &p), MPE_EINVAL);
  ck_assert_ptr_null(bad);
}
END_TEST

/* mpe_tc_model_name_at: every canonical name once, then the aliases, each valid for some type */
START_TEST(test_model_name_at)
{
  enum { NT = 16 };   /* mpe_type values 0 (MPE_FP64) .. 15 (MPE_E8M0) */
  ck_assert_ptr_null(mpe_tc_model_name_at(-1));
  ck_assert_ptr_null(mpe_tc_model_name_at(INT_MIN));
  ck_assert_ptr_null(mpe_tc_model_name_at(INT_MAX));
  int n = 0, first_alias = -1;
  for (const char *s; (s = mpe_tc_model_name_at(n)) != NULL; n++) {
    ck_assert_msg(n < 1000, "no end to the list");
    ck_assert_ptr_eq(mpe_tc_model_name_at(n), s);   /* the same string each time */
    for (int j = 0; j < n; j++)
      ck_assert_msg(strcmp(mpe_tc_model_name_at(j), s) != 0, "%s listed twice", s);
    int types = 0, canonical = 0;
    for (int t = 0; t < NT; t++) {
      const mpe_tc_model *m = mpe_tc_model_get(s, (mpe_type)t);
      if (!m)
        continue;
      types++;
      canonical += strcmp(mpe_tc_model_name(m), s) == 0;
    }
    ck_assert_msg(types > 0, "%s: mpe_tc_model_get gives no model", s);
    /* a canonical name is the name of a model it finds (for another type it may select a row
       by instruction: "h100:mma.sync" FP64 is "h100"); an alias is none's, and comes last */
    if (canonical == 0 && first_alias < 0)
      first_alias = n;
    ck_assert_msg(canonical == 0 || first_alias < 0, "%s: a canonical name after the aliases", s);
  }
  ck_assert_ptr_null(mpe_tc_model_name_at(n));
  ck_assert_int_gt(first_alias, 20);
  ck_assert_int_gt(n, first_alias);
  /* the names of each family, and the models of the MMA-Sim vectors, are listed */
  static const char *const want[] = { "v100", "rtx-pro-6000", "h100:mma.sync", "b200:mxf4nvf4", "exact",
                                      "fma-chain", "mi100", "mi250:bf16", "arm-bfmmla-ebf16", "amx-fp16",
                                      "amx-int8", "avx-vnni:vpdpbusds", "a30", "h200", "fma", "mi325x" };
  for (size_t w = 0; w < sizeof want / sizeof want[0] + sizeof mmasim_instrs / sizeof mmasim_instrs[0]; w++) {
    const char *s = w < sizeof want / sizeof want[0] ? want[w] : mmasim_instrs[w - sizeof want / sizeof want[0]].model;
    int found = 0;
    for (int i = 0; i < n && !found; i++)
      found = strcmp(mpe_tc_model_name_at(i), s) == 0;
    ck_assert_msg(found, "%s is not listed", s);
  }
}
END_TEST

/* Instruction names: "gpu[:instr]", the GPU alone naming cuBLAS's instruction. */
START_TEST(test_instruction_names)
{
  static const struct { const char *name; mpe_type t; const char *canon; int instr; } nm[] = {
    { "h100", MPE_FP16, "h100", MPE_TC_WGMMA }, { "h100:wgmma", MPE_FP16, "h100", MPE_TC_WGMMA },
    { "H200:WGMMA.MMA_ASYNC", MPE_BF16, "h100", MPE_TC_WGMMA },
    { "h100:mma.sync", MPE_FP16, "h100:mma.sync", MPE_TC_MMA_SYNC },
    { "h200:mma", MPE_E4M3, "h100:mma.sync", MPE_TC_MMA_SYNC },
    { "b200", MPE_E4M3, "b200", MPE_TC_TCGEN05 }, { "b200:tcgen05.mma", MPE_TF32, "b200", MPE_TC_TCGEN05 },
    { "b200:mma.sync", MPE_E5M2, "b200:mma.sync", MPE_TC_MMA_SYNC },
    { "a100", MPE_TF32, "a100", MPE_TC_MMA_SYNC }, { "a30:mma.sync", MPE_BF16, "a100", MPE_TC_MMA_SYNC },
    { "v100:mma.sync", MPE_FP16, "v100", MPE_TC_MMA_SYNC }, { "l40s:mma.sync", MPE_E4M3, "ada", MPE_TC_MMA_SYNC },
    { "rtx-pro-6000", MPE_E4M3, "rtx-pro-6000", MPE_TC_MMA_SYNC },
    { "h100:mma.sync", MPE_INT8, "h100:mma.sync", MPE_TC_MMA_SYNC }, { "b200", MPE_INT8, "b200", MPE_TC_TCGEN05 },
    { "exact", MPE_FP16, "exact", MPE_TC_INSTR_NONE },
  };
  for (size_t i = 0; i < sizeof nm / sizeof nm[0]; i++) {
    const mpe_tc_model *m = mpe_tc_model_get(nm[i].name, nm[i].t);
    ck_assert_msg(m != NULL, "%s", nm[i].name);
    ck_assert_str_eq(mpe_tc_model_name(m), nm[i].canon);
    mpe_tc_params p;
    ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
    ck_assert_int_eq(p.instr, nm[i].instr);
    /* the canonical name finds the same model */
    ck_assert_ptr_eq(mpe_tc_model_get(mpe_tc_model_name(m), nm[i].t), m);
  }
  static const struct { const char *name; mpe_type t; } none[] = {
    { "a100:wgmma", MPE_FP16 }, { "h100:tcgen05", MPE_FP16 }, { "v100:wgmma", MPE_FP16 },
    { "h100:", MPE_FP16 }, { "h100:mma.syncx", MPE_FP16 }, { ":mma.sync", MPE_FP16 },
    { "exact:mma.sync", MPE_FP16 }, { "rtx-pro-6000:tcgen05", MPE_E4M3 }, { "h100:mma.sync:wgmma", MPE_FP16 },
    { "h100:mma.sync", MPE_INT4 }, { "v100:mma.sync", MPE_BF16 },
  };
  for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
    ck_assert_msg(mpe_tc_model_get(none[i].name, none[i].t) == NULL, "%s", none[i].name);
  /* apart from the instruction, mma.sync and wgmma compute the same on Hopper,
     and mma.sync and tcgen05.mma on B200, except FP8: binary16 output (fp16_split)
     on both, late c on B200 */
  static const mpe_type ts[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2 };
  for (int g = 0; g < 2; g++)
    for (int t = 0; t < 5; t++) {
      mpe_tc_params p, q;
      mpe_tc_model_params(mpe_tc_model_get(g ? "b200" : "h100", ts[t]), &p);
      mpe_tc_model_params(mpe_tc_model_get(g ? "b200:mma.sync" : "h100:mma.sync", ts[t]), &q);
      ck_assert_int_ne(p.instr, q.instr);
      ck_assert_int_eq(q.late_c, g && t >= 3);
      ck_assert_int_eq(q.fp16_split, t >= 3 ? 25 : 0);
      ck_assert_int_eq(p.fp16_split, 0);
      q.instr = p.instr;
      q.late_c = p.late_c;
      q.fp16_split = p.fp16_split;
      ck_assert_int_eq(memcmp(&p, &q, sizeof p), 0);
    }
  /* custom: instr is checked, then kept */
  mpe_tc_params p;
  mpe_tc_model_params(mpe_tc_model_get("h100", MPE_FP16), &p);
  mpe_tc_model *m;
  p.instr = MPE_TC_MFMA + 1;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_EINVAL);
  p.instr = -1;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_EINVAL);
  p.instr = MPE_TC_MMA_SYNC;
  p.zero_c_exp = -125;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_EINVAL);
  p.zero_c_exp = -301;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_EINVAL);
  p.zero_c_exp = -300;
  p.zero_sign = 2;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_EINVAL);
  p.zero_sign = 0;
  p.tf32_nan = 1;   /* not a TF32 model */
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_EINVAL);
  p.tf32_nan = 0;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), 0);
  mpe_tc_params q;
  mpe_tc_model_params(m, &q);
  ck_assert_int_eq(q.instr, MPE_TC_MMA_SYNC);
  ck_assert_int_eq(q.zero_c_exp, -300);
  mpe_tc_model_free(m);
  /* integer models: the floating-point fields must be zero */
  mpe_tc_model_params(mpe_tc_model_get("a100", MPE_INT8), &p);
  p.zero_sign = 1;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_EINVAL);
}
END_TEST

/* NaN and inf: IEEE-like propagation, canonical NaN 0x7fffffff / 0x7fff,
   overflow to inf also under RZ. */
START_TEST(test_specials)
{
  static const char *const names[] = { "v100", "a100", "h100", "exact", "fma-chain" };
  for (size_t g = 0; g < sizeof names / sizeof names[0]; g++) {
    const char *nm = names[g];
    float d = hand(nm, (double[]){ NAN }, (double[]){ 1 }, 1, 0);
    ck_assert_uint_eq(ts_f2u(d), 0x7fffffffu);
    ck_assert(isnan(hand(nm, (double[]){ INFINITY }, (double[]){ 0 }, 1, 0)));
    ck_assert(isnan(hand(nm, (double[]){ INFINITY, 1 }, (double[]){ 1, -INFINITY }, 2, 0)));
    ck_assert(hand(nm, (double[]){ INFINITY, 1 }, (double[]){ 1, 2 }, 2, 5) == INFINITY);
    ck_assert(hand(nm, (double[]){ 1 }, (double[]){ 2 }, 1, -INFINITY) == -INFINITY);
    ck_assert(isnan(hand(nm, (double[]){ 1 }, (double[]){ 2 }, 1, NAN)));
    /* RZ output still overflows to inf (docs/DESIGN.md §5): bf16 products reach 2^128 */
    const mpe_tc_model *mb = mpe_tc_model_get(g == 0 ? "h100" : nm, MPE_BF16);
    uint16_t ab[2] = { mpe_fp64_to_bf16(0x1p64, MPE_RNE), mpe_fp64_to_bf16(-0x1p64, MPE_RNE) };
    uint16_t bb[1] = { mpe_fp64_to_bf16(0x1.fep63, MPE_RNE) };
    float cz = 0x1p127f, dz;
    ck_assert_int_eq(mpe_mma(mb, 1, 1, 1, ab, MPE_BF16, 1, bb, MPE_BF16, 1, &cz, 1, &dz, MPE_FP32, 1), 0);
    ck_assert(dz == INFINITY);
    ck_assert_int_eq(mpe_mma(mb, 1, 1, 1, ab + 1, MPE_BF16, 1, bb, MPE_BF16, 1, &cz, 1, &dz, MPE_FP32, 1), 0);
    ck_assert(dz == -0x1.fep127f + 0x1p127f);
    /* fp16 output */
    const mpe_tc_model *m = mpe_tc_model_get(nm, MPE_FP16);
    uint16_t A[2] = { h(256), h(256) }, B[2] = { h(256), h(1) }, C = 0, D;
    ck_assert_int_eq(mpe_mma(m, 1, 1, 2, A, MPE_FP16, 2, B, MPE_FP16, 1, &C, 1, &D, MPE_FP16, 1), 0);
    ck_assert_uint_eq(D, 0x7c00);
    A[0] = 0x7e01;
    ck_assert_int_eq(mpe_mma(m, 1, 1, 2, A, MPE_FP16, 2, B, MPE_FP16, 1, &C, 1, &D, MPE_FP16, 1), 0);
    ck_assert_uint_eq(D, 0x7fff);
  }
  /* the fast kernels recompute outputs touched by inf/NaN: a large case */
  enum { n = 48 };
  static uint16_t A[n * n], B[n * n];
  static float C1[n * n], C2[n * n];
  uint64_t s = ts_seed();
  for (int i = 0; i < n * n; i++) {
    A[i] = h((double)(ts_rand64(&s) % 2001) / 1000 - 1);
    B[i] = h((double)(ts_rand64(&s) % 2001) / 1000 - 1);
  }
  A[5 * n + 7] = 0x7c00;    /* +inf in row 5 */
  B[3 * n + 11] = 0xfe00;   /* NaN in column 11 */
  const mpe_tc_model *m = mpe_tc_model_get("h100", MPE_FP16);
  for (int lvl = 2; lvl >= 0; lvl--) {
    mpe_simd_level_set(lvl);
    ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1, A, MPE_FP16, n, B,
                              MPE_FP16, n, 0, lvl == 2 ? C1 : C2, MPE_FP32, n), 0);
  }
  mpe_simd_level_set(-1);
  ck_assert_int_eq(memcmp(C1, C2, sizeof C1), 0);
  ck_assert_uint_eq(ts_f2u(C1[0 * n + 11]), 0x7fffffffu);
  ck_assert(isinf(C1[5 * n + 0]) || isnan(C1[5 * n + 0]));
}
END_TEST

/* ------------------------------------------------------------------ references */

static double rand_in(uint64_t *s, mpe_type t)
{
  double x = ((double)(ts_rand64(s) >> 11) * 0x1p-53 * 2 - 1) * ldexp(1.0, (int)(ts_rand64(s) % 9) - 4);
  switch (t) {
  case MPE_FP16: return mpe_fp16_to_fp32(mpe_fp64_to_fp16(x, MPE_RNE));
  case MPE_BF16: return mpe_bf16_to_fp32(mpe_fp64_to_bf16(x, MPE_RNE));
  case MPE_TF32: return mpe_fp32_to_tf32((float)x, MPE_RNE);
  case MPE_E4M3: return mpe_e4m3_to_fp32(mpe_fp32_to_e4m3((float)x, MPE_RNE, 1));
  default: return mpe_e5m2_to_fp32(mpe_fp32_to_e5m2((float)x, MPE_RNE, 1));
  }
}

static const mpe_type intypes[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2 };

/* "exact": the correctly rounded (RNE) binary32 value of sum a_k b_k + c, by MPFR */
START_TEST(test_exact_mpfr)
{
  mpe_type t = intypes[_i];
  const mpe_tc_model *m = mpe_tc_model_get("exact", t);
  ck_assert_ptr_nonnull(m);
  uint64_t s = ts_seed() + (uint64_t)_i;
  enum { M = 9, N = 11, K = 70 };
  float A[M * K], B[K * N], C[M * N], D[M * N];
  for (int i = 0; i < M * K; i++) A[i] = (float)rand_in(&s, t);
  for (int i = 0; i < K * N; i++) B[i] = (float)rand_in(&s, t);
  for (int i = 0; i < M * N; i++) C[i] = (float)(((double)(ts_rand64(&s) >> 11) * 0x1p-53 - 0.5) * ldexp(1, (int)(ts_rand64(&s) % 40) - 20));
  /* cancellation: row 0 column 0 sums to a tiny value */
  for (int l = 0; l < K; l++) { A[l] = l < K / 2 ? 1.0f : -1.0f; B[l * N] = l < K / 2 ? B[(K - 1 - l) * N] : B[l * N]; }
  C[0] = 0x1p-30f;
  for (int lvl = 2; lvl >= 0; lvl--) {
    mpe_simd_level_set(lvl);
    ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, D, MPE_FP32, N), 0);
    const ts_fmt fp32 = ts_fmt_type(MPE_FP32);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        mpfr_t acc, pr;
        mpfr_inits2(1400, acc, pr, (mpfr_ptr)0);
        mpfr_set_flt(acc, C[i * N + j], MPFR_RNDN);
        for (int l = 0; l < K; l++) {
          mpfr_set_flt(pr, A[i * K + l], MPFR_RNDN);
          mpfr_mul_d(pr, pr, B[l * N + j], MPFR_RNDN);
          mpfr_add(acc, acc, pr, MPFR_RNDN);
        }
        float want = (float)ts_round_mpfr(acc, &fp32, MPE_RNE, 0, NULL);
        ck_assert_msg(ts_f2u(want) == ts_f2u(D[i * N + j]), "%s (%d,%d): %a vs MPFR %a", mpe_type_name(t), i,
                      j, D[i * N + j], want);
        mpfr_clears(acc, pr, (mpfr_ptr)0);
      }
  }
  mpe_simd_level_set(-1);
}
END_TEST

/* "fma-chain" equals a plain fmaf loop, through mpe_gemm at every SIMD level */
START_TEST(test_fma_chain)
{
  mpe_type t = intypes[_i];
  const mpe_tc_model *m = mpe_tc_model_get("fma-chain", t);
  uint64_t s = ts_seed() + 7 * (uint64_t)_i;
  enum { M = 37, N = 29, K = 53 };
  static float A[M * K], B[K * N], D[M * N];
  for (int i = 0; i < M * K; i++) A[i] = (float)rand_in(&s, t);
  for (int i = 0; i < K * N; i++) B[i] = (float)rand_in(&s, t);
  for (int lvl = 2; lvl >= 0; lvl--) {
    mpe_simd_level_set(lvl);
    ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1, A, MPE_FP32, K, B,
                              MPE_FP32, N, 0, D, MPE_FP32, N), 0);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        float acc = 0;
        for (int l = 0; l < K; l++)
          acc = fmaf(A[i * K + l], B[l * N + j], acc);
        ck_assert_uint_eq(ts_f2u(acc), ts_f2u(D[i * N + j]));
      }
  }
  mpe_simd_level_set(-1);
}
END_TEST

/* signed zeros through "fma-chain" by mpe_mma (the chain starts at C): operands
   drawn from ±0, ±1, 2^-10 and ±2^-14 (products that cancel), C from ±0; the reference is the fmaf loop. (The fast kernels once
   splatted A with 0 + a, which turns -0 into +0: every -0 output came out +0.) */
START_TEST(test_fma_chain_zeros)
{
  const mpe_tc_model *m = mpe_tc_model_get("fma-chain", MPE_FP16);
  uint64_t s = ts_seed() + 31;
  enum { M = 40, N = 48, K = 3 };
  static const float pool[] = { 0.0f, -0.0f, -0.0f, 1.0f, -1.0f, 0x1p-10f, -0x1p-14f, 0x1p-14f };
  static float A[M * K], B[K * N], C[M * N], D[M * N];
  long neg = 0;
  for (int rep = 0; rep < 20; rep++) {
    for (int i = 0; i < M * K; i++) A[i] = pool[ts_rand64(&s) % 8];
    for (int i = 0; i < K * N; i++) B[i] = pool[ts_rand64(&s) % 8];
    for (int i = 0; i < M * N; i++) C[i] = pool[ts_rand64(&s) % 2];
    for (int lvl = 2; lvl >= 0; lvl--) {
      mpe_simd_level_set(lvl);
      ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, D, MPE_FP32, N), 0);
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          float acc = C[i * N + j];
          for (int l = 0; l < K; l++)
            acc = fmaf(A[i * K + l], B[l * N + j], acc);
          neg += lvl == 2 && ts_f2u(acc) == 0x80000000u;
          ck_assert_msg(ts_f2u(acc) == ts_f2u(D[i * N + j]), "level %d (%d,%d): %a, want %a", lvl, i, j,
                        (double)D[i * N + j], (double)acc);
        }
    }
  }
  mpe_simd_level_set(-1);
  ck_assert_int_gt(neg, 100);   /* the data do reach -0 results */
}
END_TEST

/* GPU models stay within the bound of mpe_tc_model_get(3):
   |d - sum| <= N e (1+e)^N (sum |a_k b_k| + |c|) + N 2^-149, N blocks,
   e = (L+1) 2^-F + u, u = 2^-23 (2^-13 with a 13-bit cut) + 2^-24 for a late c */
START_TEST(test_error_bound)
{
  static const struct { const char *nm; mpe_type t; } ms[] = {
    { "v100", MPE_FP16 }, { "t4", MPE_FP16 }, { "a100", MPE_FP16 }, { "a100", MPE_BF16 }, { "a100", MPE_TF32 },
    { "ada", MPE_E4M3 }, { "h100", MPE_FP16 }, { "h100", MPE_TF32 }, { "h100", MPE_E5M2 }, { "b200", MPE_E4M3 },
  };
  const mpe_tc_model *m = mpe_tc_model_get(ms[_i].nm, ms[_i].t);
  mpe_tc_params p;
  mpe_tc_model_params(m, &p);
  uint64_t s = ts_seed() + 31 * (uint64_t)_i;
  enum { M = 20, N = 21, K = 300 };
  static float A[M * K], B[K * N], D[M * N];
  for (int i = 0; i < M * K; i++) A[i] = (float)rand_in(&s, ms[_i].t);
  for (int i = 0; i < K * N; i++) B[i] = (float)rand_in(&s, ms[_i].t);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1, A, MPE_FP32, K, B,
                            MPE_FP32, N, 0, D, MPE_FP32, N), 0);
  int nb = (K + p.block - 1) / p.block;
  double e = (p.block + 1) * ldexp(1, -p.align_bits) + (p.result_bits ? ldexp(1, -p.result_bits) : 0x1p-23) +
             (p.late_c ? 0x1p-24 : 0);
  double u = nb * e * pow(1 + e, nb);
  double worst = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double sum = 0, abs = 0;
      for (int l = 0; l < K; l++) {
        sum += (double)A[i * K + l] * B[l * N + j];
        abs += fabs((double)A[i * K + l] * B[l * N + j]);
      }
      double err = fabs(D[i * N + j] - sum), bound = u * abs + nb * 0x1p-149;
      ck_assert_msg(err <= bound, "%s (%d,%d): error %g > bound %g", ms[_i].nm, i, j, err, bound);
      if (err / bound > worst)
        worst = err / bound;
    }
  printf("error bound %s/%s: worst error / bound = %.3f\n", ms[_i].nm, mpe_type_name(ms[_i].t), worst);
}
END_TEST

/* ------------------------------------------------------------------ BLAS interface */

/* reference: mpe_mma on row-major copies of op(A), op(B) with C = 0, then the
   documented epilogue fmaf(alpha, acc, beta * C) */
START_TEST(test_gemm_layouts)
{
  const mpe_tc_model *m = mpe_tc_model_get(_i ? "v100" : "h100", MPE_FP16);
  uint64_t s = ts_seed() + 99;
  enum { M = 19, N = 23, K = 41, PAD = 3 };
  static float opA[M * K], opB[K * N], acc[M * N], Z[M * N];
  static float Ast[(M + PAD) * (K + PAD)], Bst[(K + PAD) * (N + PAD)], C0[(M + PAD) * (N + PAD)], C[(M + PAD) * (N + PAD)];
  for (int i = 0; i < M * K; i++) opA[i] = (float)rand_in(&s, MPE_FP16);
  for (int i = 0; i < K * N; i++) opB[i] = (float)rand_in(&s, MPE_FP16);
  for (int i = 0; i < (M + PAD) * (N + PAD); i++) C0[i] = (float)rand_in(&s, MPE_FP16);
  ck_assert_int_eq(mpe_mma(m, M, N, K, opA, MPE_FP32, K, opB, MPE_FP32, N, Z, N, acc, MPE_FP32, N), 0);
  /* (1, 0) with no padding is the path that accumulates into C itself; (-1, 1) is LU's update */
  static const float ab[3][2] = { { 0.75f, -1.5f }, { 1.0f, 0.0f }, { -1.0f, 1.0f } };
  for (int v = 0; v < 6; v++) {
  const float alpha = ab[v % 3][0], beta = ab[v % 3][1];
  const int pad = v < 3 ? PAD : 0;
  for (int lay = 0; lay < 2; lay++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        int row = lay == 0;
        /* store op(A) as A (ta = 0) or A^T (ta = 1) in the layout, with padded ld */
        int ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
        int lda = (row ? ac : ar) + pad, ldb = (row ? bc : br) + pad, ldc = (row ? N : M) + pad;
        for (int r = 0; r < ar; r++)
          for (int c = 0; c < ac; c++) {
            float v = ta ? opA[c * K + r] : opA[r * K + c];
            Ast[row ? r * lda + c : c * lda + r] = v;
          }
        for (int r = 0; r < br; r++)
          for (int c = 0; c < bc; c++) {
            float v = tb ? opB[c * N + r] : opB[r * N + c];
            Bst[row ? r * ldb + c : c * ldb + r] = v;
          }
        memcpy(C, C0, sizeof C);
        ck_assert_int_eq(mpe_gemm(m, row ? MPE_ROW_MAJOR : MPE_COL_MAJOR, ta ? MPE_TRANS : MPE_NO_TRANS,
                                  tb ? MPE_TRANS : MPE_NO_TRANS, M, N, K, alpha, Ast, MPE_FP32, lda, Bst,
                                  MPE_FP32, ldb, beta, C, MPE_FP32, ldc), 0);
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++) {
            int ci = row ? i * ldc + j : j * ldc + i;
            float want = beta == 0.0f ? alpha * acc[i * N + j] : fmaf(alpha, acc[i * N + j], beta * C0[ci]);
            ck_assert_msg(ts_f2u(C[ci]) == ts_f2u(want), "alpha %g beta %g pad %d layout %d ta %d tb %d (%d,%d)",
                          alpha, beta, pad, lay, ta, tb, i, j);
          }
        /* padding untouched */
        for (int i = 0; i < ldc * (row ? M : N); i++) {
          int r = row ? i / ldc : i % ldc, c = row ? i % ldc : i / ldc;
          if ((row && (c >= N || r >= M)) || (!row && (r >= M || c >= N)))
            ck_assert_uint_eq(ts_f2u(C[i]), ts_f2u(C0[i]));
        }
      }
  }
}
END_TEST

/* One mpe_gemm call of model m: op(A) (M x K) and op(B) (K x N), given
   row-major in opA and opB, stored as `in` (binary16 or bfloat16) in layout
   `row`, transposed as ta and tb, with `pad` more elements per leading
   dimension; C (csize bytes) starts as C0. Every output is checked against
   alpha * acc + beta * C0 (acc: the accumulator, M x N row-major; the BLAS
   epilogue in binary32 with one fma) and C's padding must be untouched.
   Returns the outputs checked. */
static long gemm_layouts(const mpe_tc_model *m, mpe_type in, int M, int N, int K, const float *opA, const float *opB,
                         const float *acc, const float *C0, float *C, size_t csize, uint16_t *Ast, uint16_t *Bst,
                         float alpha, float beta, int row, int ta, int tb, int pad, const char *what)
{
  int ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
  int lda = (row ? ac : ar) + pad, ldb = (row ? bc : br) + pad, ldc = (row ? N : M) + pad;
  for (int r = 0; r < ar; r++)
    for (int c = 0; c < ac; c++) {
      float x = ta ? opA[c * K + r] : opA[r * K + c];
      Ast[row ? r * lda + c : c * lda + r] = in == MPE_FP16 ? h(x) : mpe_fp64_to_bf16(x, MPE_RNE);
    }
  for (int r = 0; r < br; r++)
    for (int c = 0; c < bc; c++) {
      float x = tb ? opB[c * N + r] : opB[r * N + c];
      Bst[row ? r * ldb + c : c * ldb + r] = in == MPE_FP16 ? h(x) : mpe_fp64_to_bf16(x, MPE_RNE);
    }
  memcpy(C, C0, csize);
  ck_assert_int_eq(mpe_gemm(m, row ? MPE_ROW_MAJOR : MPE_COL_MAJOR, ta ? MPE_TRANS : MPE_NO_TRANS,
                            tb ? MPE_TRANS : MPE_NO_TRANS, M, N, K, alpha, Ast, in, lda, Bst, in, ldb, beta, C,
                            MPE_FP32, ldc), 0);
  long checked = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int ci = row ? i * ldc + j : j * ldc + i;
      float want = beta == 0.0f ? alpha * acc[i * N + j] : fmaf(alpha, acc[i * N + j], beta * C0[ci]);
      if (isnan(want))
        want = ts_u2f(0x7fffffffu);
      ck_assert_msg(ts_f2u(C[ci]) == ts_f2u(want), "%s alpha %g beta %g row-major %d ta %d tb %d (%d,%d): %a, want %a",
                    what, alpha, beta, row, ta, tb, i, j, C[ci], want);
      checked++;
    }
  for (int i = 0; i < ldc * (row ? M : N); i++) {   /* padding untouched */
    int r = row ? i / ldc : i % ldc, c = row ? i % ldc : i / ldc;
    if ((row && (c >= N || r >= M)) || (!row && (r >= M || c >= N)))
      ck_assert_uint_eq(ts_f2u(C[i]), ts_f2u(C0[i]));
  }
  return checked;
}

/* binary16 / bfloat16 operands in every layout and transpose, through mpe_gemm's
   tile-wise epilogue and the vector packer (unit stride along K or along the
   panel rows), against mpe_mma on binary32 copies of the same values (the
   scalar packer, whole accumulator) followed by the BLAS epilogue. The
   operands hold the format's edges (largest finite, smallest normal and
   subnormal, ±0) and one row of A and one column of B an inf or NaN, so that
   the portable fix-up runs inside the tiles. */
START_TEST(test_gemm_packed_epilogue)
{
  static const char *const names[] = { "fma-chain", "h100", "a100", "v100", "h100" };
  const mpe_type in = _i == 4 ? MPE_BF16 : MPE_FP16;
  const mpe_tc_model *m = mpe_tc_model_get(names[_i], in);
  enum { M = 37, N = 45, K = 70, PAD = 5 };
  static float opA[M * K], opB[K * N], acc[M * N];
  static uint16_t Ast[(M + PAD) * (K + PAD)], Bst[(K + PAD) * (N + PAD)];
  static float C0[(M + PAD) * (N + PAD)], C[(M + PAD) * (N + PAD)];
  /* bfloat16: the edges of the kernels' exponent window [-48, 62] (outside it the
     whole call goes to the portable engine, tested elsewhere) */
  const double fmax = in == MPE_FP16 ? 65504.0 : 0x1.fep62;
  const double edges[] = { 0.0, -0.0, in == MPE_FP16 ? 0x1p-24 : 0x1p-48, in == MPE_FP16 ? 0x1p-14 : 0x1.fep-48,
                           1.0, -1.5, 0x1.ffcp-1 };
  uint64_t s = ts_seed() + 1313 + (uint64_t)_i;
  for (int i = 0; i < M * K; i++)
    opA[i] = (float)(i % 11 == 3 ? edges[(i / 11) % 7] : rand_in(&s, in));
  for (int i = 0; i < K * N; i++)
    opB[i] = (float)(i % 13 == 5 ? edges[(i / 13) % 7] : rand_in(&s, in));
  opA[2 * K + 7] = (float)fmax;
  opB[9 * N + 4] = (float)-fmax;
  opA[5 * K + 11] = INFINITY;   /* row 5 of A */
  opB[17 * N + 30] = NAN;       /* column 30 of B */
  for (int i = 0; i < (M + PAD) * (N + PAD); i++)
    C0[i] = (float)rand_in(&s, MPE_FP16);
  ck_assert_int_eq(mpe_mma(m, M, N, K, opA, MPE_FP32, K, opB, MPE_FP32, N, NULL, 0, acc, MPE_FP32, N), 0);
  static const float ab[3][2] = { { -1.0f, 1.0f }, { 1.0f, 0.0f }, { 0.75f, -1.5f } };
  long checked = 0;
  for (int v = 0; v < 3; v++)
    for (int lay = 0; lay < 2; lay++)
      for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
          checked += gemm_layouts(m, in, M, N, K, opA, opB, acc, C0, C, sizeof C, Ast, Bst, ab[v][0], ab[v][1],
                                  lay == 0, ta, tb, v == 1 ? 0 : PAD, names[_i]);
  printf("check_tc: packed operands + tile epilogue %s/%s: %ld outputs, 0 wrong\n", names[_i],
         in == MPE_FP16 ? "fp16" : "bf16", checked);
}
END_TEST

/* The fma chain through mpe_gemm on binary16 operands at a size that crosses
   every edge of the fast driver's blocking: M and N past one thread tile and
   not whole kernel tiles, K past one K chunk (KC = 256) and not a multiple of
   it; both layouts, both transposes, alpha/beta and padded leading dimensions.
   The reference is the fmaf loop in k order on the decoded values, followed by
   the BLAS epilogue. */
START_TEST(test_fma_chain_blocks)
{
  const mpe_tc_model *m = mpe_tc_model_get("fma-chain", MPE_FP16);
  enum { M = 151, N = 263, K = 301, PAD = 3 };
  static float opA[M * K], opB[K * N], acc[M * N];
  static uint16_t Ast[(M + PAD) * (K + PAD)], Bst[(K + PAD) * (N + PAD)];
  static float C0[(M + PAD) * (N + PAD)], C[(M + PAD) * (N + PAD)];
  const double edges[] = { 0.0, -0.0, 0x1p-24, 0x1p-14, 65504.0, -1.5, 0x1.ffcp-1 };
  uint64_t s = ts_seed() + 4242;
  for (int i = 0; i < M * K; i++)
    opA[i] = (float)(i % 11 == 3 ? edges[(i / 11) % 7] : rand_in(&s, MPE_FP16));
  for (int i = 0; i < K * N; i++)
    opB[i] = (float)(i % 13 == 5 ? edges[(i / 13) % 7] : rand_in(&s, MPE_FP16));
  opA[150 * K + 280] = INFINITY;   /* the last row of A */
  opB[290 * N + 262] = NAN;        /* the last column of B */
  for (int i = 0; i < (M + PAD) * (N + PAD); i++)
    C0[i] = (float)rand_in(&s, MPE_FP16);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float a = 0.0f;
      for (int l = 0; l < K; l++)
        a = fmaf(opA[i * K + l], opB[l * N + j], a);
      acc[i * N + j] = a;
    }
  static const float ab[3][2] = { { 1.0f, 0.0f }, { -1.0f, 1.0f }, { 0.75f, -1.5f } };
  long checked = 0;
  for (int v = 0; v < 3; v++)
    for (int lay = 0; lay < 2; lay++)
      for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
          checked += gemm_layouts(m, MPE_FP16, M, N, K, opA, opB, acc, C0, C, sizeof C, Ast, Bst, ab[v][0],
                                  ab[v][1], lay == 0, ta, tb, v == 0 ? 0 : PAD, "fma-chain");
  printf("check_tc: fma chain across the blocking, %d x %d x %d: %ld outputs, 0 wrong\n", M, N, K, checked);
}
END_TEST

START_TEST(test_gemm_alpha_beta_sizes)
{
  const mpe_tc_model *m = mpe_tc_model_get("a100", MPE_FP16);
  float A[6] = { 1, 2, 3, 4, 5, 6 }, B[6] = { 1, 0.5f, 0.25f, 2, 4, 8 }, C[4], D[4];
  /* beta = 0: C is not read (NaN there is ignored); alpha = 1: the raw accumulator */
  C[0] = NAN;
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 3, 1, A, MPE_FP32, 3, B,
                            MPE_FP32, 1, 0, C, MPE_FP32, 1), 0);
  ck_assert(C[0] == 1 + 1.0f + 0.75f);
  /* k = 0: C = beta*C */
  C[0] = 3;
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 0, 1, NULL, MPE_FP32, 1, NULL,
                            MPE_FP32, 1, 2, C, MPE_FP32, 1), 0);
  ck_assert(C[0] == 6);
  /* alpha = 0: A and B are not read */
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 3, 0, NULL, MPE_FP32, 3, NULL,
                            MPE_FP32, 1, 0.5f, C, MPE_FP32, 1), 0);
  ck_assert(C[0] == 3);
  /* m = 0 or n = 0: nothing written */
  C[0] = 7;
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 0, 1, 3, 1, A, MPE_FP32, 3, B,
                            MPE_FP32, 1, 0, C, MPE_FP32, 1), 0);
  ck_assert_int_eq(mpe_gemm(m, MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 0, 3, 1, A, MPE_FP32, 1, B,
                            MPE_FP32, 3, 0, C, MPE_FP32, 1), 0);
  ck_assert(C[0] == 7);
  /* k = 1, 2×2 */
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 1, 2, A, MPE_FP32, 1, B,
                            MPE_FP32, 2, 0, D, MPE_FP32, 2), 0);
  ck_assert(D[0] == 2 && D[1] == 1 && D[2] == 4 && D[3] == 2);
  /* binary16 C: accumulate, alpha/beta in binary32, one RNE rounding */
  uint16_t Ah[3] = { h(1), h(2), h(3) }, Bh[3] = { h(1), h(0.5), h(0.25) }, Ch = h(1);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 3, 2, Ah, MPE_FP16, 3, Bh,
                            MPE_FP16, 1, 0.5f, &Ch, MPE_FP16, 1), 0);
  ck_assert_uint_eq(Ch, h(2 * 2.75 + 0.5));
  /* mma: k = 0 gives D = C; D may be C itself */
  float Cm[2] = { 1.5f, -2 };
  ck_assert_int_eq(mpe_mma(m, 1, 2, 0, NULL, MPE_FP32, 1, NULL, MPE_FP32, 2, Cm, 2, D, MPE_FP32, 2), 0);
  ck_assert(D[0] == 1.5f && D[1] == -2);
  ck_assert_int_eq(mpe_mma(m, 1, 2, 3, A, MPE_FP32, 3, B, MPE_FP32, 2, Cm, 2, Cm, MPE_FP32, 2), 0);
  ck_assert(Cm[0] == 1.5f + 1 + 0.5f + 12 && Cm[1] == -2 + 0.5f + 4 + 24);
  /* C = NULL: zero accumulator */
  ck_assert_int_eq(mpe_mma(m, 1, 1, 3, A, MPE_FP32, 3, B, MPE_FP32, 2, NULL, 0, D, MPE_FP32, 1), 0);
  ck_assert(D[0] == 1 + 0.5f + 12);
}
END_TEST

/* C may overlap A or B (documented): C = A*B in place over A, with an inf
   in A so that the portable fix-up rereads the operands. */
START_TEST(test_gemm_alias)
{
  enum { n = 40 };
  static float A[n * n], A0[n * n], B[n * n], R[n * n];
  uint64_t s = ts_seed() + 4242;
  for (int i = 0; i < n * n; i++) {
    A[i] = A0[i] = (float)rand_in(&s, MPE_FP16);
    B[i] = (float)rand_in(&s, MPE_FP16);
  }
  A[7 * n + 3] = A0[7 * n + 3] = INFINITY;
  const char *names[] = { "h100", "fma-chain", "exact" };
  for (int g = 0; g < 3; g++) {
    const mpe_tc_model *m = mpe_tc_model_get(names[g], MPE_FP16);
    memcpy(A, A0, sizeof A);
    ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1, A0, MPE_FP32, n, B,
                              MPE_FP32, n, 0, R, MPE_FP32, n), 0);
    ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1, A, MPE_FP32, n, B,
                              MPE_FP32, n, 0, A, MPE_FP32, n), 0);
    ck_assert_int_eq(memcmp(A, R, sizeof R), 0);
    /* mma: D == B */
    float Bc[n * n];
    memcpy(Bc, B, sizeof Bc);
    ck_assert_int_eq(mpe_mma(m, n, n, n, A0, MPE_FP32, n, Bc, MPE_FP32, n, NULL, 0, Bc, MPE_FP32, n), 0);
    ck_assert_int_eq(memcmp(Bc, R, sizeof R), 0);
  }
}
END_TEST

/* Packed operands (uint16_t FP16/BF16, uint8_t FP8, float TF32) give the
   same result as binary32 operands holding the same values; the two operands
   may have different types. */
START_TEST(test_operand_types)
{
  mpe_type t = intypes[_i];
  const char *gpu = t == MPE_FP16 ? "v100" : t == MPE_TF32 ? "a100" : t == MPE_BF16 ? "h100" : "ada";
  const mpe_tc_model *m = mpe_tc_model_get(gpu, t);
  ck_assert_ptr_nonnull(m);
  enum { M = 21, N = 34, K = 77 };
  static float A[M * K], B[K * N], R0[M * N], R1[M * N], R2[M * N];
  static uint16_t A16[M * K], B16[K * N];
  static uint8_t A8[M * K], B8[K * N];
  uint64_t s = ts_seed() + 77 + (uint64_t)_i;
  for (int i = 0; i < M * K; i++) A[i] = (float)rand_in(&s, t);
  for (int i = 0; i < K * N; i++) B[i] = (float)rand_in(&s, t);
  const void *pa = A, *pb = B;
  for (int i = 0; i < M * K; i++) {
    A16[i] = t == MPE_FP16 ? mpe_fp32_to_fp16(A[i], MPE_RNE) : mpe_fp32_to_bf16(A[i], MPE_RNE);
    A8[i] = t == MPE_E4M3 ? mpe_fp32_to_e4m3(A[i], MPE_RNE, 0) : mpe_fp32_to_e5m2(A[i], MPE_RNE, 0);
  }
  for (int i = 0; i < K * N; i++) {
    B16[i] = t == MPE_FP16 ? mpe_fp32_to_fp16(B[i], MPE_RNE) : mpe_fp32_to_bf16(B[i], MPE_RNE);
    B8[i] = t == MPE_E4M3 ? mpe_fp32_to_e4m3(B[i], MPE_RNE, 0) : mpe_fp32_to_e5m2(B[i], MPE_RNE, 0);
  }
  if (t == MPE_FP16 || t == MPE_BF16) { pa = A16; pb = B16; }
  if (t == MPE_E4M3 || t == MPE_E5M2) { pa = A8; pb = B8; }
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1, A, MPE_FP32, K, B, MPE_FP32,
                            N, 0, R0, MPE_FP32, N), 0);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1, pa, t, K, pb, t, N, 0, R1,
                            MPE_FP32, N), 0);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1, pa, t, K, B, MPE_FP32, N, 0,
                            R2, MPE_FP32, N), 0);
  ck_assert_int_eq(memcmp(R0, R1, sizeof R0), 0);
  ck_assert_int_eq(memcmp(R0, R2, sizeof R0), 0);
}
END_TEST

/* The kernel variants chosen from the parameters (int32 sums, two int32
   halves, binary64 lanes) all agree with the portable engine on random data;
   test_full_accumulators fills them to their bounds. */
START_TEST(test_kernel_variants)
{
  static const struct { int L, F, late; } v[] = {
    { 32, 25, 1 },   /* split halves (B200 FP8) */
    { 32, 25, 0 },   /* split halves with c in the block */
    { 31, 25, 0 },   /* odd L past 31 bits: two int32 halves of 16 and 15 */
    { 32, 40, 0 },   /* binary64 lanes */
    { 33, 27, 0 },   /* halves past 2^31: binary64 lanes */
    { 7, 20, 1 },    /* int32 */
  };
  mpe_tc_params p;
  mpe_tc_model_params(mpe_tc_model_get("h100", MPE_E4M3), &p);
  uint64_t s = ts_seed() + 808;
  enum { M = 30, N = 50, K = 200 };
  static float A[M * K], B[K * N], C[M * N], R0[M * N], R1[M * N], R2[M * N];
  for (int i = 0; i < M * K; i++) A[i] = (float)rand_in(&s, MPE_E4M3);
  for (int i = 0; i < K * N; i++) B[i] = (float)rand_in(&s, MPE_E4M3);
  for (int i = 0; i < M * N; i++) C[i] = (float)rand_in(&s, MPE_FP16);
  for (size_t t = 0; t < sizeof v / sizeof v[0]; t++) {
    mpe_tc_params q = p;
    q.block = v[t].L;
    q.align_bits = v[t].F;
    q.late_c = v[t].late;
    q.result_bits = 0;
    mpe_tc_model *m;
    ck_assert_int_eq(mpe_tc_model_custom(&m, &q), 0);
    float *R[3] = { R0, R1, R2 };
    for (int lvl = 2; lvl >= 0; lvl--) {
      mpe_simd_level_set(lvl);
      ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, R[2 - lvl], MPE_FP32, N), 0);
    }
    mpe_simd_level_set(-1);
    ck_assert_msg(!memcmp(R0, R2, sizeof R0) && !memcmp(R1, R2, sizeof R0), "variant %zu", t);
    mpe_tc_model_free(m);
  }
}
END_TEST

/* fp16_split on the fast kernels (the pairs of blocks, the packers' split layout,
   the binary16 block ends and epilogue): every SIMD level against the portable
   engine (level 0), bit for bit, on FP8 codes drawn to hit the edges. Patterns:
   uniform codes (binary16 overflow to inf from large products), exponent edges
   (subnormal, smallest and largest exponents), few-bit values near 1 (sums on
   binary16 ties), cancelling pairs inside a block (k, k+1) and across the two
   blocks (k, k+2), tiny values (binary16 subnormal results and underflow), and
   uniform codes with inf/NaN in A, B and C. C holds +-0, subnormals, +-65504,
   +-2^-11 and random binary16 values. K = 1, 17, 33, 95 (short last blocks), M
   and N off the tiles; mpe_mma with a strided A, packed and binary32 operands,
   mixed E4M3/E5M2, and mpe_gemm with binary16 C (row-major; column-major with
   both operands transposed and alpha, beta). The built-in models and customs:
   fp16_split 18 and 27 (two int32 halves), 30 (binary64 lanes), L = 16, and
   binary16 rounding toward zero (the binary64 block ends). */
static uint8_t split_code(uint64_t *s, mpe_type t, int pat)
{
  const int e4 = t == MPE_E4M3, mb = e4 ? 3 : 2, emax = e4 ? 15 : 30, bias = e4 ? 7 : 15;
  const uint8_t sg = (uint8_t)(ts_rand64(s) & 0x80), mt = (uint8_t)(ts_rand64(s) % (1u << mb));
  int ef;
  switch (pat) {
  case 1: {
    static const int pick[4] = { 0, 1, -1, 0 };
    const int q = (int)(ts_rand64(s) % 4);
    ef = q == 3 ? emax : q == 2 ? emax - 1 : pick[q];
    break;
  }
  case 2: return (uint8_t)(sg | (uint8_t)((bias + (int)(ts_rand64(s) % 5) - 2) << mb) | (mt & 1u));
  case 5: ef = (int)(ts_rand64(s) % 4); break;
  default: ef = (int)(ts_rand64(s) % (uint64_t)(emax + 1)); break;
  }
  uint8_t c = (uint8_t)(sg | (uint8_t)(ef << mb) | mt);
  if ((c & 0x7f) == (e4 ? 0x7f : 0x7c) || (!e4 && (c & 0x7f) > 0x7c))
    c = (uint8_t)(c & 0x80 ? 0xb8 : 0x38);   /* no inf/NaN here: +-1 (E4M3) or +-0.75 (E5M2) */
  return c;
}

static float split_dec(mpe_type t, uint8_t c)
{
  return t == MPE_E4M3 ? mpe_e4m3_to_fp32(c) : mpe_e5m2_to_fp32(c);
}

START_TEST(test_fp16_split_levels)
{
  enum { M = 45, N = 53, KM = 95, LDA = KM + 3, NPAT = 7 };
  static uint8_t A[M * LDA], B[KM * N], B2[KM * N];
  static float Af[M * LDA], Bf[KM * N];
  static uint16_t C0[M * N], R[3][M * N];
  struct { const char *name; mpe_type t; int split, block, rz; } ms[] = {
    { "h100:mma.sync", MPE_E4M3, 0, 0, 0 }, { "h100:mma.sync", MPE_E5M2, 0, 0, 0 },
    { "b200:mma.sync", MPE_E4M3, 0, 0, 0 }, { "b200:mma.sync", MPE_E5M2, 0, 0, 0 },
    { "h100:mma.sync", MPE_E5M2, 18, 0, 0 }, { "h100:mma.sync", MPE_E4M3, 27, 0, 0 },
    { "b200:mma.sync", MPE_E5M2, 30, 0, 0 }, { "h100:mma.sync", MPE_E4M3, 0, 16, 0 },
    { "b200:mma.sync", MPE_E5M2, 0, 0, 1 },
  };
  static const int Ks[] = { 1, 17, 33, 95 };
  static const uint16_t cpick[] = { 0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x1000, 0x9000 };
  uint64_t s = ts_seed() + 2727;
  long checked = 0;
  for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
    const mpe_tc_model *m = mpe_tc_model_get(ms[mi].name, ms[mi].t);
    mpe_tc_model *cm = NULL;
    if (ms[mi].split || ms[mi].block || ms[mi].rz) {
      mpe_tc_params p;
      ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
      if (ms[mi].split)
        p.fp16_split = ms[mi].split;
      if (ms[mi].block)
        p.block = ms[mi].block;
      if (ms[mi].rz)
        p.round_fp16 = MPE_RZ;
      ck_assert_int_eq(mpe_tc_model_custom(&cm, &p), 0);
      m = cm;
    }
    const mpe_type t = ms[mi].t, t2 = t == MPE_E4M3 ? MPE_E5M2 : MPE_E4M3;
    for (int pat = 0; pat < NPAT; pat++) {
      if (cm && pat != 0 && pat != 2 && pat != 6)
        continue;
      for (int i = 0; i < M; i++)
        for (int l = 0; l < KM; l++)
          A[i * LDA + l] = split_code(&s, t, pat == 6 ? 0 : pat);
      for (int i = 0; i < KM * N; i++) {
        B[i] = split_code(&s, t, pat == 6 ? 0 : pat);
        B2[i] = split_code(&s, t2, pat == 6 ? 0 : pat);
      }
      if (pat == 3 || pat == 4)   /* a[k + d] = -a[k] against equal b: d = 1 (one block), 2 (across) */
        for (int l = 0; l + 3 < KM; l += 4)
          for (int q = 0; q < (pat == 3 ? 2 : 1); q++) {
            const int l0 = l + q * 2, l1 = l0 + (pat == 3 ? 1 : 2);
            for (int i = 0; i < M; i++)
              A[i * LDA + l1] = (uint8_t)(A[i * LDA + l0] ^ 0x80);
            for (int j = 0; j < N; j++) {
              B[l1 * N + j] = B[l0 * N + j];
              B2[l1 * N + j] = B2[l0 * N + j];
            }
          }
      for (int i = 0; i < M * N; i++) {
        const uint64_t u = ts_rand64(&s) % 3;
        C0[i] = u == 0 ? cpick[ts_rand64(&s) % 8] : mpe_fp32_to_fp16((float)rand_in(&s, MPE_FP16), MPE_RNE);
      }
      if (pat == 6) {   /* inf/NaN: a NaN in row 2 of A, inf or NaN in column 5 of B, in C */
        A[2 * LDA + 3] = t == MPE_E4M3 ? 0x7f : 0x7e;
        B[11 * N + 5] = t == MPE_E4M3 ? 0xff : 0xfc;
        B2[11 * N + 5] = t2 == MPE_E4M3 ? 0xff : 0xfc;
        C0[7] = 0x7c00;
        C0[9] = 0xfc00;
        C0[11] = 0x7e00;
      }
      for (int i = 0; i < M; i++)
        for (int l = 0; l < KM; l++)
          Af[i * LDA + l] = split_dec(t, A[i * LDA + l]) * 1.25f;   /* rounded to the format on input */
      for (int i = 0; i < KM * N; i++)
        Bf[i] = split_dec(t, B[i]);
      for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
        const int K = Ks[ki];
        for (int call = 0; call < 5; call++) {
          for (int lvl = 2; lvl >= 0; lvl--) {
            memcpy(R[lvl], C0, sizeof C0);
            mpe_simd_level_set(lvl);
            int rc;
            switch (call) {
            case 0:
              rc = mpe_mma(m, M, N, K, A, t, LDA, B, t, N, C0, N, R[lvl], MPE_FP16, N);
              break;
            case 1:
              rc = mpe_mma(m, M, N, K, Af, MPE_FP32, LDA, Bf, MPE_FP32, N, C0, N, R[lvl], MPE_FP16, N);
              break;
            case 2:
              rc = mpe_mma(m, M, N, K, A, t, LDA, B2, t2, N, C0, N, R[lvl], MPE_FP16, N);
              break;
            case 3:
              rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, A, t, LDA, B, t, N, 0.0f,
                            R[lvl], MPE_FP16, N);
              break;
            default:
              rc = mpe_gemm(m, MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, M, N, K, -2.0f, A, t, LDA, B, t, N, 0.5f,
                            R[lvl], MPE_FP16, M);
              break;
            }
            mpe_simd_level_set(-1);
            ck_assert_int_eq(rc, 0);
          }
          for (int lvl = 2; lvl >= 1; lvl--)
            for (int q = 0; q < M * N; q++)
              ck_assert_msg(R[lvl][q] == R[0][q], "%s %s split %d L %d rz %d pattern %d K %d call %d level %d "
                            "element %d: %04x, want %04x", ms[mi].name, mpe_type_name(t), ms[mi].split,
                            ms[mi].block, ms[mi].rz, pat, K, call, lvl, q, R[lvl][q], R[0][q]);
          checked += M * N;
        }
      }
    }
    mpe_tc_model_free(cm);
  }
  printf("check_tc: fp16_split SIMD levels against the portable engine: %ld outputs per level\n", checked);
}
END_TEST

/* The block kernel's pass 1 in int16 lanes (two rows per register, zeros as
   MPEI_TC_ZERO_EXP16): exponents at the ends of the fast window (-48 and 62)
   and of the input formats, so that exponent sums reach -96 and 124; whole
   rows, columns and blocks of zeros; cancelling pairs; an initial C with
   zeros, tiny and large values; products whose sums overflow to inf; shapes
   that cross the tiles' edges (M odd, N not a multiple of 16, K not of L).
   Each SIMD level against the portable engine (level 0), for two layouts,
   the transposes and alpha/beta. */
START_TEST(test_pass1_exponent_edges)
{
  static const struct { const char *gpu; mpe_type t; } ms[] = {
    { "h100", MPE_BF16 }, { "a100", MPE_BF16 }, { "h100", MPE_TF32 }, { "a100", MPE_TF32 },
    { "v100", MPE_FP16 }, { "h100", MPE_FP16 }, { "b200", MPE_BF16 },
  };
  enum { M = 29, N = 45, K = 77 };
  static float A[M * K], B[K * N], C0[M * N], R[3][M * N];
  uint64_t s = ts_seed() + 1313;
  long checked = 0;
  for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
    const mpe_tc_model *m = mpe_tc_model_get(ms[mi].gpu, ms[mi].t);
    ck_assert_ptr_nonnull(m);
    const int lo = ms[mi].t == MPE_FP16 ? -14 : -48, hi = ms[mi].t == MPE_FP16 ? 15 : 62;
    const int pb = ms[mi].t == MPE_TF32 ? 10 : ms[mi].t == MPE_FP16 ? 10 : 7;   /* fraction bits */
    for (int pat = 0; pat < 4; pat++) {
      /* an exponent: the window's ends, next to them, 0 or anywhere in it */
#define EDGE_EXP() (pat == 0 ? ((ts_rand64(&s) & 1) ? lo : hi) \
                    : pat == 1 ? (int)(ts_rand64(&s) % 6 == 0 ? hi : lo + (int)(ts_rand64(&s) % 3)) \
                    : pat == 2 ? lo + (int)(ts_rand64(&s) % (uint64_t)(hi - lo + 1)) \
                    : (int)(ts_rand64(&s) % 5) - 2)
#define EDGE_VAL(e) ((ts_rand64(&s) & 1 ? -1.0f : 1.0f) * \
                     ldexpf(1.0f + (float)(ts_rand64(&s) % (1u << pb)) * ldexpf(1.0f, -pb), (e)))
      for (int i = 0; i < M; i++)
        for (int l = 0; l < K; l++) {
          float v = EDGE_VAL(EDGE_EXP());
          if (i % 7 == 3 || ((l / 16) == 2 && i % 2) || ts_rand64(&s) % 9 == 0)
            v = 0.0f;   /* a zero row, a zero block on odd rows, scattered zeros */
          A[i * K + l] = v;
        }
      for (int l = 0; l < K; l++)
        for (int j = 0; j < N; j++) {
          float v = EDGE_VAL(EDGE_EXP());
          if (j % 11 == 5 || ts_rand64(&s) % 9 == 0)
            v = 0.0f;
          B[l * N + j] = v;
        }
      if (pat == 3)   /* cancelling pairs: a[l+1] = -a[l] against equal b */
        for (int l = 0; l + 1 < K; l += 2) {
          for (int i = 0; i < M; i++)
            A[i * K + l + 1] = -A[i * K + l];
          for (int j = 0; j < N; j++)
            B[(l + 1) * N + j] = B[l * N + j];
        }
#undef EDGE_EXP
#undef EDGE_VAL
      for (int t = 0; t < M * N; t++) {
        const uint64_t u = ts_rand64(&s) % 4;
        C0[t] = u == 0 ? 0.0f : u == 1 ? ldexpf(1.5f, -130) : u == 2 ? ldexpf(-1.25f, 100) : (float)rand_in(&s, MPE_FP16);
      }
      for (int shape = 0; shape < 2; shape++) {
        for (int lvl = 2; lvl >= 0; lvl--) {
          memcpy(R[lvl], C0, sizeof C0);
          mpe_simd_level_set(lvl);
          int rc = shape == 0
                       ? mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, A, MPE_FP32, K, B,
                                  MPE_FP32, N, 0.0f, R[lvl], MPE_FP32, N)
                       : mpe_gemm(m, MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, M, N, K, -2.0f, A, MPE_FP32, K, B,
                                  MPE_FP32, N, 0.5f, R[lvl], MPE_FP32, M);
          mpe_simd_level_set(-1);
          ck_assert_int_eq(rc, 0);
        }
        for (int lvl = 2; lvl >= 1; lvl--)
          for (int t = 0; t < M * N; t++) {
            uint32_t g, w;
            memcpy(&g, &R[lvl][t], 4);
            memcpy(&w, &R[0][t], 4);
            ck_assert_msg(g == w, "%s %s pattern %d shape %d level %d element %d: %08x, want %08x",
                          ms[mi].gpu, mpe_type_name(ms[mi].t), pat, shape, lvl, t, g, w);
          }
        checked += M * N;
      }
      /* mpe_mma too (C as the initial accumulator) */
      for (int lvl = 2; lvl >= 0; lvl--) {
        mpe_simd_level_set(lvl);
        ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C0, N, R[lvl], MPE_FP32, N), 0);
        mpe_simd_level_set(-1);
      }
      ck_assert_msg(!memcmp(R[2], R[0], sizeof C0) && !memcmp(R[1], R[0], sizeof C0), "%s %s pattern %d mma",
                    ms[mi].gpu, mpe_type_name(ms[mi].t), pat);
    }
  }
  ck_assert(checked > 0);
}
END_TEST

/* Sums that fill the fast kernels' integer accumulators (issue: an int32 block
   sum overflowed on B200 FP8 and returned -15.5 for 112.5). Every operand is
   +-1.5 * 2^s: each product 2.25 * 2^(2s) cuts to 9/16 of 2^(F+2), so L of
   them pass 2^31 whenever L * 2^(F+2) * 9/16 does, while the exact result
   K * 2.25 * 2^(2s) has at most 13 significant bits (11 where binary16 output
   is checked): no model truncates or
   rounds it (F >= 13), so the exact integer K * 9 * 2^(2s-2) is the reference
   for every model, SIMD level, layout and output format. */
static void check_full_sums(const mpe_tc_model *m, const char *what, long *checked)
{
  enum { M = 16, N = 16, KMAX = 1100 };
  static float A[M * KMAX], B[KMAX * N], D[M * N];
  static uint16_t Dh[M * N];
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
  int scales[2] = { 0, p.in == MPE_E4M3 ? 8 : p.in == MPE_FP16 || p.in == MPE_E5M2 ? 15 : 56 };
  int L = p.block > 0 ? p.block : 16;
  int Ks[] = { L / 2 > 0 ? L / 2 : 1, L - 1 > 0 ? L - 1 : 1, L, L + 1, 2 * L, 4 * L + 3 };
  for (int si = 0; si < 2; si++)
    for (int kk = 0; kk < 6; kk++)
      for (int sign = 0; sign < 2; sign++) {
        const int K = Ks[kk] < KMAX ? Ks[kk] : KMAX;
        const float x = ldexpf(1.5f, scales[si]);
        for (int i = 0; i < M * K; i++) A[i] = sign ? -x : x;
        for (int i = 0; i < K * N; i++) B[i] = x;
        const double want = (sign ? -1.0 : 1.0) * 9.0 * K * ldexp(1.0, 2 * scales[si] - 2);
        for (int out16 = 0; out16 < 2; out16++) {
          /* binary16 output: exact while 9K < 2^11 */
          if (out16 && (si || 9 * K >= 2048 || (p.in == MPE_TF32 && p.kind == MPE_TC_BLOCK)))
            continue;
          for (int lvl = 2; lvl >= 0; lvl--)
            for (int layout = 0; layout < 2; layout++) {
              mpe_simd_level_set(lvl);
              int rc;
              if (out16) {
                memset(Dh, 0xff, sizeof Dh);
                rc = mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, NULL, N, Dh, MPE_FP16, N);
              } else if (layout == 0) {
                memset(D, 0xff, sizeof D);
                rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, A, MPE_FP32, K,
                              B, MPE_FP32, N, 0.0f, D, MPE_FP32, N);
              } else {
                /* column-major with A and B transposed: the same products */
                memset(D, 0xff, sizeof D);
                rc = mpe_gemm(m, MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, M, N, K, 1.0f, A, MPE_FP32, K,
                              B, MPE_FP32, N, 0.0f, D, MPE_FP32, M);
              }
              mpe_simd_level_set(-1);
              ck_assert_int_eq(rc, 0);
              for (int t = 0; t < M * N; t++) {
                double got = out16 ? mpe_fp16_to_fp32(Dh[t]) : D[t];
                ck_assert_msg(got == want, "%s K=%d x=%g level %d layout %d out16 %d: %.9g, want %.9g",
                              what, K, (double)x, lvl, layout, out16, got, want);
              }
              (*checked) += M * N;
              if (out16)
                break;   /* mpe_mma has one layout */
            }
        }
      }
}

START_TEST(test_full_accumulators)
{
  static const char *const names[] = { "v100", "t4", "a100", "ada", "h100", "b200", "exact", "fma-chain" };
  long checked = 0;
  int models = 0;
  char what[64];
  for (size_t g = 0; g < sizeof names / sizeof names[0]; g++)
    for (size_t ti = 0; ti < 5; ti++) {
      const mpe_tc_model *m = mpe_tc_model_get(names[g], intypes[ti]);
      if (!m)
        continue;
      snprintf(what, sizeof what, "%s/%s", names[g], mpe_type_name(intypes[ti]));
      check_full_sums(m, what, &checked);
      models++;
    }
  /* custom models on each side of every accumulator bound: L * (2^(F+2) - 1)
     against 2^31 - 1 (one int32 sum), ceil(L/2) * (2^(F+2) - 1) (two), 2^53
     (binary64 lanes), and past them (the portable engine) */
  static const struct { int L, F, late; } v[] = {
    { 32, 24, 0 }, { 32, 25, 0 }, { 32, 25, 1 }, { 33, 25, 0 }, { 31, 26, 1 }, { 64, 24, 0 },
    { 64, 25, 1 }, { 16, 27, 0 }, { 16, 28, 0 }, { 8, 29, 0 }, { 4, 30, 0 }, { 1024, 19, 0 },
    { 1024, 20, 1 }, { 1024, 21, 0 }, { 1000, 40, 0 }, { 16, 49, 0 }, { 16, 50, 1 }, { 3, 56, 0 },
  };
  for (size_t t = 0; t < sizeof v / sizeof v[0]; t++)
    for (size_t ti = 0; ti < 5; ti++) {
      mpe_tc_params q;
      mpe_tc_model_params(mpe_tc_model_get("h100", intypes[ti]), &q);
      q.block = v[t].L;
      q.align_bits = v[t].F;
      q.late_c = v[t].late;
      q.result_bits = 0;
      mpe_tc_model *m;
      ck_assert_int_eq(mpe_tc_model_custom(&m, &q), 0);
      snprintf(what, sizeof what, "custom L=%d F=%d late_c=%d %s", v[t].L, v[t].F, v[t].late,
               mpe_type_name(intypes[ti]));
      check_full_sums(m, what, &checked);
      mpe_tc_model_free(m);
      models++;
    }
  printf("full accumulators: %d models, %ld outputs equal to the exact integer result\n", models, checked);
}
END_TEST

START_TEST(test_errors)
{
  const mpe_tc_model *m = mpe_tc_model_get("h100", MPE_FP16), *tf = mpe_tc_model_get("h100", MPE_TF32);
  float A[16] = { 1 }, B[16] = { 1 }, C[16], D[16];
  uint16_t Dh[4];
  for (int i = 0; i < 16; i++) C[i] = D[i] = 42;
  /* unknown names and instructions the GPU lacks */
  ck_assert_ptr_null(mpe_tc_model_get("v100", MPE_BF16));
  ck_assert_ptr_null(mpe_tc_model_get("t4", MPE_TF32));
  ck_assert_ptr_null(mpe_tc_model_get("a100", MPE_E4M3));
  ck_assert_ptr_null(mpe_tc_model_get("p100", MPE_FP16));
  ck_assert_ptr_null(mpe_tc_model_get(NULL, MPE_FP16));
  ck_assert_ptr_null(mpe_tc_model_get("h100", MPE_FP32));
  ck_assert_ptr_eq(mpe_tc_model_get("H200", MPE_FP16), m);
  ck_assert_ptr_eq(mpe_tc_model_get("l40s", MPE_E4M3), mpe_tc_model_get("ada", MPE_E4M3));
  ck_assert_ptr_ne(mpe_tc_model_get("rtx-pro-6000", MPE_E5M2), mpe_tc_model_get("b200:mma.sync", MPE_E5M2));
  ck_assert_str_eq(mpe_tc_model_name(m), "h100");
  ck_assert_ptr_null(mpe_tc_model_name(NULL));
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(NULL, &p), MPE_EINVAL);
  ck_assert_int_eq(mpe_tc_model_params(m, NULL), MPE_EINVAL);
  /* mpe_mma */
  ck_assert_int_eq(mpe_mma(NULL, 2, 2, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, -1, 2, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, -2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 3, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 3, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 3, D, MPE_FP32, 3), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 1, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, NULL, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, A, MPE_FP32, 2, NULL, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, NULL, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, A, MPE_BF16, 2, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, A, MPE_FP32, 2, B, MPE_E4M3, 2, C, 2, D, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 2, 2, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, C, 2, D, MPE_BF16, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(tf, 2, 2, 2, A, MPE_FP32, 2, B, MPE_FP32, 2, Dh, 2, Dh, MPE_FP16, 2), MPE_EUNSUP);
  /* k so near INT_MAX that K padded to whole blocks overflows an int: refused before
     anything is read (the buffers are 16 floats); up to INT_MAX - 4096 is taken */
  const int kbig = INT_MAX - 5, kmax = INT_MAX - 4096;
  ck_assert_int_eq(mpe_mma(m, 1, 1, kbig, A, MPE_FP32, kbig, B, MPE_FP32, 1, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma_cd(m, 1, 1, kbig, A, MPE_FP32, kbig, B, MPE_FP32, 1, Dh, MPE_FP16, 1, D, MPE_FP32, 1),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 0, 1, kmax + 1, A, MPE_FP32, kmax + 1, B, MPE_FP32, 1, C, 1, D, MPE_FP32, 1),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(m, 0, 1, kmax, A, MPE_FP32, kmax, B, MPE_FP32, 1, C, 1, D, MPE_FP32, 1), 0);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, kbig, 1, A, MPE_FP32, kbig, B,
                            MPE_FP32, 1, 0, C, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, 1, 1, INT_MAX, 1, A, MPE_FP32, INT_MAX, B,
                            MPE_FP32, 1, 0, C, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 0, kmax + 1, 1, A, MPE_FP32, kmax + 1,
                            B, MPE_FP32, 1, 0, C, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 0, kmax, 1, A, MPE_FP32, kmax, B,
                            MPE_FP32, 1, 0, C, MPE_FP32, 1), 0);
  /* mpe_gemm */
  ck_assert_int_eq(mpe_gemm(NULL, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, (mpe_layout)7, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, (mpe_trans)5, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, -2, 2, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 4, 3, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 4, 0, C, MPE_FP32, 4), MPE_EINVAL);   /* lda < k */
  ck_assert_int_eq(mpe_gemm(m, MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 2, 3, 1, A, MPE_FP32, 4, B,
                            MPE_FP32, 3, 0, C, MPE_FP32, 3), MPE_EINVAL);   /* ldc < m */
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_TRANS, MPE_NO_TRANS, 4, 2, 3, 1, A, MPE_FP32, 3, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 2), MPE_EINVAL);   /* A^T: lda < m */
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_TRANS, 2, 4, 3, 1, A, MPE_FP32, 3, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 4), MPE_EINVAL);   /* B^T: ldb < k */
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, NULL, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, NULL, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_TF32, 2, B,
                            MPE_FP32, 2, 0, C, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, C, MPE_E5M2, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(tf, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_FP32, 2, B,
                            MPE_FP32, 2, 0, Dh, MPE_FP16, 2), MPE_EUNSUP);
  for (int i = 0; i < 16; i++)
    ck_assert(C[i] == 42 && D[i] == 42);   /* nothing written */
  /* custom models: parameters out of range */
  mpe_tc_model *cm = (mpe_tc_model *)&p;
  mpe_tc_model_params(m, &p);
  mpe_tc_params q = p;
  ck_assert_int_eq(mpe_tc_model_custom(NULL, &p), MPE_EINVAL);
  ck_assert_int_eq(mpe_tc_model_custom(&cm, NULL), MPE_EINVAL);
  q.block = 0; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  q.align_bits = 61; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  q.block = 1024; q.align_bits = 55; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  q.in = MPE_FP32; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  q.round_fp32 = MPE_SR; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  q.input_round = MPE_RU; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  q.result_bits = -1; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  q.kind = (mpe_tc_kind)9; ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL); q = p;
  ck_assert_ptr_null(cm);   /* NULL after a failure (the constructor convention, mpemu/core.h) */
}
END_TEST

/* "What if the H100 kept one more bit": a custom model differs from the
   named one exactly where the extra bit matters; the TF32 input rule. */
START_TEST(test_custom_and_tf32_rule)
{
  const mpe_tc_model *hm = mpe_tc_model_get("h100", MPE_FP16);
  mpe_tc_params p;
  mpe_tc_model_params(hm, &p);
  ck_assert_int_eq(p.block, 16);
  ck_assert_int_eq(p.align_bits, 25);
  ck_assert_int_eq(p.round_fp32, MPE_RZ);
  p.align_bits = 26;
  mpe_tc_model *h26;
  ck_assert_int_eq(mpe_tc_model_custom(&h26, &p), 0);
  /* c = -(1 - 2^-24), products 4 and 2^-26: E_max = 2; F = 25 drops 2^-26's bit */
  uint16_t A[2] = { h(2), h(0x1p-13) }, B[2] = { h(2), h(0x1p-13) };
  float C = -(1 - 0x1p-24f), D1, D2;
  ck_assert_int_eq(mpe_mma(hm, 1, 1, 2, A, MPE_FP16, 2, B, MPE_FP16, 1, &C, 1, &D1, MPE_FP32, 1), 0);
  ck_assert_int_eq(mpe_mma(h26, 1, 1, 2, A, MPE_FP16, 2, B, MPE_FP16, 1, &C, 1, &D2, MPE_FP32, 1), 0);
  ck_assert(D1 == 3.0f);   /* c cut to -(1 - 2^-23): 3 + 2^-23 - 2^-26 → RZ: 3 */
  ck_assert(D1 == D2 || D2 == 3.0f);
  mpe_tc_model_free(h26);
  /* TF32: truncation (default) vs RNE / RNA of binary32 operands */
  const mpe_tc_model *t = mpe_tc_model_get("a100", MPE_TF32);
  mpe_tc_model_params(t, &p);
  ck_assert_int_eq(p.input_round, MPE_RZ);
  float a = 1 + 0x1p-10f + 0x1p-11f, b = 1, c = 0, d;   /* halfway between two TF32 numbers */
  ck_assert_int_eq(mpe_mma(t, 1, 1, 1, &a, MPE_FP32, 1, &b, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1), 0);
  ck_assert(d == 1 + 0x1p-10f);
  p.input_round = MPE_RNE;
  mpe_tc_model *rne, *rna;
  ck_assert_int_eq(mpe_tc_model_custom(&rne, &p), 0);
  p.input_round = MPE_RNA;
  ck_assert_int_eq(mpe_tc_model_custom(&rna, &p), 0);
  ck_assert_int_eq(mpe_mma(rne, 1, 1, 1, &a, MPE_FP32, 1, &b, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1), 0);
  ck_assert(d == 1 + 0x1p-9f);   /* tie to even */
  a = 1 + 0x1p-11f;
  ck_assert_int_eq(mpe_mma(rne, 1, 1, 1, &a, MPE_FP32, 1, &b, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1), 0);
  ck_assert(d == 1.0f);
  ck_assert_int_eq(mpe_mma(rna, 1, 1, 1, &a, MPE_FP32, 1, &b, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1), 0);
  ck_assert(d == 1 + 0x1p-10f);
  mpe_tc_model_free(rne);
  mpe_tc_model_free(rna);
}
END_TEST

/* mpe_tc_params can grow: the size travels with the call (the macros pass
   sizeof); a newer caller's extra fields must be zero; the plain symbols
   (programs built before the macros) use the first layout */
START_TEST(test_params_size)
{
  const mpe_tc_model *hm = mpe_tc_model_get("h100", MPE_FP16);
  struct { mpe_tc_params p; int newer[2]; } big;
  memset(&big, 0x5a, sizeof big);
  ck_assert_int_eq(mpe_tc_model_params_sized(hm, &big.p, sizeof big), MPE_OK);
  ck_assert_int_eq(big.newer[0], 0);   /* fields unknown to this library: zero, their default */
  ck_assert_int_eq(big.newer[1], 0);
  ck_assert_int_eq(big.p.block, 16);
  mpe_tc_model *m;
  ck_assert_int_eq(mpe_tc_model_custom_sized(&m, &big.p, sizeof big), MPE_OK);
  mpe_tc_model_free(m);
  big.newer[1] = 1;   /* a behaviour this library does not have */
  ck_assert_int_eq(mpe_tc_model_custom_sized(&m, &big.p, sizeof big), MPE_EUNSUP);
  ck_assert_int_eq(mpe_tc_model_custom_sized(&m, &big.p, MPE_TC_PARAMS_SIZE_V1 - 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_tc_model_params_sized(hm, &big.p, 8), MPE_EINVAL);
  /* the first layout through the plain (parenthesised) functions */
  mpe_tc_params q;
  memset(&q, 0, sizeof q);
  ck_assert_int_eq((mpe_tc_model_params)(hm, &q), MPE_OK);
  ck_assert_int_eq(q.align_bits, 25);
  ck_assert_int_eq((mpe_tc_model_custom)(&m, &q), MPE_OK);
  mpe_tc_model_free(m);
  /* designated initialisers still build a valid struct */
  mpe_tc_params d = { .kind = MPE_TC_EXACT, .in = MPE_BF16, .round_fp32 = MPE_RNE, .round_fp16 = MPE_RNE,
                      .input_round = MPE_RNE, .zero_c_counts = 1 };
  ck_assert_int_eq(mpe_tc_model_custom(&m, &d), MPE_OK);
  mpe_tc_model_free(m);
}
END_TEST

/* Results do not depend on the SIMD level or the thread count. */
START_TEST(test_levels_threads)
{
  static const struct { const char *nm; mpe_type t; int out16; } ms[] = {
    { "v100", MPE_FP16, 0 }, { "a100", MPE_BF16, 0 }, { "a100", MPE_TF32, 0 }, { "ada", MPE_E4M3, 0 },
    { "h100", MPE_FP16, 0 }, { "h100", MPE_FP16, 1 }, { "h100", MPE_E5M2, 0 }, { "b200", MPE_E4M3, 0 },
    { "v100", MPE_FP16, 1 }, { "fma-chain", MPE_BF16, 0 }, { "exact", MPE_FP16, 0 },
  };
  const mpe_tc_model *m = mpe_tc_model_get(ms[_i].nm, ms[_i].t);
  uint64_t s = ts_seed() + 1000 + (uint64_t)_i;
  enum { M = 45, N = 70, K = 133 };
  static float A[M * K], B[K * N], C[M * N], R[5][M * N];
  static uint16_t Ch[M * N], Rh[5][M * N];
  for (int i = 0; i < M * K; i++) A[i] = (float)rand_in(&s, ms[_i].t);
  for (int i = 0; i < K * N; i++) B[i] = (float)rand_in(&s, ms[_i].t);
  for (int i = 0; i < M * N; i++) { C[i] = (float)rand_in(&s, MPE_FP16) * 4; Ch[i] = h(C[i]); }
  int run = 0;
  for (int lvl = 2; lvl >= 0; lvl--)
    for (int th = 1; th <= 2; th++) {
      if (lvl == 0 && th == 2)
        continue;
      mpe_simd_level_set(lvl);
#ifdef _OPENMP
      omp_set_num_threads(th);
#endif
      if (ms[_i].out16)
        ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, Ch, N, Rh[run], MPE_FP16, N), 0);
      else
        ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, R[run], MPE_FP32, N), 0);
      run++;
    }
  mpe_simd_level_set(-1);
  for (int r = 1; r < run; r++) {
    if (ms[_i].out16)
      ck_assert_int_eq(memcmp(Rh[0], Rh[r], sizeof Rh[0]), 0);
    else
      ck_assert_int_eq(memcmp(R[0], R[r], sizeof R[0]), 0);
  }
}
END_TEST

/* The binary16 outputs of the FP8 folders: mma.sync m16n8k32 with binary16 C and D
   (the data's CUDA source, tests/conformance/README.md), c rounded to binary16
   first. Ada's fit its block model (F = 13, no 13-bit cut); Hopper's and
   Blackwell's fit fp16_split (mpe_tc_model_get(3)): every row of every file is
   compared and asserted, and the same model without fp16_split must miss some
   (the rows decide the field). */
START_TEST(test_conformance_fp8_fp16)
{
  int ci = _i;
  if (configs[ci].t != MPE_E4M3 && configs[ci].t != MPE_E5M2)
    return;
  if (!strcmp(configs[ci].gpu, "L40S"))
    return;   /* no binary16 file */
  char dfile[64];
  snprintf(dfile, sizeof dfile, "d_%s_fp16.txt", configs[ci].gpu);
  confdata cd;
  ck_assert_int_gt(load_conf(ci, dfile, &cd), 0);
  const mpe_tc_model *m = model_sync(ci, 1);
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
  long compared;
  int bad = check_conf(m, ci, &cd, 1, 0, &compared);
  printf("check_tc: conformance %s/%s fp16 (%s): K=%d rows=%d compared=%ld mismatches=%d\n", configs[ci].gpu,
         configs[ci].in, mpe_tc_model_name(m), cd.k, cd.rows, compared, bad);
  ts_conf_tally(compared, bad);
  if (p.fp16_split) {
    p.fp16_split = 0;
    mpe_tc_model *m0;
    ck_assert_int_eq(mpe_tc_model_custom(&m0, &p), 0);
    int hit = 0;
    for (int r = 0; r < cd.rows; r++) {
      uint16_t ch = mpe_fp32_to_fp16(ts_u2f(cd.c[r]), MPE_RNE), dh = 0;
      ck_assert_int_eq(mpe_mma(m0, 1, 1, cd.k, cd.a + (size_t)r * cd.k, MPE_FP32, cd.k, cd.b + (size_t)r * cd.k,
                               MPE_FP32, 1, &ch, 1, &dh, MPE_FP16, 1), 0);
      hit += same_bits(ts_f2u(mpe_fp16_to_fp32(dh)), cd.d[r]);
    }
    printf("check_tc: conformance %s/%s fp16 without fp16_split: %d of %d rows\n", configs[ci].gpu,
           configs[ci].in, hit, cd.rows);
    mpe_tc_model_free(m0);
    ck_assert_int_lt(hit, cd.rows);
  }
  free_conf(&cd);
  ck_assert_int_eq(bad, 0);
}
END_TEST

/* MPE_CHECK_EXPENSIVE=1: every named model, larger random cases with wide
   exponent ranges, zeros and a sprinkle of inf/NaN, fast kernels against the
   portable engine, FP32 and FP16 output. */
START_TEST(test_expensive_fast_vs_portable)
{
  if (!ts_expensive())
    return;
  static const char *const names[] = { "v100", "t4", "a100", "ada", "h100", "b200", "exact", "fma-chain" };
  uint64_t s = ts_seed() + 555;
  enum { M = 67, N = 83, K = 301 };
  static float A[M * K], B[K * N], C[M * N], R0[M * N], R1[M * N];
  static uint16_t Ch[M * N], H0[M * N], H1[M * N];
  long checked = 0;
  for (size_t g = 0; g < sizeof names / sizeof names[0]; g++)
    for (size_t ti = 0; ti < 5; ti++) {
      const mpe_tc_model *m = mpe_tc_model_get(names[g], intypes[ti]);
      if (!m)
        continue;
      for (int trial = 0; trial < 3; trial++) {
        for (int i = 0; i < M * K; i++) {
          A[i] = (float)(rand_in(&s, intypes[ti]) * ldexp(1, (int)(ts_rand64(&s) % (trial + 1) * 7) - 3 * trial));
          if (ts_rand64(&s) % 17 == 0) A[i] = 0;
        }
        for (int i = 0; i < K * N; i++) {
          B[i] = (float)rand_in(&s, intypes[ti]);
          if (ts_rand64(&s) % 19 == 0) B[i] = -0.0f;
        }
        if (trial == 2) {
          A[3 * K + 5] = INFINITY;
          B[7 * N + 9] = NAN;
        }
        for (int i = 0; i < M * N; i++) {
          C[i] = (float)rand_in(&s, MPE_FP16) * 8;
          Ch[i] = mpe_fp32_to_fp16(C[i], MPE_RNE);
        }
        for (int out16 = 0; out16 < 2; out16++) {
          if (out16 && intypes[ti] == MPE_TF32 && strcmp(names[g], "exact") && strcmp(names[g], "fma-chain"))
            continue;
          for (int lvl = 2; lvl >= 0; lvl -= 2) {
            mpe_simd_level_set(lvl);
            int rc = out16 ? mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, Ch, N, lvl ? H0 : H1, MPE_FP16, N)
                           : mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, lvl ? R0 : R1, MPE_FP32, N);
            ck_assert_int_eq(rc, 0);
          }
          mpe_simd_level_set(-1);
          if (out16)
            ck_assert_msg(!memcmp(H0, H1, sizeof H0), "%s/%s fp16 trial %d", names[g], mpe_type_name(intypes[ti]), trial);
          else
            ck_assert_msg(!memcmp(R0, R1, sizeof R0), "%s/%s fp32 trial %d", names[g], mpe_type_name(intypes[ti]), trial);
          checked += M * N;
        }
      }
    }
  printf("expensive: %ld outputs, fast kernels == portable engine\n", checked);
}
END_TEST

static Suite *tc_suite(void)
{
  Suite *s = suite_create("tc");
  TCase *tc = tcase_create("conformance");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_conformance_fp32, 0, NCONFIG);
  tcase_add_loop_test(tc, test_conformance_fp16, 0, NCONFIG);
  tcase_add_loop_test(tc, test_conformance_fp8_fp16, 0, NCONFIG);
  tcase_add_loop_test(tc, test_conformance_mmasim, 0, NMMASIM_FILES);
  suite_add_tcase(s, tc);
  TCase *tn = tcase_create("names");
  tcase_add_test(tn, test_model_name_at);
  suite_add_tcase(s, tn);
  TCase *t2 = tcase_create("semantics");
  tcase_set_timeout(t2, 600);
  tcase_add_test(t2, test_hand_vectors);
  tcase_add_test(t2, test_open_points);
  tcase_add_test(t2, test_agreement_classes);
  tcase_add_test(t2, test_fp16_split);
  tcase_add_test(t2, test_instruction_names);
  tcase_add_test(t2, test_specials);
  tcase_add_loop_test(t2, test_exact_mpfr, 0, 5);
  tcase_add_loop_test(t2, test_fma_chain, 0, 5);
  tcase_add_loop_test(t2, test_error_bound, 0, 10);
  tcase_add_loop_test(t2, test_gemm_layouts, 0, 2);
  tcase_add_test(t2, test_gemm_alpha_beta_sizes);
  tcase_add_loop_test(t2, test_gemm_packed_epilogue, 0, 5);
  tcase_add_test(t2, test_fma_chain_blocks);
  tcase_add_test(t2, test_fma_chain_zeros);
  tcase_add_test(t2, test_errors);
  tcase_add_test(t2, test_gemm_alias);
  tcase_add_loop_test(t2, test_operand_types, 0, 5);
  tcase_add_test(t2, test_kernel_variants);
  tcase_add_test(t2, test_pass1_exponent_edges);
  tcase_add_test(t2, test_fp16_split_levels);
  tcase_add_test(t2, test_full_accumulators);
  tcase_add_test(t2, test_custom_and_tf32_rule);
  tcase_add_test(t2, test_params_size);
  tcase_add_loop_test(t2, test_levels_threads, 0, 11);
  tcase_add_test(t2, test_expensive_fast_vs_portable);
  suite_add_tcase(s, t2);
  return s;
}

int main(void)
{
  setvbuf(stdout, NULL, _IONBF, 0);
  return ts_run(tc_suite());
}
