/* Mixed-precision LU and iterative refinement: the LU really rounds the GEMM
   inputs (and only those), LU-IR converges to the docs/DESIGN.md §7 threshold where
   theory says it does and falls back where it does not, GMRES-IR converges
   beyond LU-IR's limit, the cuSOLVER-style codes, scaling, and every error path. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <cblas.h>
#include <lapacke.h>
#include "testsupport.h"

static double *alloc_d(size_t n) { double *p = malloc(n * sizeof *p); ck_assert_ptr_nonnull(p); return p; }

/* b = A * xtrue with xtrue_i = 1/(i+1) (binary64 products summed in binary64) */
static void rhs(int n, const double *A, double *xt, double *b)
{
  for (int i = 0; i < n; i++)
    xt[i] = 1.0 / (i + 1);
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++)
      s += A[(size_t)j * n + i] * xt[j];
    b[i] = s;
  }
}

/* the docs/DESIGN.md §7 stopping test, recomputed here with plain loops */
static int passes_test(int n, const double *A, const double *b, const double *x)
{
  double rn = 0.0, xn = 0.0, an = 0.0;
  for (int i = 0; i < n; i++) {
    long double s = b[i], rowsum = 0;
    for (int j = 0; j < n; j++) {
      s -= (long double)A[(size_t)j * n + i] * x[j];
      rowsum += fabs(A[(size_t)j * n + i]);
    }
    rn = fmax(rn, fabs((double)s));
    an = fmax(an, (double)rowsum);
    xn = fmax(xn, fabs(x[i]));
  }
  return rn <= 2 * sqrt((double)n) * an * xn * 0x1p-53;   /* x2: our residual is not exact either */
}

/* ||P A - L U||_max / ||A||_max for a factorization from mpe_ir_lu */
static double lu_error(int n, const float *A0, const float *LU, const int *ipiv)
{
  double *PA = alloc_d((size_t)n * n), amax = 0.0, emax = 0.0;
  for (size_t i = 0; i < (size_t)n * n; i++)
    PA[i] = A0[i];
  for (int k = 0; k < n; k++)
    if (ipiv[k] != k)
      for (int j = 0; j < n; j++) {
        double t = PA[(size_t)j * n + k];
        PA[(size_t)j * n + k] = PA[(size_t)j * n + ipiv[k]];
        PA[(size_t)j * n + ipiv[k]] = t;
      }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k <= (i < j ? i : j); k++)
        s += (k == i ? 1.0 : (double)LU[(size_t)k * n + i]) * LU[(size_t)j * n + k];
      emax = fmax(emax, fabs(PA[(size_t)j * n + i] - s));
      amax = fmax(amax, fabs(PA[(size_t)j * n + i]));
    }
  free(PA);
  return emax / amax;
}

