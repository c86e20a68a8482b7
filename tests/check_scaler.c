/* Loss scalers: mpe_scaler_update against reference implementations written
   here, one per framework, each following that framework's own bookkeeping
   (PyTorch's growth tracker, Apex's unskipped counter, Megatron's hysteresis
   tracker, DeepSpeed's iteration numbers), over long random overflow
   sequences; and Transformer Engine delayed scaling against a reference that
   keeps every amax ever seen. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"

/* A bad argument: MPE_EINVAL and the out-pointer set to NULL (it starts
   non-NULL so that a constructor leaving it alone fails); the deprecated
   wrapper gives NULL for the same arguments. */
static void scaler_einval(const mpe_scaler_params *p)
{
  static char junk;
  mpe_scaler *s = (mpe_scaler *)(void *)&junk;
  ck_assert_int_eq(mpe_scaler_create(&s, p), MPE_EINVAL);
  ck_assert_ptr_null(s);
  ck_assert_ptr_null(mpe_scaler_alloc(p));
}

static void delayed_einval(const mpe_delayed_params *p)
{
  static char junk;
  mpe_delayed *d = (mpe_delayed *)(void *)&junk;
  ck_assert_int_eq(mpe_delayed_create(&d, p), MPE_EINVAL);
  ck_assert_ptr_null(d);
  ck_assert_ptr_null(mpe_delayed_alloc(p));
}

/* binary32 frameworks (PyTorch, Megatron, Keras) keep the scale in a float32
   tensor or variable: every new value is rounded to binary32 once */
static double f32(double v)
{
  volatile float f = (float)v;
  return f;
}

/* one reference state for all frameworks; each step function uses its own fields */
typedef struct {
  double scale;
  long tracker, hyst;             /* pytorch/apex/keras/megatron */
  long cur_iter, last_overflow;   /* deepspeed */
  double min, max, growth, backoff;
  long interval, hysteresis;
} ref;

/* _amp_update_scale_: float scale, double factors, (float)(scale * factor) */
static int ref_pytorch(ref *r, int inf)
{
  if (inf) {
    r->scale = f32(r->scale * r->backoff);
    r->tracker = 0;
    return 0;
  }
  if (++r->tracker == r->interval) {
    double v = f32(r->scale * r->growth);
    if (isfinite(v))
      r->scale = v;
    r->tracker = 0;
  }
  return 1;
}

static int ref_apex(ref *r, int inf)
{
  if (inf) {
    r->scale = fmax(r->min, r->scale / 2.0);
    r->tracker = 0;
    return 0;
  }
  if (++r->tracker == r->interval) {
    r->scale = fmin(r->max, r->scale * 2.0);
    r->tracker = 0;
  }
  return 1;
}

static int ref_megatron(ref *r, int inf)
{
  if (inf) {
    r->tracker = 0;
    r->hyst -= 1;
    if (r->hyst <= 0)     /* float32 tensors: scale * backoff, then torch.max with min */
      r->scale = fmax(f32(r->scale * f32(r->backoff)), f32(r->min));
    return 0;
  }
  if (++r->tracker == r->interval) {
    r->tracker = 0;
    r->hyst = r->hysteresis;
    /* Megatron multiplies without a check; mpemu (documented) never lets the
       scale become inf, which only a run of 96 growths from 2^32 could reach */
    double v = f32(r->scale * f32(r->growth));
    if (isfinite(v))
      r->scale = v;
  }
  return 1;
}

/* DeepSpeed: hysteresis as in its DynamicLossScaler; `delay` 1 counts clean
   steps as FP16_Optimizer does (stable_interval = iter - last_overflow - 1),
   delay 0 as the ZeRO scaler does. */
static int ref_deepspeed(ref *r, int inf, int delay)
{
  int apply = !inf;
  if (inf) {
    if (r->hysteresis == 1 || r->hyst == 1)
      r->scale = fmax(r->scale / 2.0, r->min);
    else
      r->hyst -= 1;
    r->last_overflow = r->cur_iter;
  } else {
    long stable = r->cur_iter - r->last_overflow - delay;
    if (stable > 0 && stable % r->interval == 0) {
      r->hyst = r->hysteresis;
      if (isfinite(r->scale * 2.0))      /* mpemu's documented cap, as for Megatron */
        r->scale *= 2.0;
    }
  }
  r->cur_iter++;
  return apply;
}

