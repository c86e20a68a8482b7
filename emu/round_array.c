/* mpe_round_f32 / mpe_round_f64 / mpe_round_scalar: argument checks, the
   choice of kernel (AVX-512, AVX2 or the portable reference) and OpenMP
   across cores. Element i always uses the random word of index offset + i,
   so results do not depend on the thread count or the kernel. */
#include "config.h"
#include <float.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "isa.h"
#include "mpei_round_plan.h"
#include "mpei_fenv.h"

#define PAR_MIN   (1u << 16)   /* below this, one thread */
#define PAR_CHUNK (1u << 16)

static int opts_ok(const mpe_round_opts *o)
{
  return !o || ((unsigned)o->round < MPE_NROUND);
}

static mpe_round_opts opts_or_default(const mpe_round_opts *o)
{
  mpe_round_opts d = { MPE_RNE, 0, 0, 0, 0 };
  return o ? *o : d;
}

static int needs_random(mpe_round r) { return r == MPE_SR || r == MPE_SR_EQ; }

static unsigned ref_f32(float *y, const float *x, size_t n, const struct mpe_format *f,
                        const mpe_round_opts *o, uint64_t base)
{
  unsigned fl = 0;
  int rnd_needed = needs_random(o->round);
  for (size_t i = 0; i < n; i++) {
    uint32_t u = mpei_f2u(x[i]);
    int snan = (u & 0x7f800000u) == 0x7f800000u && (u & 0x3fffffu) && !(u & 0x400000u);
    uint32_t rnd = rnd_needed ? mpei_sr_word(o->seed, base + i) : 0;
    y[i] = (float)mpei_round_ref(x[i], snan, f, o->round, o->flush_subnormals, o->saturate, rnd, &fl);
  }
  return fl;
}

static unsigned ref_f64(double *y, const double *x, size_t n, const struct mpe_format *f,
                        const mpe_round_opts *o, uint64_t base)
{
  unsigned fl = 0;
  int rnd_needed = needs_random(o->round);
  for (size_t i = 0; i < n; i++) {
    uint64_t u = mpei_d2u(x[i]);
    int snan = isnan(x[i]) && !(u & 0x0008000000000000ull);
    uint32_t rnd = rnd_needed ? mpei_sr_word(o->seed, base + i) : 0;
    y[i] = mpei_round_ref(x[i], snan, f, o->round, o->flush_subnormals, o->saturate, rnd, &fl);
  }
  return fl;
}

int mpe_round_f32(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *opts)
{
  MPEI_FENV_GUARD();
  if (!f || !opts_ok(opts) || (n > 0 && (!y || !x)) || !mpei_count_ok(n, sizeof *x))
    return MPE_EINVAL;
  if (f->special == MPEI_SP_E8M0)   /* a scale, not a rounding target */
    return MPE_EUNSUP;
  if (f->p > 24)
    return MPE_EINVAL;
  if (n == 0)
    return MPE_OK;
  mpe_round_opts o = opts_or_default(opts);
  struct mpe_format g = mpei_format_clamp32(f);
  mpei_kernel32 kern = g.emin >= -126 ? mpei_isa()->round32 : NULL;   /* NULL: the reference */
  mpei_plan32 plan;
  if (kern)
    mpei_round_plan_make(&plan, &g, &o);
  unsigned fl = 0;
#ifdef _OPENMP
  if (n >= PAR_MIN && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    size_t nchunks = (n + PAR_CHUNK - 1) / PAR_CHUNK;
#pragma omp parallel
    {
      MPEI_FENV_GUARD();
#pragma omp for schedule(static) reduction(| : fl)
      for (size_t c = 0; c < nchunks; c++) {
        size_t i0 = c * PAR_CHUNK, len = n - i0 < PAR_CHUNK ? n - i0 : PAR_CHUNK;
        fl |= kern ? kern(y + i0, x + i0, len, &plan, o.offset + i0)
                   : ref_f32(y + i0, x + i0, len, &g, &o, o.offset + i0);
      }
    }
    mpei_flags |= fl;
    return MPE_OK;
  }
#endif
  fl = kern ? kern(y, x, n, &plan, o.offset) : ref_f32(y, x, n, &g, &o, o.offset);
  mpei_flags |= fl;
  return MPE_OK;
}

int mpe_round_f64(double *y, const double *x, size_t n, const mpe_format *f, const mpe_round_opts *opts)
{
  MPEI_FENV_GUARD();
  if (!f || !opts_ok(opts) || (n > 0 && (!y || !x)) || !mpei_count_ok(n, sizeof *x))
    return MPE_EINVAL;
  if (f->special == MPEI_SP_E8M0)
    return MPE_EUNSUP;
  if (n == 0)
    return MPE_OK;
  mpe_round_opts o = opts_or_default(opts);
  unsigned fl = 0;
#ifdef _OPENMP
  if (n >= PAR_MIN / 4 && omp_get_max_threads() > 1 && !omp_in_parallel()) {
    size_t chunk = PAR_CHUNK / 4, nchunks = (n + chunk - 1) / chunk;
#pragma omp parallel
    {
      MPEI_FENV_GUARD();
#pragma omp for schedule(static) reduction(| : fl)
      for (size_t c = 0; c < nchunks; c++) {
        size_t i0 = c * chunk, len = n - i0 < chunk ? n - i0 : chunk;
        fl |= ref_f64(y + i0, x + i0, len, f, &o, o.offset + i0);
      }
    }
    mpei_flags |= fl;
    return MPE_OK;
  }
#endif
  fl = ref_f64(y, x, n, f, &o, o.offset);
  mpei_flags |= fl;
  return MPE_OK;
}

double mpe_round_scalar(double x, const mpe_format *f, const mpe_round_opts *opts)
{
  MPEI_FENV_GUARD();
  if (!f || !opts_ok(opts))
    return NAN;
  double y;
  if (mpe_round_f64(&y, &x, 1, f, opts))
    return NAN;   /* E8M0: not a rounding target */
  return y;
}