START_TEST(test_lu_rounds_gemm_inputs)
{
  const int n = 96;
  double *Ad = alloc_d((size_t)n * n);
  ck_assert_int_eq(mpe_mat_randsvd(Ad, n, n, 10.0, 3, ts_seed()), MPE_OK);
  float *A0 = malloc((size_t)n * n * sizeof *A0), *F = malloc((size_t)n * n * sizeof *F),
        *G = malloc((size_t)n * n * sizeof *G);
  int ipiv[96], jpiv[96];
  for (size_t i = 0; i < (size_t)n * n; i++)
    A0[i] = (float)Ad[i];
  double err[4];
  static const mpe_type in[4] = { MPE_FP32, MPE_TF32, MPE_FP16, MPE_BF16 };
  for (int t = 0; t < 4; t++) {
    memcpy(F, A0, (size_t)n * n * sizeof *F);
    ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, in[t], NULL, 8), MPE_OK);
    err[t] = lu_error(n, A0, F, ipiv);
  }
  /* binary32 everywhere: the backward error of a binary32 LU; then the unit
     roundoff of each input format shows up (bf16's 2^-8 > fp16/tf32's 2^-11) */
  ck_assert_msg(err[0] < 1e-6, "fp32 %g", err[0]);
  ck_assert_msg(err[1] > 30 * err[0] && err[1] < 2e-2, "tf32 %g", err[1]);
  ck_assert_msg(err[2] > 30 * err[0] && err[2] < 2e-2, "fp16 %g", err[2]);
  ck_assert_msg(err[3] > 3 * err[2] && err[3] < 1e-1, "bf16 %g vs fp16 %g", err[3], err[2]);
  /* the pivots of a binary32 LU are LAPACK's (sgetrf) on this matrix */
  memcpy(F, A0, (size_t)n * n * sizeof *F);
  ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_FP32, NULL, 0), MPE_OK);
  memcpy(G, A0, (size_t)n * n * sizeof *G);
  lapack_int lp[96];
  ck_assert_int_eq(LAPACKE_sgetrf(LAPACK_COL_MAJOR, n, n, G, n, lp), 0);
  for (int k = 0; k < n; k++)
    ck_assert_int_eq(ipiv[k], lp[k] - 1);
  /* one panel (nb = n): no GEMM at all, so the input format cannot matter */
  memcpy(F, A0, (size_t)n * n * sizeof *F);
  memcpy(G, A0, (size_t)n * n * sizeof *G);
  ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_FP32, NULL, n), MPE_OK);
  ck_assert_int_eq(mpe_ir_lu(G, n, n, jpiv, MPE_BF16, NULL, n), MPE_OK);
  ck_assert(memcmp(F, G, (size_t)n * n * sizeof *F) == 0);
  /* L and U exactly representable in fp16: the fp16 LU equals the fp32 one.
     A = L U with L unit lower, entries in {0, 1/2} below, U upper small integers. */
  double *L = alloc_d((size_t)n * n), *U = alloc_d((size_t)n * n);
  uint64_t st = ts_seed();
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      L[(size_t)j * n + i] = i == j ? 1.0 : i > j ? (ts_rand64(&st) & 1) * 0.5 : 0.0;
      U[(size_t)j * n + i] = i == j ? 64.0 : i < j ? (double)(ts_rand64(&st) % 7) - 3.0 : 0.0;
    }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int k = 0; k < n; k++)
        s += L[(size_t)k * n + i] * U[(size_t)j * n + k];
      A0[(size_t)j * n + i] = (float)s;
    }
  memcpy(F, A0, (size_t)n * n * sizeof *F);
  memcpy(G, A0, (size_t)n * n * sizeof *G);
  ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_FP32, NULL, 8), MPE_OK);
  ck_assert_int_eq(mpe_ir_lu(G, n, n, jpiv, MPE_FP16, NULL, 8), MPE_OK);
  ck_assert(memcmp(ipiv, jpiv, sizeof ipiv) == 0);
  ck_assert(memcmp(F, G, (size_t)n * n * sizeof *F) == 0);
  free(L);
  free(U);
  free(Ad);
  free(A0);
  free(F);
  free(G);
}
END_TEST

/* The recursive splits at multiples of nb, for sizes and blocks that do not
   divide evenly: every format gives an LU of its precision, a NaN placed in
   L or U anywhere is reported, and with L and U exactly representable in the
   factor format every format gives the binary32 factors bit for bit. */
START_TEST(test_lu_odd_blocks)
{
  static const int cases[][2] = { { 100, 7 }, { 100, 64 }, { 130, 33 }, { 67, 16 }, { 5, 2 }, { 9, 1 } };
  static const mpe_type in[4] = { MPE_FP32, MPE_TF32, MPE_FP16, MPE_BF16 };
  for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
    const int n = cases[t][0], nb = cases[t][1];
    double *Ad = alloc_d((size_t)n * n);
    ck_assert_int_eq(mpe_mat_randsvd(Ad, n, n, 10.0, 3, ts_seed() + t), MPE_OK);
    float *A0 = malloc((size_t)n * n * sizeof *A0), *F = malloc((size_t)n * n * sizeof *F),
          *G = malloc((size_t)n * n * sizeof *G);
    int *ipiv = malloc((size_t)n * sizeof *ipiv), *jpiv = malloc((size_t)n * sizeof *jpiv);
    for (size_t i = 0; i < (size_t)n * n; i++)
      A0[i] = (float)Ad[i];
    for (int f = 0; f < 4; f++) {
      memcpy(F, A0, (size_t)n * n * sizeof *F);
      ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, in[f], NULL, nb), MPE_OK);
      double e = lu_error(n, A0, F, ipiv);
      ck_assert_msg(e < (f == 0 ? 1e-5 : f == 3 ? 1e-1 : 2e-2), "n %d nb %d format %d: %g", n, nb, f, e);
      /* a NaN in the last column (a U entry) or the last row (an L entry) */
      for (int where = 0; where < 2; where++) {
        memcpy(G, A0, (size_t)n * n * sizeof *G);
        G[where ? (size_t)(n / 2) * n + n - 1 : (size_t)(n - 1) * n] = NAN;
        ck_assert_int_eq(mpe_ir_lu(G, n, n, jpiv, in[f], NULL, nb), MPE_ERANGE);
      }
    }
    /* A = L U, L unit lower with entries in {0, 1/2}, U upper small integers, diagonal 64:
       every product is exact in each format, so all give the same bits */
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int k = 0; k <= (i < j ? i : j); k++) {
          double l = k == i ? 1.0 : (double)((i * 31 + k * 17 + (int)t) % 2) * 0.5;
          double u = k == j ? 64.0 : (double)((k * 7 + j * 13 + (int)t) % 7) - 3.0;
          s += l * u;
        }
        A0[(size_t)j * n + i] = (float)s;
      }
    memcpy(F, A0, (size_t)n * n * sizeof *F);
    ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_FP32, NULL, nb), MPE_OK);
    for (int f = 1; f < 4; f++) {
      memcpy(G, A0, (size_t)n * n * sizeof *G);
      ck_assert_int_eq(mpe_ir_lu(G, n, n, jpiv, in[f], NULL, nb), MPE_OK);
      ck_assert_msg(memcmp(F, G, (size_t)n * n * sizeof *F) == 0, "n %d nb %d format %d", n, nb, f);
      ck_assert(memcmp(ipiv, jpiv, (size_t)n * sizeof *ipiv) == 0);
    }
    free(Ad);
    free(A0);
    free(F);
    free(G);
    free(ipiv);
    free(jpiv);
  }
}
END_TEST