/* tf.keras: a float32 variable; tf.maximum(scale / 2, 1); _assign_if_finite(scale * 2) */
static int ref_keras(ref *r, int inf)
{
  if (inf) {
    r->scale = fmax(f32(r->scale / 2.0), 1.0);
    r->tracker = 0;
    return 0;
  }
  if (++r->tracker == r->interval) {
    double v = f32(r->scale * 2.0);
    if (isfinite(v))
      r->scale = v;
    r->tracker = 0;
  }
  return 1;
}

static const char *presets[] = { "pytorch", "apex", "megatron", "deepspeed", "deepspeed-zero", "keras" };

static int ref_step(int which, ref *r, int inf)
{
  switch (which) {
  case 0: return ref_pytorch(r, inf);
  case 1: return ref_apex(r, inf);
  case 2: return ref_megatron(r, inf);
  case 3: return ref_deepspeed(r, inf, 1);
  case 4: return ref_deepspeed(r, inf, 0);
  default: return ref_keras(r, inf);
  }
}

/* 4 regimes x 6 presets: overflow probabilities and intervals that make
   growth, backoff, the bounds and hysteresis all happen many times */
START_TEST(test_random_sequences)
{
  int which = _i % 6, regime = _i / 6;
  static const double prob[] = { 0.0004, 0.01, 0.3, 0.9 };
  static const int interval[] = { 0, 7, 3, 2 };     /* 0: the preset's own */
  mpe_scaler_params p;
  ck_assert_int_eq(mpe_scaler_params_preset(&p, presets[which]), 0);
  if (interval[regime])
    p.growth_interval = interval[regime];
  mpe_scaler *s;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  ck_assert_ptr_nonnull(s);
  ref r = { p.init_scale, 0, p.hysteresis, 0, -1, p.min_scale, p.max_scale, p.growth_factor, p.backoff_factor,
            p.growth_interval, p.hysteresis };
  uint64_t st = ts_seed() ^ (uint64_t)(_i * 7919);
  long n = 200000, skipped = 0;
  for (long i = 0; i < n; i++) {
    /* bursts: the probability changes every 5000 steps */
    double q = prob[regime] * (double)((i / 5000) % 3) / 1.5;
    int inf = (double)(ts_rand64(&st) >> 11) * 0x1p-53 < q;
    int a = mpe_scaler_update(s, inf), b = ref_step(which, &r, inf);
    ck_assert_msg(a == b && mpe_scaler_scale(s) == r.scale, "%s step %ld: apply %d/%d scale %g/%g",
                  presets[which], i, a, b, mpe_scaler_scale(s), r.scale);
    skipped += !b;
  }
  ck_assert_uint_eq(mpe_scaler_steps(s), (uint64_t)n);
  ck_assert_uint_eq(mpe_scaler_skipped(s), (uint64_t)skipped);
  mpe_scaler_free(s);
}
END_TEST