/* the unblocked panel of mpe_ir_lu, step for step (the same OpenBLAS calls) */
static void ref_panel(float *A, int n, int *ipiv, int k, int kb)
{
  for (int j = k; j < k + kb; j++) {
    float *colj = A + (size_t)j * n;
    int p = j + (int)cblas_isamax(n - j, colj + j, 1);
    ipiv[j] = p;
    if (p != j)
      cblas_sswap(n, A + j, n, A + p, n);
    for (int i = j + 1; i < n; i++)
      colj[i] /= colj[j];
    if (j + 1 < k + kb)
      cblas_sger(CblasColMajor, n - j - 1, k + kb - j - 1, -1.0f, colj + j + 1, 1,
                 A + (size_t)(j + 1) * n + j, n, A + (size_t)(j + 1) * n + j + 1, n);
  }
}

/* n = 2 nb: panel, U12 = L11^-1 A12, A22 -= rn(L21) rn(U12) by sgemm, panel. The
   factors of mpe_ir_lu are these bit for bit, for each format (nb <= 32: the
   diagonal blocks are not split further). */
START_TEST(test_lu_exact_two_blocks)
{
  static const mpe_type in[3] = { MPE_TF32, MPE_FP16, MPE_BF16 };
  for (int nb = 8; nb <= 32; nb += 24) {
    const int n = 2 * nb;
    double *Ad = alloc_d((size_t)n * n);
    ck_assert_int_eq(mpe_mat_randsvd(Ad, n, n, 100.0, 3, ts_seed() + nb), MPE_OK);
    float *F = malloc((size_t)n * n * sizeof *F), *G = malloc((size_t)n * n * sizeof *G),
          *wl = malloc((size_t)nb * nb * sizeof *wl), *wu = malloc((size_t)nb * nb * sizeof *wu);
    int *ipiv = malloc((size_t)n * sizeof *ipiv), *jpiv = malloc((size_t)n * sizeof *jpiv);
    for (int f = 0; f < 3; f++) {
      for (size_t i = 0; i < (size_t)n * n; i++)
        F[i] = G[i] = (float)Ad[i];
      ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, in[f], NULL, nb), MPE_OK);
      ref_panel(G, n, jpiv, 0, nb);
      cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, nb, nb, 1.0f, G, n,
                  G + (size_t)nb * n, n);
      const mpe_format *fm = mpe_format_of(in[f]);
      for (int j = 0; j < nb; j++) {
        ck_assert_int_eq(mpe_round_f32(wl + (size_t)j * nb, G + (size_t)j * n + nb, nb, fm, NULL), MPE_OK);
        ck_assert_int_eq(mpe_round_f32(wu + (size_t)j * nb, G + (size_t)(nb + j) * n, nb, fm, NULL), MPE_OK);
      }
      cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nb, nb, nb, -1.0f, wl, nb, wu, nb, 1.0f,
                  G + (size_t)nb * n + nb, n);
      ref_panel(G, n, jpiv, nb, nb);
      ck_assert(memcmp(ipiv, jpiv, (size_t)n * sizeof *ipiv) == 0);
      ck_assert_msg(memcmp(F, G, (size_t)n * n * sizeof *F) == 0, "nb %d format %d", nb, f);
    }
    free(Ad);
    free(F);
    free(G);
    free(wl);
    free(wu);
    free(ipiv);
    free(jpiv);
  }
}
END_TEST

START_TEST(test_lu_errors)
{
  float A[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 10 }, keep[9];
  int ipiv[3];
  memcpy(keep, A, sizeof A);
  ck_assert_int_eq(mpe_ir_lu(NULL, 3, 3, ipiv, MPE_FP16, NULL, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_lu(A, 3, 3, NULL, MPE_FP16, NULL, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_lu(A, 0, 3, ipiv, MPE_FP16, NULL, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_lu(A, 3, 2, ipiv, MPE_FP16, NULL, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_lu(A, 3, 3, ipiv, MPE_E4M3, NULL, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_lu(A, 3, 3, ipiv, MPE_FP64, NULL, 0), MPE_EINVAL);
  ck_assert(memcmp(A, keep, sizeof A) == 0);
  float S[4] = { 1, 2, 2, 4 };   /* singular */
  ck_assert_int_eq(mpe_ir_lu(S, 2, 2, ipiv, MPE_FP32, NULL, 0), MPE_ERANGE);
  float N[4] = { 1, NAN, 2, 4 };
  ck_assert_int_eq(mpe_ir_lu(N, 2, 2, ipiv, MPE_FP32, NULL, 0), MPE_ERANGE);
  ck_assert_int_eq(mpe_ir_lu(A, 3, 3, ipiv, MPE_FP32, NULL, 0), MPE_OK);
  float x[3] = { 1, 1, 1 };
  ck_assert_int_eq(mpe_ir_lu_solve(A, 3, 3, ipiv, x), MPE_OK);
  /* x solves the original system to binary32 accuracy */
  for (int i = 0; i < 3; i++)
    ck_assert(fabsf(keep[i] * x[0] + keep[3 + i] * x[1] + keep[6 + i] * x[2] - 1.0f) < 1e-5f);
  int bad[3] = { 0, 5, 2 };
  ck_assert_int_eq(mpe_ir_lu_solve(A, 3, 3, bad, x), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_lu_solve(A, 3, 3, NULL, x), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_default_block(10), 1);
  ck_assert_int_eq(mpe_ir_default_block(200), 12);
  ck_assert_int_eq(mpe_ir_default_block(4096), 64);
}
END_TEST

typedef struct {
  int n;
  double *A, *b, *x, *xt;
} problem;

static problem make(int n, int kind, double kappa, int mode)
{
  problem p = { n, alloc_d((size_t)n * n), alloc_d(n), alloc_d(n), alloc_d(n) };
  if (kind == 0)
    ck_assert_int_eq(mpe_mat_dominant(p.A, n, n, ts_seed()), MPE_OK);
  else
    ck_assert_int_eq(mpe_mat_randsvd(p.A, n, n, kappa, mode, ts_seed()), MPE_OK);
  rhs(n, p.A, p.xt, p.b);
  return p;
}

static void drop(problem *p)
{
  free(p->A);
  free(p->b);
  free(p->x);
  free(p->xt);
}

/* The headline: n = 1024 diagonally dominant, FP16 LU, 2-3 corrections. */
START_TEST(test_luir_fp16_dominant_1024)
{
  problem p = make(1024, 0, 0, 0);
  mpe_ir_opts o;
  mpe_ir_opts_init(&o);
  mpe_ir_step h[8];
  o.history = h;
  o.history_cap = 8;
  o.xtrue = p.xt;
  mpe_ir_result r;
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_CONVERGED);
  ck_assert_msg(r.niters >= 1 && r.niters <= 3, "niters %d", r.niters);
  ck_assert_int_eq(r.iterations, r.niters);
  ck_assert_int_eq(r.nhistory, r.niters + 1);
  ck_assert(passes_test(p.n, p.A, p.b, p.x));
  ck_assert_msg(h[0].backward_error > 1e-12, "x0 is only fp16-LU accurate: %g", h[0].backward_error);
  ck_assert(h[r.nhistory - 1].backward_error == r.backward_error);
  ck_assert(r.backward_error < 1e-16);
  ck_assert(r.forward_error < 1e-13 && h[0].forward_error > r.forward_error);
  drop(&p);
}
END_TEST

/* κ·u_f well below 1: converges; far beyond: falls back (status, niters -31,
   and the answer is the binary64 one); disabled fallback: MPE_ECONVERGE. */
START_TEST(test_luir_limits)
{
  static const mpe_type f[3] = { MPE_FP16, MPE_BF16, MPE_TF32 };
  for (int t = 0; t < 3; t++) {
    problem ok = make(120, 1, f[t] == MPE_BF16 ? 10.0 : 50.0, 2);
    mpe_ir_opts o;
    mpe_ir_opts_init(&o);
    o.factor = f[t];
    mpe_ir_result r;
    ck_assert_int_eq(mpe_ir_solve(ok.n, ok.A, ok.n, ok.b, ok.x, &o, &r), MPE_OK);
    ck_assert_msg(r.status == MPE_IR_CONVERGED && r.niters > 0 && r.niters < 12, "%s: %d", mpe_type_name(f[t]), r.niters);
    ck_assert(passes_test(ok.n, ok.A, ok.b, ok.x));
    drop(&ok);

    problem bad = make(120, 1, 1e9, 2);
    ck_assert_int_eq(mpe_ir_solve(bad.n, bad.A, bad.n, bad.b, bad.x, &o, &r), MPE_OK);
    ck_assert_int_eq(r.status, MPE_IR_FALLBACK);
    ck_assert_int_eq(r.niters, -31);
    ck_assert_int_eq(r.iterations, 30);
    ck_assert(passes_test(bad.n, bad.A, bad.b, bad.x));
    o.no_fallback = 1;
    o.max_iter = 5;
    for (int i = 0; i < bad.n; i++)
      bad.x[i] = 0;
    ck_assert_int_eq(mpe_ir_solve(bad.n, bad.A, bad.n, bad.b, bad.x, &o, &r), MPE_ECONVERGE);
    ck_assert_int_eq(r.status, MPE_IR_DIVERGED);
    ck_assert_int_eq(r.niters, -6);
    ck_assert(!passes_test(bad.n, bad.A, bad.b, bad.x) && isfinite(bad.x[0]) && bad.x[0] != 0);
    drop(&bad);
  }
}
END_TEST

START_TEST(test_gmresir_beyond_luir)
{
  problem p = make(150, 1, 1e8, _i == 0 ? 2 : 3);
  mpe_ir_opts o;
  mpe_ir_opts_init(&o);
  o.no_fallback = 1;
  mpe_ir_result r;
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_ECONVERGE);
  o.solver = MPE_IR_GMRES_IR;
  o.gmres_m = p.n;   /* the theory assumes GMRES runs to convergence */
  mpe_ir_step h[16];
  o.history = h;
  o.history_cap = 16;
  o.xtrue = p.xt;
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_CONVERGED);
  ck_assert_msg(r.niters >= 1 && r.niters <= 6, "gmres-ir outer %d", r.niters);
  ck_assert_int_gt(r.inner_iterations, r.niters);
  int inner = 0;
  for (int i = 0; i < r.nhistory; i++)
    inner += h[i].inner;
  ck_assert_int_eq(inner, r.inner_iterations);
  ck_assert_int_eq(h[0].inner, 0);
  ck_assert(passes_test(p.n, p.A, p.b, p.x));
  /* forward error is bounded by kappa * backward error, not more */
  ck_assert(r.forward_error < 1e8 * 1e-14);
  drop(&p);
}
END_TEST

/* GMRES held to 3 steps per correction uses every part of its workspace (the
   last basis and preconditioned columns, the last rotation), so two arrays of
   it that overlap show here: with a layout where H began on Z's last element,
   refinement stopped converging. This problem still converges. */
START_TEST(test_gmresir_short)
{
  problem p = make(150, 1, 1e8, 2);
  mpe_ir_opts o;
  mpe_ir_opts_init(&o);
  o.no_fallback = 1;
  o.solver = MPE_IR_GMRES_IR;
  o.gmres_m = 3;
  mpe_ir_step h[32];
  o.history = h;
  o.history_cap = 32;
  mpe_ir_result r;
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_CONVERGED);
  int full = 0;
  for (int i = 0; i < r.nhistory; i++) {
    ck_assert_int_le(h[i].inner, 3);
    full += h[i].inner == 3;
  }
  ck_assert_msg(full > 0, "no correction ran all 3 GMRES steps");
  ck_assert(passes_test(p.n, p.A, p.b, p.x));
  drop(&p);
}
END_TEST

/* Conversion overflow (-2): entries beyond 65504 without scaling fall back;
   with Higham-Pranesh-Zounon scaling the FP16 LU works and refinement converges. */
START_TEST(test_scaling_overflow)
{
  problem p = make(64, 0, 0, 0);
  for (int i = 0; i < p.n * p.n; i++)
    p.A[i] *= 1e5;
  rhs(p.n, p.A, p.xt, p.b);
  mpe_ir_opts o;
  mpe_ir_opts_init(&o);
  mpe_ir_result r;
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_FALLBACK);
  ck_assert_int_eq(r.niters, MPE_IR_NITERS_OVERFLOW);
  ck_assert_int_eq(r.iterations, 0);
  ck_assert(passes_test(p.n, p.A, p.b, p.x));
  o.factor = MPE_BF16;   /* bf16's range holds 1e5 * 64: no overflow */
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_CONVERGED);
  o.factor = MPE_FP16;
  o.scale = 1;
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_CONVERGED);
  ck_assert(r.niters >= 1 && r.niters <= 4);
  ck_assert(passes_test(p.n, p.A, p.b, p.x));
  /* tiny entries: fp16 would flush them; scaling recovers the fp16 accuracy */
  for (int i = 0; i < p.n * p.n; i++)
    p.A[i] *= 1e-13;
  rhs(p.n, p.A, p.xt, p.b);
  ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_CONVERGED);
  ck_assert(r.niters <= 4);
  drop(&p);
}
END_TEST