/* the documented differences, deterministically */
START_TEST(test_preset_differences)
{
  mpe_scaler_params p;
  mpe_scaler *s;
  /* first growth: after W clean steps (pytorch), after W+1 (deepspeed), after W (deepspeed-zero) */
  const char *names[] = { "pytorch", "deepspeed", "deepspeed-zero", "megatron", "keras", "apex" };
  const int first_growth[] = { 2000, 1001, 1000, 1000, 2000, 2000 };
  for (int j = 0; j < 6; j++) {
    mpe_scaler_params_preset(&p, names[j]);
    ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
    double s0 = mpe_scaler_scale(s);
    int step = 0;
    while (mpe_scaler_scale(s) == s0 && step < 5000) {
      mpe_scaler_update(s, 0);
      step++;
    }
    ck_assert_msg(step == first_growth[j], "%s grows after %d", names[j], step);
    ck_assert(mpe_scaler_scale(s) == 2 * s0);
    mpe_scaler_free(s);
  }
  /* hysteresis 2: the first overflow only spends credit; the second backs off */
  mpe_scaler_params_preset(&p, "megatron");
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  ck_assert(mpe_scaler_scale(s) == 0x1p32);
  ck_assert_int_eq(mpe_scaler_update(s, 1), 0);
  ck_assert(mpe_scaler_scale(s) == 0x1p32);
  ck_assert_int_eq(mpe_scaler_update(s, 1), 0);
  ck_assert(mpe_scaler_scale(s) == 0x1p31);
  ck_assert_int_eq(mpe_scaler_update(s, 0), 1);
  ck_assert_int_eq(mpe_scaler_update(s, 1), 0);      /* no credit left until a growth */
  ck_assert(mpe_scaler_scale(s) == 0x1p30);
  mpe_scaler_free(s);
  /* pytorch backs off at once, never grows to inf; apex stops at 2^24; keras stops at 1 going down */
  mpe_scaler_params_preset(&p, "pytorch");
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  mpe_scaler_update(s, 1);
  ck_assert(mpe_scaler_scale(s) == 32768);
  mpe_scaler_free(s);
  p.init_scale = p.max_scale = FLT_MAX;
  p.growth_interval = 1;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  mpe_scaler_update(s, 0);
  ck_assert(mpe_scaler_scale(s) == FLT_MAX);
  mpe_scaler_free(s);
  p.storage = MPE_SCALER_BINARY64;
  p.init_scale = p.max_scale = DBL_MAX;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  mpe_scaler_update(s, 0);
  ck_assert(mpe_scaler_scale(s) == DBL_MAX);
  mpe_scaler_free(s);
  mpe_scaler_params_preset(&p, "apex");
  p.growth_interval = 1;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  for (int i = 0; i < 20; i++)
    mpe_scaler_update(s, 0);
  ck_assert(mpe_scaler_scale(s) == 0x1p24);
  mpe_scaler_free(s);
  mpe_scaler_params_preset(&p, "keras");
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  for (int i = 0; i < 40; i++)
    mpe_scaler_update(s, 1);
  ck_assert(mpe_scaler_scale(s) == 1.0);
  mpe_scaler_free(s);
}
END_TEST

/* PyTorch's scale is a float32 tensor: with growth interval 2000 the scale
   reaches 2^127 after (127 - 16) * 2000 = 222,000 clean steps, the growth at
   224,000 would give inf in binary32 and is not applied, and nothing later
   moves it. A direct binary32 simulation checks every step. */
START_TEST(test_pytorch_binary32_growth)
{
  mpe_scaler_params p;
  ck_assert_int_eq(mpe_scaler_params_preset(&p, "pytorch"), 0);
  ck_assert_int_eq(p.storage, MPE_SCALER_BINARY32);
  mpe_scaler *s;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  ck_assert_ptr_nonnull(s);
  float want = 65536.0f;
  int tracker = 0;
  long reached = -1;
  for (long i = 1; i <= 240000; i++) {
    ck_assert_int_eq(mpe_scaler_update(s, 0), 1);
    if (++tracker == 2000) {
      float v = (float)((double)want * 2.0);
      if (isfinite(v))
        want = v;
      tracker = 0;
    }
    double got = mpe_scaler_scale(s);
    ck_assert_msg(got == (double)want && isfinite(got), "step %ld: %a vs %a", i, got, (double)want);
    if (reached < 0 && got == 0x1p127)
      reached = i;
  }
  ck_assert_int_eq(reached, 222000);
  ck_assert(mpe_scaler_scale(s) == 0x1p127);
  mpe_scaler_free(s);
  /* the binary64 machine goes on: 120 growths, 2^136 */
  p.storage = MPE_SCALER_BINARY64;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  for (long i = 0; i < 240000; i++)
    mpe_scaler_update(s, 0);
  ck_assert(mpe_scaler_scale(s) == 0x1p136);
  mpe_scaler_free(s);
}
END_TEST