/* Factorization failure (-3): singular in binary32, regular in binary64. */
START_TEST(test_factor_failure)
{
  double A[4] = { 1, 1, 1, 1 + 0x1p-30 }, b[2] = { 2, 2 + 0x1p-30 }, x[2] = { 0, 0 };
  mpe_ir_opts o;
  mpe_ir_opts_init(&o);
  mpe_ir_result r;
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, &o, &r), MPE_OK);
  ck_assert_int_eq(r.status, MPE_IR_FALLBACK);
  ck_assert_int_eq(r.niters, MPE_IR_NITERS_FACTOR);
  ck_assert(fabs(x[0] - 1) < 1e-6 && fabs(x[1] - 1) < 1e-6);
  o.no_fallback = 1;
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, &o, &r), MPE_ECONVERGE);
  ck_assert_int_eq(r.status, MPE_IR_DIVERGED);
  ck_assert(isnan(x[0]));
  /* singular in binary64 too: MPE_ERANGE, x untouched */
  double S[4] = { 1, 2, 2, 4 }, y[2] = { 5, 6 };
  o.no_fallback = 0;
  ck_assert_int_eq(mpe_ir_solve(2, S, 2, b, y, &o, &r), MPE_ERANGE);
  ck_assert(y[0] == 5 && y[1] == 6);
}
END_TEST