/* 170 overflows in a row: PyTorch backs off in binary32 without a floor, so
   the scale goes 2^16 ... 2^-149 (overflow 165) and the 166th gives 2^-150,
   a tie that rounds to even: exactly 0, which then stays 0. */
START_TEST(test_pytorch_binary32_backoff)
{
  mpe_scaler_params p;
  ck_assert_int_eq(mpe_scaler_params_preset(&p, "pytorch"), 0);
  mpe_scaler *s;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  float want = 65536.0f;
  int zero_at = -1;
  for (int i = 1; i <= 170; i++) {
    ck_assert_int_eq(mpe_scaler_update(s, 1), 0);
    want = (float)((double)want * 0.5);
    ck_assert_msg(mpe_scaler_scale(s) == (double)want, "overflow %d: %a vs %a", i, mpe_scaler_scale(s), (double)want);
    if (zero_at < 0 && want == 0.0f)
      zero_at = i;
  }
  ck_assert_int_eq(zero_at, 166);
  ck_assert(mpe_scaler_scale(s) == 0.0 && !signbit(mpe_scaler_scale(s)));
  ck_assert_uint_eq(mpe_scaler_skipped(s), 170);
  /* a clean interval later, 0 * 2 = 0 is finite: PyTorch "grows" it to 0 */
  for (int i = 0; i < 2000; i++)
    mpe_scaler_update(s, 0);
  ck_assert(mpe_scaler_scale(s) == 0.0);
  mpe_scaler_free(s);
  /* binary64 storage: 2^-154, not 0 */
  p.storage = MPE_SCALER_BINARY64;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  for (int i = 0; i < 170; i++)
    mpe_scaler_update(s, 1);
  ck_assert(mpe_scaler_scale(s) == 0x1p-154);
  mpe_scaler_free(s);
  /* storage rounds the parameters: 0.1 is kept as binary32's 0.1f */
  mpe_scaler_params_preset(&p, "pytorch");
  p.init_scale = 0.1;
  ck_assert_int_eq(mpe_scaler_create(&s, &p), MPE_OK);
  ck_assert(mpe_scaler_scale(s) == (double)0.1f);
  mpe_scaler_free(s);
}
END_TEST

START_TEST(test_scaler_errors)
{
  mpe_scaler_params p;
  ck_assert_int_eq(mpe_scaler_params_preset(&p, "tensorflow1"), MPE_ENOTFOUND);
  ck_assert_int_eq(mpe_scaler_params_preset(NULL, "pytorch"), MPE_EINVAL);
  ck_assert_int_eq(mpe_scaler_params_preset(&p, NULL), MPE_EINVAL);
  scaler_einval(NULL);
  mpe_scaler_params_preset(&p, "pytorch");
  mpe_scaler_params q = p;
  q.growth_interval = 0;
  scaler_einval(&q);
  q = p; q.init_scale = -1;
  scaler_einval(&q);
  q = p; q.backoff_factor = 2;
  scaler_einval(&q);
  q = p; q.hysteresis = 0;
  scaler_einval(&q);
  q = p; q.max_scale = 1;
  scaler_einval(&q);
  q = p; q.init_scale = NAN;
  scaler_einval(&q);
  q = p; q.init_scale = 0x1p128;          /* inf in binary32 */
  scaler_einval(&q);
  q = p; q.init_scale = 0x1p-160;         /* 0 in binary32 */
  scaler_einval(&q);
  q = p; q.storage = 2;
  scaler_einval(&q);
  q = p; q.storage = MPE_SCALER_BINARY64; q.init_scale = 0x1p128;
  mpe_scaler *s;
  ck_assert_int_eq(mpe_scaler_create(&s, &q), MPE_OK);     /* fine in binary64 */
  ck_assert_ptr_nonnull(s);
  mpe_scaler_free(s);
  ck_assert_int_eq(mpe_scaler_create(NULL, &p), MPE_EINVAL);
  /* the deprecated constructor still makes the same scaler */
  ck_assert_ptr_nonnull(s = mpe_scaler_alloc(&q));
  ck_assert(mpe_scaler_scale(s) == 0x1p128);
  mpe_scaler_free(s);
  mpe_scaler_free(NULL);
  ck_assert_int_eq(mpe_scaler_update(NULL, 1), 0);
  ck_assert(isnan(mpe_scaler_scale(NULL)));
  mpe_scaler_free(NULL);
}
END_TEST