/* Trailing updates through tensor-core models: wired right (an LU whose GEMMs
   are exact in every model gives the binary32 factors bit for bit), the model
   changes the factors on random data, and LU-IR converges with each GPU model. */
START_TEST(test_lu_models)
{
  const int n = 64;
  float *A0 = malloc((size_t)n * n * sizeof *A0), *F = malloc((size_t)n * n * sizeof *F),
        *G = malloc((size_t)n * n * sizeof *G);
  int ipiv[64], jpiv[64];
  uint64_t st = ts_seed();
  /* A = L U, L unit lower with entries in {0, 1/2}, U upper small integers, diag 64 */
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (int k = 0; k <= (i < j ? i : j); k++) {
        double l = k == i ? 1.0 : (double)((i * 31 + k * 17) % 2) * 0.5;
        double u = k == j ? 64.0 : (double)((k * 7 + j * 13) % 7) - 3.0;
        s += l * u;
      }
      A0[(size_t)j * n + i] = (float)s;
    }
  static const char *models[] = { "v100", "a100", "h100", "b200", "fma-chain" };
  memcpy(F, A0, (size_t)n * n * sizeof *F);
  ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_FP32, NULL, 8), MPE_OK);
  for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
    const mpe_tc_model *m = mpe_tc_model_get(models[k], MPE_FP16);
    ck_assert_ptr_nonnull(m);
    memcpy(G, A0, (size_t)n * n * sizeof *G);
    ck_assert_int_eq(mpe_ir_lu(G, n, n, jpiv, MPE_FP16, m, 8), MPE_OK);
    ck_assert_msg(memcmp(F, G, (size_t)n * n * sizeof *F) == 0, "%s", models[k]);
    ck_assert(memcmp(ipiv, jpiv, sizeof ipiv) == 0);
  }
  /* random data: h100 (RZ block sums) and the sgemm baseline give different factors,
     both with an fp16-sized error */
  double *Ad = alloc_d((size_t)n * n);
  ck_assert_int_eq(mpe_mat_randsvd(Ad, n, n, 10.0, 3, st), MPE_OK);
  for (size_t i = 0; i < (size_t)n * n; i++)
    A0[i] = (float)Ad[i];
  memcpy(F, A0, (size_t)n * n * sizeof *F);
  memcpy(G, A0, (size_t)n * n * sizeof *G);
  ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_FP16, NULL, 8), MPE_OK);
  ck_assert_int_eq(mpe_ir_lu(G, n, n, jpiv, MPE_FP16, mpe_tc_model_get("h100", MPE_FP16), 8), MPE_OK);
  ck_assert(memcmp(F, G, (size_t)n * n * sizeof *F) != 0);
  double e1 = lu_error(n, A0, F, ipiv), e2 = lu_error(n, A0, G, jpiv);
  ck_assert_msg(e1 > 1e-5 && e1 < 2e-2 && e2 > 1e-5 && e2 < 2e-2, "%g %g", e1, e2);
  /* a model must take the factor format */
  ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_FP32, mpe_tc_model_get("h100", MPE_FP16), 8), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_lu(F, n, n, ipiv, MPE_BF16, mpe_tc_model_get("h100", MPE_FP16), 8), MPE_EINVAL);
  /* LU-IR with each model and format */
  problem p = make(128, 0, 0, 0);
  static const mpe_type fmt[] = { MPE_FP16, MPE_BF16, MPE_TF32 };
  for (int t = 0; t < 3; t++) {
    mpe_ir_opts o;
    mpe_ir_opts_init(&o);
    o.factor = fmt[t];
    o.model = mpe_tc_model_get("a100", fmt[t]);
    ck_assert_ptr_nonnull(o.model);
    mpe_ir_result r;
    ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_OK);
    ck_assert_int_eq(r.status, MPE_IR_CONVERGED);
    ck_assert(r.niters >= 1 && r.niters <= 4);
    ck_assert(passes_test(p.n, p.A, p.b, p.x));
    o.model = mpe_tc_model_get("a100", fmt[(t + 1) % 3]);
    ck_assert_int_eq(mpe_ir_solve(p.n, p.A, p.n, p.b, p.x, &o, &r), MPE_EINVAL);
  }
  drop(&p);
  free(Ad);
  free(A0);
  free(F);
  free(G);
}
END_TEST