/* delayed scaling: reference keeps the whole amax sequence */
START_TEST(test_delayed)
{
  static const struct { const char *fmt; int len, margin, recent; } cfg[] = {
    { "e4m3", 0, 0, 0 }, { "e5m2", 16, 1, 0 }, { "e4m3", 1, 2, 0 }, { "e5m2", 7, 0, 1 } };
  int c = _i;
  mpe_delayed_params dp = { mpe_format_lookup(cfg[c].fmt), cfg[c].len, cfg[c].margin, cfg[c].recent };
  mpe_delayed *d;
  ck_assert_int_eq(mpe_delayed_create(&d, &dp), MPE_OK);
  ck_assert_ptr_nonnull(d);
  ck_assert(mpe_delayed_scale(d) == 1.0);
  int len = cfg[c].len ? cfg[c].len : 1024;
  enum { N = 5000 };
  float *hist = malloc(N * sizeof *hist);
  float want = 1.0f, fmax8 = (float)mpe_format_max(dp.format);
  uint64_t st = ts_seed() + (uint64_t)c;
  for (int i = 0; i < N; i++) {
    uint64_t r = ts_rand64(&st);
    float a;
    switch (r % 16) {
    case 0: a = 0.0f; break;
    case 1: a = INFINITY; break;
    case 2: a = 0x1p-149f; break;     /* the quotient overflows binary32 */
    default: a = ldexpf((float)((r >> 8) & 0xffff) / 65536.0f + 0.5f, (int)((r >> 30) % 40) - 20);
    }
    hist[i] = a;
    ck_assert_int_eq(mpe_delayed_update(d, a), 0);
    float ref = a;
    if (!cfg[c].recent)
      for (int j = i; j >= 0 && j > i - len; j--)
        if (hist[j] > ref)
          ref = hist[j];
    if (isfinite(ref) && ref > 0) {
      volatile float q = fmax8 / ref;
      float sc = q / ldexpf(1.0f, cfg[c].margin);
      want = isinf(sc) ? FLT_MAX : sc;
    }
    ck_assert_msg(mpe_delayed_scale(d) == (double)want, "step %d: %g vs %g", i, mpe_delayed_scale(d), (double)want);
  }
  free(hist);
  ck_assert_int_eq(mpe_delayed_update(d, -1.0), MPE_EINVAL);
  ck_assert_int_eq(mpe_delayed_update(d, NAN), MPE_EINVAL);
  ck_assert_int_eq(mpe_delayed_update(NULL, 1.0), MPE_EINVAL);
  mpe_delayed_free(d);
  mpe_delayed_params bad = { NULL, -1, 0, 0 };
  delayed_einval(&bad);
  bad.history_len = 4;
  bad.format = mpe_format_lookup("fp64");     /* max does not fit binary32 */
  delayed_einval(&bad);
  delayed_einval(NULL);
  bad.format = NULL;
  bad.margin = 127;
  delayed_einval(&bad);
  bad.margin = 0;
  ck_assert_int_eq(mpe_delayed_create(NULL, &bad), MPE_EINVAL);
  ck_assert_ptr_nonnull(d = mpe_delayed_alloc(&bad));   /* deprecated, still works */
  ck_assert(mpe_delayed_scale(d) == 1.0);
  mpe_delayed_free(d);
  mpe_delayed_free(NULL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("scaler");
  TCase *tc = tcase_create("dynamic");
  tcase_add_loop_test(tc, test_random_sequences, 0, 24);
  tcase_add_test(tc, test_preset_differences);
  tcase_add_test(tc, test_pytorch_binary32_growth);
  tcase_add_test(tc, test_pytorch_binary32_backoff);
  tcase_add_test(tc, test_scaler_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("delayed");
  tcase_add_loop_test(tc, test_delayed, 0, 4);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