START_TEST(test_solve_errors)
{
  double A[4] = { 4, 1, 1, 3 }, b[2] = { 1, 2 }, x[2] = { 9, 9 };
  mpe_ir_opts o;
  mpe_ir_result r;
  mpe_ir_opts_init(&o);
  ck_assert_int_eq(o.factor, MPE_FP16);
  ck_assert_int_eq(o.max_iter, 30);
  ck_assert_int_eq(mpe_ir_solve(0, A, 2, b, x, &o, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_solve(2, A, 1, b, x, &o, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_solve(2, NULL, 2, b, x, &o, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, NULL, x, &o, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, NULL, &o, &r), MPE_EINVAL);
  o.factor = MPE_E5M2;
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, &o, &r), MPE_EINVAL);
  mpe_ir_opts_init(&o);
  o.solver = (mpe_ir_solver)7;
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, &o, &r), MPE_EINVAL);
  mpe_ir_opts_init(&o);
  o.history_cap = 3;
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, &o, &r), MPE_EINVAL);
  mpe_ir_opts_init(&o);
  o.solver = MPE_IR_GMRES_IR;
  o.gmres_tol = 0;
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, &o, &r), MPE_EINVAL);
  mpe_ir_opts_init(&o);
  o.max_iter = -1;
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, &o, &r), MPE_EINVAL);
  ck_assert(x[0] == 9 && x[1] == 9);
  double N[4] = { 4, NAN, 1, 3 };
  ck_assert_int_eq(mpe_ir_solve(2, N, 2, b, x, NULL, NULL), MPE_ERANGE);
  /* an inf anywhere in A (here its last entry), or a NaN with a bad argument too:
     the argument rules come first */
  {
    double *Ai = alloc_d(40 * 40);
    ck_assert_int_eq(mpe_mat_dominant(Ai, 40, 40, 1), MPE_OK);
    double bb[40], xx[40];
    for (int i = 0; i < 40; i++)
      bb[i] = 1.0, xx[i] = 9.0;
    Ai[40 * 40 - 1] = -INFINITY;
    ck_assert_int_eq(mpe_ir_solve(40, Ai, 40, bb, xx, NULL, NULL), MPE_ERANGE);
    for (int i = 0; i < 40; i++)
      ck_assert(xx[i] == 9.0);
    Ai[40 * 40 - 1] = NAN;
    ck_assert_int_eq(mpe_ir_solve(40, Ai, 39, bb, xx, NULL, NULL), MPE_EINVAL);
    free(Ai);
    /* finite entries whose row sum overflows: not MPE_ERANGE (||A||_inf = inf,
       too big for fp16: the binary64 fallback) */
    double Ao[4] = { 1e308, 0, 1e308, 1 }, bo[2] = { 1, 1 }, xo[2];
    mpe_ir_result ro;
    ck_assert_int_eq(mpe_ir_solve(2, Ao, 2, bo, xo, NULL, &ro), MPE_OK);
    ck_assert_int_eq(ro.status, MPE_IR_FALLBACK);
    ck_assert(xo[0] == -1.0 && xo[1] == 1.0);
  }
  double bi[2] = { INFINITY, 0 };
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, bi, x, NULL, NULL), MPE_ERANGE);
  ck_assert(x[0] == 9 && x[1] == 9);
  /* NULL options and result: the defaults */
  ck_assert_int_eq(mpe_ir_solve(2, A, 2, b, x, NULL, NULL), MPE_OK);
  ck_assert(fabs(x[0] - 1.0 / 11) < 1e-15 && fabs(x[1] - 7.0 / 11) < 1e-15);
  /* cuSOLVER: MPE_EUNSUP without CUDA; with CUDA the argument rules of
     mpe_ir_solve, MPE_EUNSUP for what cuSOLVER cannot do, then the device */
  if (!MPE_HAVE_CUDA) {
    ck_assert_int_eq(mpe_gpu_ir_solve(2, A, 2, b, x, NULL, NULL), MPE_EUNSUP);
  } else {
    int ndev = 0;
    int have_dev = mpe_gpu_device_count(&ndev) == MPE_OK && ndev > 0;
    x[0] = x[1] = 9;
    ck_assert_int_eq(mpe_gpu_ir_solve(0, A, 2, b, x, NULL, NULL), MPE_EINVAL);
    ck_assert_int_eq(mpe_gpu_ir_solve(2, A, 1, b, x, NULL, NULL), MPE_EINVAL);
    ck_assert_int_eq(mpe_gpu_ir_solve(2, A, 2, NULL, x, NULL, NULL), MPE_EINVAL);
    ck_assert_int_eq(mpe_gpu_ir_solve(2, N, 2, b, x, NULL, NULL), MPE_ERANGE);
    mpe_ir_opts co;
    mpe_ir_opts_init(&co);
    co.scale = 1;
    ck_assert_int_eq(mpe_gpu_ir_solve(2, A, 2, b, x, &co, NULL), MPE_EUNSUP);
    mpe_ir_opts_init(&co);
    co.model = mpe_tc_model_get("h100", MPE_FP16);
    ck_assert_int_eq(mpe_gpu_ir_solve(2, A, 2, b, x, &co, NULL), MPE_EUNSUP);
    ck_assert(x[0] == 9 && x[1] == 9);
    if (!have_dev) {
      ck_assert_int_eq(mpe_gpu_ir_solve(2, A, 2, b, x, NULL, NULL), MPE_EDEVICE);
      ck_assert(x[0] == 9 && x[1] == 9);
    } else {
      mpe_ir_result cr;
      ck_assert_int_eq(mpe_gpu_ir_solve(2, A, 2, b, x, NULL, &cr), MPE_OK);
      ck_assert(fabs(x[0] - 1.0 / 11) < 1e-15 && fabs(x[1] - 7.0 / 11) < 1e-15);
    }
  }
  /* the deprecated former name still answers, with the same result */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  ck_assert_int_eq(mpe_ir_solve_cusolver(0, A, 2, b, x, NULL, NULL), MPE_HAVE_CUDA ? MPE_EINVAL : MPE_EUNSUP);
#pragma GCC diagnostic pop
  mpe_ir_opts_init(NULL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("ir");
  TCase *tc = tcase_create("lu");
  tcase_add_test(tc, test_lu_rounds_gemm_inputs);
  tcase_add_test(tc, test_lu_errors);
  tcase_add_test(tc, test_lu_odd_blocks);
  tcase_add_test(tc, test_lu_exact_two_blocks);
  suite_add_tcase(s, tc);
  tc = tcase_create("refinement");
  tcase_add_test(tc, test_luir_fp16_dominant_1024);
  tcase_add_test(tc, test_luir_limits);
  tcase_add_loop_test(tc, test_gmresir_beyond_luir, 0, 2);
  tcase_add_test(tc, test_gmresir_short);
  tcase_add_test(tc, test_scaling_overflow);
  tcase_add_test(tc, test_factor_failure);
  tcase_add_test(tc, test_lu_models);
  tcase_add_test(tc, test_solve_errors);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
