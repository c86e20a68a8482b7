/* Tensor-file readers: every reader delivers the exact values of the
   hand-made files in tests/data (written by tests/data/make_data.py with
   Python's standard library only), and the range counts of those values
   equal counts derived by hand (see the tables below); hostile files give
   MPE_EFORMAT/MPE_EUNSUP and a one-line message; the fuzz corpus and crash
   inputs in tests/fuzz are replayed through every reader. */
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testsupport.h"

static char path_buf[4096];
static const char *data(const char *rel)
{
  const char *src = getenv("MPE_SRCDIR");
  snprintf(path_buf, sizeof path_buf, "%s/tests/data/%s", src ? src : MPE_SRCDIR, rel);
  return path_buf;
}

/* the boundary set B of make_data.py */
static const float B[20] = {
  0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f - 0x1p-8f, 65520.0f, -65520.0f,
  0x1p-25f, 0x1p-25f + 0x1p-48f, 0x1p-24f, 0x1p-14f - 0x1p-25f, 0x1p-14f,
  464.0f, 464.0f + 0x1p-15f, 448.0f, 61440.0f, 61440.0f - 0x1p-8f,
  INFINITY, NAN, -1e-30f };
static const float H[12] = { 0, 1, 0x1p-24f, 0x1p-14f, 448, 464, 480, 57344, 61440, 65504, -INFINITY, NAN };

/* Counts derived by hand for B (docs/DESIGN.md §4 thresholds: fp16 overflows from 65520
   and loses |x| <= 2^-25; e4m3 overflows above 464 and loses |x| <= 2^-10; e5m2
   overflows from 61440 and loses |x| <= 2^-17; 2^-14 - 2^-25 ties up to 2^-14).
   k: the recommended scale 2^k; us/ufs: underflow at that scale, subnormals kept/flushed. */
struct want { const char *fmt; uint64_t u, s, o; int k; uint64_t us, ufs; };
static const struct want WB[] = {
  { "fp16", 2, 2, 2, -1, 4, 6 },
  { "bf16", 0, 0, 0, 111, 0, 0 },
  { "tf32", 0, 0, 0, 111, 0, 0 },
  { "fp32", 0, 0, 0, 112, 0, 0 },
  { "fp64", 0, 0, 0, 127, 0, 0 },   /* 2^1008 capped at 2^127: a loss scale is binary32 */
  { "e4m3", 6, 0, 7, -8, 6, 7 },
  { "e5m2", 4, 0, 5, -1, 4, 6 },
};
static const struct want WH[] = {
  { "fp16", 0, 1, 0, 0, 0, 1 },
  { "bf16", 0, 0, 0, 111, 0, 0 },
  { "e4m3", 2, 0, 4, -8, 2, 3 },
  { "e5m2", 1, 0, 2, -1, 1, 2 },
};

/* 16-bit fixed point on B, by hand: q16.0 loses |x| <= 1/2 and saturates from 32767.5
   (and below -32768.5); q16.8: 2^-9 and 127.998046875; q16.15: 2^-16, 0.9999847 (1.0
   saturates, -1.0 would not). All three: S*65520 <= 32767*2^-F gives S = 2^(-1-F), where
   |x| <= 1 rounds to 0 (the five tiny values, -1e-30 and 1.0, whose tie goes to 0). fx16
   over the 20 values (block max 65520, non-finite entering as 0): |x| <= 0.9998 -> 0,
   i.e. the six tiny ones; in blocks of 2 only 2^-25 (next to -65520) is lost. */
struct wfix { mpe_range_target t; uint64_t u, o; int k; uint64_t us; };
static const struct wfix WF[] = {
  { { MPE_TARGET_Q16, NULL, 0, 0 }, 6, 6, -1, 7 },
  { { MPE_TARGET_Q16, NULL, 8, 0 }, 6, 9, -9, 7 },
  { { MPE_TARGET_Q16, NULL, 15, 0 }, 4, 10, -16, 7 },
  { { MPE_TARGET_FX16, NULL, 0, 20 }, 6, 0, 0, 6 },
  { { MPE_TARGET_FX16, NULL, 0, 2 }, 1, 0, 0, 1 },
};
#define NWF (sizeof WF / sizeof WF[0])

static mpe_range *range_fixed(void)
{
  mpe_range_target t[NWF];
  for (size_t k = 0; k < NWF; k++)
    t[k] = WF[k].t;
  mpe_range *r;
  ck_assert_int_eq(mpe_range_create_targets(&r, t, NWF, NULL), MPE_OK);
  return r;
}

static void check_fixed(const mpe_range *r)
{
  for (size_t k = 0; k < NWF; k++) {
    mpe_range_stats st;
    ck_assert_int_eq(mpe_range_stats_get(r, k, &st), 0);
    int fx = WF[k].t.kind == MPE_TARGET_FX16;
    ck_assert_msg(st.underflow == WF[k].u && st.overflow == WF[k].o && st.subnormal == 0 &&
                  st.has_scale == !fx && (fx || st.scale_log2 == WF[k].k) && st.underflow_at_scale == WF[k].us &&
                  st.underflow_at_scale_flush == WF[k].us,
                  "fixed target %zu: got u=%llu o=%llu k=%d us=%llu", k, (unsigned long long)st.underflow,
                  (unsigned long long)st.overflow, st.scale_log2, (unsigned long long)st.underflow_at_scale);
  }
}

static void check_counts(mpe_range *r, const struct want *w, size_t nw, uint64_t count, uint64_t zeros,
                         uint64_t nan, uint64_t inf, double maxabs)
{
  mpe_range_summary s;
  ck_assert_int_eq(mpe_range_summary_get(r, &s), 0);
  ck_assert_uint_eq(s.count, count);
  ck_assert_uint_eq(s.zeros, zeros);
  ck_assert_uint_eq(s.nan, nan);
  ck_assert_uint_eq(s.inf, inf);
  ck_assert(s.max_abs == maxabs);
  for (size_t k = 0; k < nw; k++) {
    mpe_range_stats st;
    ck_assert_int_eq(mpe_range_stats_get(r, k, &st), 0);
    ck_assert_msg(st.underflow == w[k].u && st.subnormal == w[k].s && st.overflow == w[k].o &&
                  st.has_scale && st.scale_log2 == w[k].k && st.underflow_at_scale == w[k].us &&
                  st.underflow_at_scale_flush == w[k].ufs && st.underflow_flush == w[k].u + w[k].s &&
                  st.scale_capped == (w[k].k == 127),
                  "%s: got u=%llu s=%llu o=%llu k=%d us=%llu ufs=%llu", w[k].fmt,
                  (unsigned long long)st.underflow, (unsigned long long)st.subnormal,
                  (unsigned long long)st.overflow, st.scale_log2, (unsigned long long)st.underflow_at_scale,
                  (unsigned long long)st.underflow_at_scale_flush);
  }
}

static mpe_range *range_for(const struct want *w, size_t nw)
{
  const mpe_format *f[8];
  for (size_t k = 0; k < nw; k++)
    ck_assert_ptr_nonnull(f[k] = mpe_format_lookup(w[k].fmt));
  mpe_range *r;
  ck_assert_int_eq(mpe_range_create(&r, f, nw, NULL), MPE_OK);
  return r;
}

/* read tensor i of f in pieces of `step` values into a range accumulator and
   into out (as double); returns the count */
static size_t read_all(mpe_io *f, size_t i, size_t step, mpe_range *r, double *out, size_t cap)
{
  mpe_io_tensor t;
  ck_assert_int_eq(mpe_io_info(f, i, &t), 0);
  ck_assert_int_eq(mpe_io_select(f, i), 0);
  size_t total = 0, n;
  double buf[64];
  ck_assert(step <= 64);
  for (;;) {
    int rc = mpe_io_read(f, buf, step, &n);
    ck_assert_msg(rc == 0, "read: %s", mpe_io_message(f));
    if (n == 0)
      break;
    for (size_t k = 0; k < n; k++) {
      double v = t.value_type == MPE_FP64 ? buf[k] : (double)((float *)buf)[k];
      if (total + k < cap)
        out[total + k] = v;
    }
    if (r) {
      if (t.value_type == MPE_FP64)
        mpe_range_add_f64(r, buf, n);
      else
        mpe_range_add_f32(r, (float *)buf, n);
    }
    total += n;
  }
  ck_assert_uint_eq(total, t.count);
  return total;
}

static void expect_values(const double *got, const float *want, size_t n)
{
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(ts_same_f64(got[i], (double)want[i]), "value %zu: %a != %a", i, got[i], (double)want[i]);
}

static mpe_io *open_ok(const char *rel, const mpe_io_opts *o)
{
  mpe_io *f = NULL;
  char msg[256];
  int rc = mpe_io_open(&f, data(rel), o, msg, sizeof msg);
  ck_assert_msg(rc == 0, "%s: %s", rel, msg);
  return f;
}

/* mpe_io_seek: from every value position, forward and backward, the values read
   after it are the tail of a sequential read; files that seek (npy, safetensors,
   raw) and those that read forward (npz, deflated and stored, text, pt) */
START_TEST(test_seek)
{
  static const struct { const char *file; int raw; } files[] = {
    { "boundary.npy", 0 }, { "boundary_be_v2.npy", 0 }, { "model.safetensors", 0 }, { "boundary.bin", 1 },
    { "grads.npz", 0 }, { "stored.npz", 0 }, { "boundary.csv", 0 }, { "pt/state.pt", 0 } };
  for (size_t fi = 0; fi < sizeof files / sizeof files[0]; fi++) {
    mpe_io_opts o;
    memset(&o, 0, sizeof o);
    o.has_dtype = files[fi].raw;
    o.dtype = MPE_FP32;
    o.chunk_bytes = 4096;
    mpe_io *f = open_ok(files[fi].file, &o);
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      enum { CAP = 4096 };
      static double all[CAP], tail[CAP];
      size_t cnt = read_all(f, i, 7, NULL, all, CAP);
      ck_assert(cnt <= CAP);
      /* positions up, then down (each one a restart for the readers that go forward only) */
      for (int dir = 0; dir < 2; dir++)
        for (size_t k0 = 0; k0 <= cnt; k0 += 1 + cnt / 5) {
          size_t k = dir ? cnt - k0 : k0;
          ck_assert_msg(mpe_io_seek(f, k) == 0, "%s #%zu: seek %zu: %s", files[fi].file, i, k, mpe_io_message(f));
          size_t got = 0, n;
          double buf[64];
          mpe_io_tensor t;
          mpe_io_info(f, i, &t);
          while (mpe_io_read(f, buf, 5, &n) == 0 && n) {
            for (size_t j = 0; j < n; j++)
              tail[got + j] = t.value_type == MPE_FP64 ? buf[j] : (double)((float *)buf)[j];
            got += n;
          }
          ck_assert_msg(got == cnt - k, "%s #%zu: seek %zu: %zu values after it, not %zu", files[fi].file, i, k,
                        got, cnt - k);
          for (size_t j = 0; j < got; j++)
            ck_assert_msg(ts_same_f64(tail[j], all[k + j]), "%s #%zu: seek %zu: value %zu", files[fi].file, i, k, j);
        }
      ck_assert_int_eq(mpe_io_seek(f, cnt + 1), MPE_ERANGE);
      ck_assert_ptr_nonnull(strstr(mpe_io_message(f), "which holds"));
    }
    mpe_io_close(f);
  }
  mpe_io *f = open_ok("boundary.npy", NULL);
  ck_assert_int_eq(mpe_io_seek(f, 0), MPE_EINVAL);   /* nothing selected */
  ck_assert_int_eq(mpe_io_seek(NULL, 0), MPE_EINVAL);
  mpe_io_close(f);
}
END_TEST

/* every reader holding the set B: same values, same hand counts */
static const struct { const char *file; mpe_io_kind kind; const char *tensor; int raw; } Bfiles[] = {
  { "boundary.npy", MPE_IO_NPY, "boundary", 0 },
  { "boundary_be_v2.npy", MPE_IO_NPY, "boundary_be_v2", 0 },
  { "boundary_f8_v3_fortran.npy", MPE_IO_NPY, "boundary_f8_v3_fortran", 0 },
  { "boundary.bin", MPE_IO_RAW, "boundary", 1 },
  { "boundary.csv", MPE_IO_TEXT, "boundary", 0 },
  { "grads.npz", MPE_IO_NPZ, "boundary", 0 },
  { "stored.npz", MPE_IO_NPZ, "boundary", 0 },
  { "zip64.npz", MPE_IO_NPZ, "boundary", 0 },
  { "model.safetensors", MPE_IO_SAFETENSORS, "b.f32", 0 },
  { "model.safetensors", MPE_IO_SAFETENSORS, "f.f64", 0 },
};

START_TEST(test_reader_boundary)
{
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  if (Bfiles[_i].raw) {
    o.has_dtype = 1;
    o.dtype = MPE_FP32;
  }
  mpe_io *f = open_ok(Bfiles[_i].file, &o);
  ck_assert_int_eq(mpe_io_kind_of(f), Bfiles[_i].kind);
  size_t i;
  ck_assert_int_eq(mpe_io_find(f, Bfiles[_i].tensor, &i), 0);
  mpe_range *r = range_for(WB, 7), *rf = range_fixed();
  double v[20];
  /* odd piece sizes cross every chunk boundary */
  ck_assert_uint_eq(read_all(f, i, 3 + (size_t)_i % 5, r, v, 20), 20);
  expect_values(v, B, 20);
  check_counts(r, WB, 7, 20, 2, 1, 1, 65520.0);
  ck_assert_uint_eq(read_all(f, i, 2 + (size_t)_i % 7, rf, v, 20), 20);
  check_fixed(rf);
  mpe_range_free(rf);
  /* reading again gives the same */
  ck_assert_uint_eq(read_all(f, i, 64, NULL, v, 20), 20);
  expect_values(v, B, 20);
  mpe_range_free(r);
  mpe_io_close(f);
}
END_TEST

START_TEST(test_reader_shapes)
{
  mpe_io *f = open_ok("boundary_be_v2.npy", NULL);
  mpe_io_tensor t;
  ck_assert_int_eq(mpe_io_info(f, 0, &t), 0);
  ck_assert_int_eq(t.ndim, 2);
  ck_assert_uint_eq(t.shape[0], 4);
  ck_assert_uint_eq(t.shape[1], 5);
  ck_assert_int_eq(t.big_endian, 1);
  ck_assert_int_eq(t.dtype, MPE_FP32);
  mpe_io_close(f);
  f = open_ok("boundary_f8_v3_fortran.npy", NULL);
  mpe_io_info(f, 0, &t);
  ck_assert_int_eq(t.fortran_order, 1);
  ck_assert_int_eq(t.dtype, MPE_FP64);
  ck_assert_int_eq(t.value_type, MPE_FP64);
  mpe_io_close(f);
  f = open_ok("boundary.csv", NULL);   /* 4 lines of 5 values */
  mpe_io_info(f, 0, &t);
  ck_assert_int_eq(t.ndim, 2);
  ck_assert_uint_eq(t.shape[0], 4);
  ck_assert_uint_eq(t.shape[1], 5);
  mpe_io_close(f);
  /* a UTF-8 byte-order mark before the first number (spreadsheets write one) */
  f = open_ok("bom.csv", NULL);
  mpe_io_info(f, 0, &t);
  ck_assert_int_eq(t.ndim, 2);
  ck_assert_uint_eq(t.count, 4);
  ck_assert_int_eq(mpe_io_select(f, 0), MPE_OK);
  double bv[4];
  size_t got = 0;
  ck_assert_int_eq(mpe_io_read(f, bv, 4, &got), MPE_OK);
  ck_assert_uint_eq(got, 4);
  ck_assert(bv[0] == 1.5 && bv[1] == 2 && bv[2] == 3 && bv[3] == -4e-3);
  mpe_io_close(f);
  /* raw with a shape: right and wrong */
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.has_dtype = 1;
  o.dtype = MPE_FP32;
  o.ndim = 2;
  o.shape[0] = 4;
  o.shape[1] = 5;
  f = open_ok("boundary.bin", &o);
  mpe_io_info(f, 0, &t);
  ck_assert_uint_eq(t.count, 20);
  mpe_io_close(f);
  o.shape[1] = 6;
  char msg[256];
  ck_assert_int_eq(mpe_io_open(&f, data("boundary.bin"), &o, msg, sizeof msg), MPE_EFORMAT);
  ck_assert_ptr_null(f);
  ck_assert_ptr_nonnull(strstr(msg, "needs 96 bytes"));
  /* raw as fp16: 40 values */
  o.ndim = 0;
  o.dtype = MPE_FP16;
  f = open_ok("boundary.bin", &o);
  mpe_io_info(f, 0, &t);
  ck_assert_uint_eq(t.count, 40);
  mpe_io_close(f);
}
END_TEST

START_TEST(test_reader_half)
{
  static const char *files[] = { "half.npy", "model.safetensors", "grads.npz" };
  static const char *names[] = { "half", "a.f16", "half" };
  for (int j = 0; j < 3; j++) {
    mpe_io *f = open_ok(files[j], NULL);
    size_t i;
    ck_assert_int_eq(mpe_io_find(f, names[j], &i), 0);
    mpe_io_tensor t;
    mpe_io_info(f, i, &t);
    ck_assert_int_eq(t.dtype, MPE_FP16);
    mpe_range *r = range_for(WH, 4);
    double v[12];
    read_all(f, i, 5, r, v, 12);
    expect_values(v, H, 12);
    check_counts(r, WH, 4, 12, 1, 1, 1, 65504.0);
    mpe_range_free(r);
    mpe_io_close(f);
  }
}
END_TEST

/* bf16 and fp8 data: from .npy |V2/|V1 with a dtype, and from safetensors */
START_TEST(test_reader_narrow)
{
  static const struct want wbf[] = { { "fp16", 2, 0, 2, 0, 0, 0 }, { "bf16", 0, 1, 0, 0, 0, 0 } };
  static const float bfv[6] = { 1.0f, 0x1p-133f, 0x1p-126f, 0x1.fep+127f, 65536.0f, 65280.0f };
  static const float e4v[6] = { 0, 0x1p-9f, 0x1p-6f, 448, NAN, -0.0f };
  static const float e5v[6] = { 0, 0x1p-16f, 0x1p-14f, 57344, INFINITY, NAN };
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.has_dtype = 1;
  o.dtype = MPE_BF16;
  for (int j = 0; j < 2; j++) {
    mpe_io *f = open_ok(j ? "model.safetensors" : "bf16.npy", &o);
    size_t i = 0;
    if (j)
      ck_assert_int_eq(mpe_io_find(f, "c.bf16", &i), 0);
    mpe_range *r = range_for(wbf, 2);
    double v[6];
    read_all(f, i, 4, r, v, 6);
    expect_values(v, bfv, 6);
    mpe_range_stats st;
    mpe_range_stats_get(r, 0, &st);
    ck_assert_uint_eq(st.underflow, 2);
    ck_assert_uint_eq(st.subnormal, 0);
    ck_assert_uint_eq(st.overflow, 2);
    mpe_range_stats_get(r, 1, &st);
    ck_assert_uint_eq(st.underflow, 0);
    ck_assert_uint_eq(st.subnormal, 1);
    ck_assert_uint_eq(st.overflow, 0);
    mpe_range_free(r);
    mpe_io_close(f);
  }
  static const struct want w8[] = { { "fp16", 0, 0, 0, 0, 0, 0 }, { "e4m3", 0, 1, 0, 0, 0, 0 }, { "e5m2", 0, 0, 0, 0, 0, 0 } };
  o.dtype = MPE_E4M3;
  for (int j = 0; j < 2; j++) {
    mpe_io *f = open_ok(j ? "model.safetensors" : "e4m3.npy", &o);
    size_t i = 0;
    if (j)
      ck_assert_int_eq(mpe_io_find(f, "d.e4m3", &i), 0);
    mpe_range *r = range_for(w8, 3);
    double v[6];
    read_all(f, i, 6, r, v, 6);
    expect_values(v, e4v, 6);
    for (size_t k = 0; k < 3; k++) {
      mpe_range_stats st;
      mpe_range_stats_get(r, k, &st);
      ck_assert_uint_eq(st.underflow, w8[k].u);
      ck_assert_uint_eq(st.subnormal, w8[k].s);
      ck_assert_uint_eq(st.overflow, w8[k].o);
    }
    mpe_range_free(r);
    mpe_io_close(f);
  }
  /* e5m2 from safetensors: fp16 sees 2^-16 as subnormal; e4m3 loses 2^-16 and 2^-14 and overflows 57344 */
  static const struct want w5[] = { { "fp16", 0, 1, 0, 0, 0, 0 }, { "e4m3", 2, 0, 1, 0, 0, 0 }, { "e5m2", 0, 1, 0, 0, 0, 0 } };
  mpe_io *f = open_ok("model.safetensors", NULL);
  size_t i;
  ck_assert_int_eq(mpe_io_find(f, "e.e5m2", &i), 0);
  mpe_range *r = range_for(w5, 3);
  double v[6];
  read_all(f, i, 2, r, v, 6);
  expect_values(v, e5v, 6);
  for (size_t k = 0; k < 3; k++) {
    mpe_range_stats st;
    mpe_range_stats_get(r, k, &st);
    ck_assert_uint_eq(st.underflow, w5[k].u);
    ck_assert_uint_eq(st.subnormal, w5[k].s);
    ck_assert_uint_eq(st.overflow, w5[k].o);
  }
  mpe_range_free(r);
  /* the I64 tensor is validated and skipped; order is by data offset */
  ck_assert_uint_eq(mpe_io_count(f), 6);
  ck_assert_uint_eq(mpe_io_skipped(f), 1);
  mpe_io_tensor t;
  mpe_io_info(f, 0, &t);
  ck_assert_str_eq(t.name, "b.f32");
  ck_assert_int_eq(mpe_io_find(f, "g.step", &i), MPE_ENOTFOUND);
  mpe_io_close(f);
}
END_TEST

static const struct { const char *file; int rc; const char *says; } hostile[] = {
  { "hostile/truncated.npy", MPE_EFORMAT, "needs 80 bytes" },
  { "hostile/header_only.npy", MPE_EFORMAT, "truncated" },
  { "hostile/header_past_eof.npy", MPE_EFORMAT, "past the end" },
  { "hostile/shape_mismatch.npy", MPE_EFORMAT, "needs 84 bytes" },
  { "hostile/huge_shape.npy", MPE_EFORMAT, "too large" },
  { "hostile/bad_dict.npy", MPE_EFORMAT, "dictionary" },
  { "hostile/st_overlap.safetensors", MPE_EFORMAT, "overlap" },
  { "hostile/st_out_of_range.safetensors", MPE_EFORMAT, "outside" },
  { "hostile/st_size_mismatch.safetensors", MPE_EFORMAT, "needs 20" },
  { "hostile/st_huge_shape.safetensors", MPE_EFORMAT, "too large" },
  { "hostile/st_header_past_eof.safetensors", MPE_EFORMAT, "past the end" },
  { "hostile/st_header_huge.safetensors", MPE_EFORMAT, "past the end" },
  { "hostile/st_not_json.safetensors", MPE_EFORMAT, "JSON" },
  { "hostile/st_nonutf8.safetensors", MPE_EFORMAT, "JSON" },
  { "hostile/st_negative.safetensors", MPE_EFORMAT, "bad shape" },
  { "hostile/st_short.safetensors", MPE_EFORMAT, "too short" },
  { "hostile/zip_bomb.npz", MPE_EFORMAT, "zip bomb" },
  { "hostile/zip_nonutf8.npz", MPE_EFORMAT, "UTF-8" },
  { "hostile/zip_not_npy.npz", MPE_EFORMAT, "not a .npy" },
  { "hostile/zip_truncated.npz", MPE_EFORMAT, "zip" },
  { "hostile/bad_token.csv", MPE_EFORMAT, "line 2" },
  { "hostile/msvc_inf.csv", MPE_EFORMAT, "'1.#INF' is not a number" },   /* was read as 1.0 */
  { "hostile/binary.csv", MPE_EFORMAT, "control" },
  { "hostile/empty_field.csv", MPE_EFORMAT, "line 2: an empty field" },        /* was read as 3, 4 */
  { "hostile/trailing_comma.csv", MPE_EFORMAT, "line 1: an empty field" },
  { "hostile/leading_semicolon.csv", MPE_EFORMAT, "line 1: an empty field" },
  { "hostile/odd_size.bin", MPE_EFORMAT, "multiple of 4" },
  { "no/such/file.npy", MPE_EIO, "cannot open" },
};

START_TEST(test_hostile)
{
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  if (strstr(hostile[_i].file, ".bin")) {
    o.has_dtype = 1;
    o.dtype = MPE_FP32;
  }
  mpe_io *f = (mpe_io *)1;
  char msg[256];
  int rc = mpe_io_open(&f, data(hostile[_i].file), &o, msg, sizeof msg);
  ck_assert_msg(rc == hostile[_i].rc, "%s: rc %d (%s)", hostile[_i].file, rc, msg);
  ck_assert_ptr_null(f);
  ck_assert_msg(strstr(msg, hostile[_i].says) != NULL, "%s: message '%s'", hostile[_i].file, msg);
  ck_assert_ptr_null(strchr(msg, '\n'));
}
END_TEST

/* safetensors files without a float tensor open with nothing to read: the
   empty tensor list was once handed to qsort as NULL (UB, fatal under UBSan) */
START_TEST(test_st_no_float)
{
  static const struct { const char *file; size_t skipped; } cases[] = {
    { "hostile/st_empty.safetensors", 0 },
    { "hostile/st_metadata_only.safetensors", 0 },
    { "hostile/st_i32_only.safetensors", 1 },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mpe_io *f = open_ok(cases[k].file, NULL);
    ck_assert_uint_eq(mpe_io_count(f), 0);
    ck_assert_uint_eq(mpe_io_skipped(f), cases[k].skipped);
    size_t i;
    ck_assert_int_eq(mpe_io_find(f, "ids", &i), MPE_ENOTFOUND);
    mpe_io_close(f);
  }
}
END_TEST

/* members with no floating-point data, in every kind of file: not listed, but
   named with their dtype and why (issue 15); a .npy of such data opens empty */
START_TEST(test_skipped_named)
{
  static const struct { const char *file, *names[4], *dtypes[4], *why[4]; size_t tensors; } cases[] = {
    { "hostile/bad_descr.npy", { "bad_descr" }, { "<c16" }, { "complex array" }, 0 },
    { "hostile/v1_no_dtype.npy", { "v1_no_dtype" }, { "|V2" }, { "untyped 2-byte values: give a dtype (bf16 or fp16)" }, 0 },
    { "mixed.npz", { "step", "mask", "act", "q" }, { "<i8", "|b1", "|V2", "|u1" },
      { "integer array", "boolean array", "untyped 2-byte values: give a dtype (bf16 or fp16)",
        "integer array (bit patterns? give a dtype for it)" }, 1 },
    { "mixed.safetensors", { "act", "step", "mask" }, { "U16", "I64", "BOOL" },
      { "integer tensor", "integer tensor", "boolean tensor" }, 2 },
    { "model.safetensors", { "g.step" }, { "I64" }, { "integer tensor" }, 6 },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mpe_io *f = open_ok(cases[k].file, NULL);
    size_t ns = 0;
    while (ns < 4 && cases[k].names[ns])
      ns++;
    ck_assert_uint_eq(mpe_io_count(f), cases[k].tensors);
    ck_assert_uint_eq(mpe_io_skipped(f), ns);
    for (size_t i = 0; i < ns; i++) {
      const char *n, *d, *w;
      ck_assert_int_eq(mpe_io_skipped_info(f, i, &n, &d, &w), 0);
      ck_assert_str_eq(n, cases[k].names[i]);
      ck_assert_str_eq(d, cases[k].dtypes[i]);
      ck_assert_str_eq(w, cases[k].why[i]);
    }
    const char *n, *d, *w;
    ck_assert_int_eq(mpe_io_skipped_info(f, ns, &n, &d, &w), MPE_EINVAL);
    mpe_io_close(f);
  }
}
END_TEST

/* per-member element types: globs and plain names, reinterpreting integer bit
   patterns and one float type as another of the same width, first rule wins,
   a plain name of the wrong width is an error, a glob of the wrong width passes by */
START_TEST(test_dtype_rules)
{
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  mpe_io_dtype_rule rules[] = { { "a*", MPE_BF16 }, { "[qw]", MPE_E4M3 } };
  o.rules = rules;
  o.nrules = 2;
  /* npz: act (|V2) as bf16 by the glob a*, q (u1) as e4m3 by [qw]; w (f4) untouched (4 bytes) */
  mpe_io *f = open_ok("mixed.npz", &o);
  ck_assert_uint_eq(mpe_io_count(f), 3);
  ck_assert_uint_eq(mpe_io_skipped(f), 2);   /* step and mask: no rule names them */
  size_t i;
  mpe_io_tensor t;
  ck_assert_int_eq(mpe_io_find(f, "act", &i), 0);
  mpe_io_info(f, i, &t);
  ck_assert_int_eq(t.dtype, MPE_BF16);
  double v[6];
  read_all(f, i, 4, NULL, v, 6);
  for (int k = 0; k < 6; k++)
    ck_assert(ts_same_f64(v[k], (double)mpe_bf16_to_fp32((uint16_t)(k == 0 ? 0x3F80 : k == 1 ? 0x0001 : k == 2 ? 0x0080 :
                                                                       k == 3 ? 0x7F7F : k == 4 ? 0x4780 : 0x477F))));
  ck_assert_int_eq(mpe_io_find(f, "q", &i), 0);
  mpe_io_info(f, i, &t);
  ck_assert_int_eq(t.dtype, MPE_E4M3);
  ck_assert_int_eq(mpe_io_find(f, "w", &i), 0);
  mpe_io_info(f, i, &t);
  ck_assert_int_eq(t.dtype, MPE_FP32);
  mpe_io_close(f);
  /* safetensors: U16 act as bf16; F16 h reinterpreted as bf16 by a plain name */
  mpe_io_dtype_rule st_rules[] = { { "h", MPE_BF16 }, { "a*", MPE_BF16 } };
  o.rules = st_rules;
  o.nrules = 2;
  f = open_ok("mixed.safetensors", &o);
  ck_assert_uint_eq(mpe_io_count(f), 3);
  ck_assert_uint_eq(mpe_io_skipped(f), 2);
  ck_assert_int_eq(mpe_io_find(f, "h", &i), 0);
  mpe_io_info(f, i, &t);
  ck_assert_int_eq(t.dtype, MPE_BF16);
  read_all(f, i, 2, NULL, v, 2);
  ck_assert(ts_same_f64(v[0], (double)mpe_bf16_to_fp32(0x3C00)));   /* fp16 1.0's bits, read as bf16 */
  ck_assert_int_eq(mpe_io_find(f, "act", &i), 0);
  mpe_io_info(f, i, &t);
  ck_assert_int_eq(t.dtype, MPE_BF16);
  mpe_io_close(f);
  o.nrules = 1;                                                         /* U16 without a rule: skipped */
  f = open_ok("mixed.safetensors", &o);
  ck_assert_int_eq(mpe_io_find(f, "act", &i), MPE_ENOTFOUND);
  ck_assert_uint_eq(mpe_io_skipped(f), 3);
  mpe_io_close(f);
  /* a plain name whose member has another width: an error naming both */
  mpe_io_dtype_rule wrong = { "w", MPE_BF16 };
  o.rules = &wrong;
  char msg[256];
  ck_assert_int_eq(mpe_io_open(&f, data("mixed.safetensors"), &o, msg, sizeof msg), MPE_EINVAL);
  ck_assert_ptr_nonnull(strstr(msg, "'w' holds 4-byte values"));
  ck_assert_int_eq(mpe_io_open(&f, data("mixed.npz"), &o, msg, sizeof msg), MPE_EINVAL);
  /* a raw file takes its dtype from a rule naming it */
  mpe_io_dtype_rule raw = { "bound*", MPE_FP32 };
  o.rules = &raw;
  f = open_ok("boundary.bin", &o);
  ck_assert_int_eq(mpe_io_find(f, "boundary", &i), 0);
  ck_assert_uint_eq(read_all(f, i, 7, NULL, v, 0), 20);
  mpe_io_close(f);
  /* a rule without a pattern, or with a type that is not a storage type */
  mpe_io_dtype_rule bad = { NULL, MPE_FP32 };
  o.rules = &bad;
  ck_assert_int_eq(mpe_io_open(&f, data("mixed.npz"), &o, msg, sizeof msg), MPE_EINVAL);
  bad.pattern = "w";
  bad.dtype = MPE_TF32;
  ck_assert_int_eq(mpe_io_open(&f, data("mixed.npz"), &o, msg, sizeof msg), MPE_EINVAL);
  o.rules = NULL;
  ck_assert_int_eq(mpe_io_open(&f, data("mixed.npz"), &o, msg, sizeof msg), MPE_EINVAL);
}
END_TEST

/* The safetensors header is walked member by member (so that 200,000 entries do
   not become a 280 MB JSON tree): the walk must accept exactly what a JSON
   parser accepts. Each header below is framed as a file with 4 data bytes. */
static const struct { const char *hdr; int rc; const char *says; size_t count, skipped; } st_hdr[] = {
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, "", 1, 0 },
  { " \r\n\t{ \"a\" : { \"dtype\" : \"F32\" , \"shape\" : [ 1 ] , \"data_offsets\" : [ 0 , 4 ] } }    ", 0, "", 1, 0 },
  { "{\"\\u00e9\\n\\\"q\\\\\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, "", 1, 0 },
  { "{\"__metadata__\":{\"format\":\"pt\",\"x\":\"}]\\\"\"},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, "", 1, 0 },
  { "{\"__metadata__\":{}}", 0, "", 0, 0 },
  { "{}", 0, "", 0, 0 },
  { "{\"i\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0, "", 0, 1 },
  { "{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]},\"b\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[2,4]}}", 0, "", 2, 0 },
  /* duplicates: top level (also a float and a skipped entry), inside an entry, in the metadata */
  { "{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]},\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[2,4]}}", MPE_EFORMAT, "duplicate", 0, 0 },
  { "{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]},\"\\u0061\":{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[2,4]}}", MPE_EFORMAT, "duplicate", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", MPE_EFORMAT, "duplicate", 0, 0 },
  { "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", MPE_EFORMAT, "twice", 0, 0 },
  { "{\"__metadata__\":{},\"__metadata__\":{}}", MPE_EFORMAT, "twice", 0, 0 },
  { "{\"__metadata__\":{\"k\":1}}", MPE_EFORMAT, "not a string", 0, 0 },
  { "{\"__metadata__\":[]}", MPE_EFORMAT, "not an object", 0, 0 },
  { "{\"__metadata__\":{\"k\":\"1\",}}", MPE_EFORMAT, "JSON", 0, 0 },
  /* not JSON, or not an object */
  { "[{\"a\":1}]", MPE_EFORMAT, "not a JSON object", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]]}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\" {\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]} \"b\":1}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{a:{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", MPE_EFORMAT, "JSON", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", MPE_EFORMAT, "overlap", 0, 0 },
  { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"pad\":\"%PAD%\"}}", MPE_EFORMAT, "bytes of JSON", 0, 0 },
  { "\"a\"", MPE_EFORMAT, "not a JSON object", 0, 0 },
  { "  ", MPE_EFORMAT, "JSON", 0, 0 },
};

START_TEST(test_st_header)
{
  char path[] = "/tmp/mpe_check_st_XXXXXX.safetensors";
  int fd = mkstemps(path, 12);
  ck_assert_int_ge(fd, 0);
  close(fd);
  const char *tpl = st_hdr[_i].hdr, *pad = strstr(tpl, "%PAD%");
  size_t padn = pad ? 70000 : 0, n = strlen(tpl) - (pad ? 5 : 0) + padn;
  char *h = malloc(n + 1);
  ck_assert_ptr_nonnull(h);
  if (pad) {
    size_t a = (size_t)(pad - tpl);
    memcpy(h, tpl, a);
    memset(h + a, 'x', padn);
    strcpy(h + a + padn, pad + 5);
  } else {
    strcpy(h, tpl);
  }
  FILE *fp = fopen(path, "wb");
  ck_assert_ptr_nonnull(fp);
  for (int k = 0; k < 8; k++)
    fputc((int)((uint64_t)n >> (8 * k) & 0xff), fp);
  fwrite(h, 1, n, fp);
  fwrite("\0\0\x80\x3f", 1, 4, fp);
  ck_assert_int_eq(fclose(fp), 0);
  free(h);
  mpe_io *f = NULL;
  char msg[256];
  int rc = mpe_io_open(&f, path, NULL, msg, sizeof msg);
  unlink(path);
  ck_assert_msg(rc == st_hdr[_i].rc, "header %d: rc %d (%s)", _i, rc, msg);
  ck_assert_msg(strstr(msg, st_hdr[_i].says) != NULL, "header %d: message '%s'", _i, msg);
  ck_assert_ptr_null(strchr(msg, '\n'));
  if (rc) {
    ck_assert_ptr_null(f);
    return;
  }
  ck_assert_uint_eq(mpe_io_count(f), st_hdr[_i].count);
  ck_assert_uint_eq(mpe_io_skipped(f), st_hdr[_i].skipped);
  if (_i == 2) {   /* escapes in a key are decoded */
    mpe_io_tensor t;
    mpe_io_info(f, 0, &t);
    ck_assert_str_eq(t.name, "\xc3\xa9\n\"q\\");
  }
  if (_i == 7) {   /* listed by offset, each with its own name and shape */
    mpe_io_tensor t;
    size_t i;
    ck_assert_int_eq(mpe_io_find(f, "b", &i), 0);
    ck_assert_uint_eq(i, 1);
    mpe_io_info(f, 1, &t);
    ck_assert_str_eq(t.name, "b");
    ck_assert_int_eq(t.ndim, 1);
    ck_assert_uint_eq(t.shape[0], 1);
    ck_assert_int_eq(t.dtype, MPE_FP16);
    ck_assert_int_eq(mpe_io_select(f, 1), 0);
    float v[2];
    size_t got;
    ck_assert_int_eq(mpe_io_read(f, v, 2, &got), 0);
    ck_assert_uint_eq(got, 1);
    ck_assert_float_eq(v[0], 1.875f);   /* fp16 0x3f80 */
  }
  mpe_io_close(f);
}
END_TEST

/* 0-d tensors (numpy shape (), C and Fortran order; a safetensors shape []):
   a scalar is a tensor of one value. Under UBSan the reader once passed NULL
   to memcpy for the empty shape. */
START_TEST(test_scalar)
{
  static const char *hdr[] = {
    "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
    "{'descr': '<f4', 'fortran_order': True, 'shape': (), }",
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}",
  };
  const int st = _i == 2;
  char path[] = "/tmp/mpe_check_scalar_XXXXXX.safetensors";
  if (!st)
    strcpy(path + strlen(path) - 12, ".npy");
  int fd = mkstemps(path, st ? 12 : 4);
  ck_assert_int_ge(fd, 0);
  close(fd);
  FILE *fp = fopen(path, "wb");
  ck_assert_ptr_nonnull(fp);
  size_t n = strlen(hdr[_i]);
  if (st) {
    for (int k = 0; k < 8; k++)
      fputc((int)((uint64_t)n >> (8 * k) & 0xff), fp);
    fwrite(hdr[_i], 1, n, fp);
  } else {   /* version 1.0: the header padded with spaces to 64 bytes, ending in \n */
    size_t hl = (n + 1 + 10 + 63) / 64 * 64 - 10;
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    fputc((int)(hl & 0xff), fp);
    fputc((int)(hl >> 8), fp);
    fwrite(hdr[_i], 1, n, fp);
    for (size_t k = n; k + 1 < hl; k++)
      fputc(' ', fp);
    fputc('\n', fp);
  }
  fwrite("\0\0\x60\x40", 1, 4, fp);   /* 3.5f */
  ck_assert_int_eq(fclose(fp), 0);
  mpe_io *f = NULL;
  char msg[256];
  int rc = mpe_io_open(&f, path, NULL, msg, sizeof msg);
  unlink(path);
  ck_assert_msg(rc == 0, "scalar %d: %s", _i, msg);
  ck_assert_uint_eq(mpe_io_count(f), 1);
  mpe_io_tensor t;
  mpe_io_info(f, 0, &t);
  ck_assert_int_eq(t.ndim, 0);
  ck_assert_uint_eq(t.count, 1);
  ck_assert_int_eq(t.dtype, MPE_FP32);
  ck_assert_int_eq(mpe_io_select(f, 0), 0);
  float v[2] = { 0, 0 };
  size_t got = 0;
  ck_assert_int_eq(mpe_io_read(f, v, 2, &got), 0);
  ck_assert_uint_eq(got, 1);
  ck_assert_float_eq(v[0], 3.5f);
  mpe_io_close(f);
}
END_TEST

/* a member whose data inflate past the size it declares: found while reading */
START_TEST(test_zip_longer)
{
  mpe_io *f = open_ok("hostile/zip_longer.npz", NULL);
  ck_assert_int_eq(mpe_io_select(f, 0), 0);
  float v[8];
  size_t n;
  ck_assert_int_eq(mpe_io_read(f, v, 8, &n), MPE_EFORMAT);
  ck_assert_ptr_nonnull(strstr(mpe_io_message(f), "longer than declared"));
  mpe_io_close(f);
  /* the member size cap */
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.max_member_bytes = 100;
  char msg[256];
  ck_assert_int_eq(mpe_io_open(&f, data("grads.npz"), &o, msg, sizeof msg), MPE_EFORMAT);
  ck_assert_ptr_nonnull(strstr(msg, "over the limit"));
}
END_TEST

START_TEST(test_errors)
{
  mpe_io *f;
  char msg[64];
  ck_assert_int_eq(mpe_io_open(NULL, "x", NULL, msg, sizeof msg), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_open(&f, NULL, NULL, NULL, 0), MPE_EINVAL);
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.has_dtype = 1;
  o.dtype = MPE_TF32;      /* not a storage type */
  ck_assert_int_eq(mpe_io_open(&f, data("boundary.npy"), &o, msg, sizeof msg), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_open(&f, data("boundary.bin"), NULL, msg, sizeof msg), MPE_EINVAL);   /* raw without dtype */
  ck_assert_int_eq(mpe_io_open(&f, data("hostile"), NULL, msg, sizeof msg), MPE_EIO);   /* a directory */
  f = open_ok("boundary.npy", NULL);
  float v[4];
  size_t n, i;
  mpe_io_tensor t;
  ck_assert_int_eq(mpe_io_read(f, v, 4, &n), MPE_EINVAL);    /* nothing selected */
  ck_assert_int_eq(mpe_io_read(f, NULL, 4, &n), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_select(f, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_info(f, 1, &t), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_find(f, "nope", &i), MPE_ENOTFOUND);
  ck_assert_int_eq(mpe_io_find(f, NULL, &i), MPE_EINVAL);
  mpe_io_close(f);
  mpe_io_close(NULL);
  mpe_type dt;
  ck_assert_int_eq(mpe_io_dtype_lookup("BF16", &dt), 0);
  ck_assert_int_eq(dt, MPE_BF16);
  ck_assert_int_eq(mpe_io_dtype_lookup("float8_e4m3fn", &dt), 0);
  ck_assert_int_eq(dt, MPE_E4M3);
  ck_assert_int_eq(mpe_io_dtype_lookup("int8", &dt), MPE_ENOTFOUND);
  ck_assert_uint_eq(mpe_io_dtype_size(MPE_TF32), 0);
  ck_assert_str_eq(mpe_io_kind_name(MPE_IO_SAFETENSORS), "safetensors");
  ck_assert_ptr_null(mpe_io_kind_name((mpe_io_kind)42));
}
END_TEST

/* writers: what they write reads back the same, through every container,
   with a chunk far smaller than the data */
START_TEST(test_writers_roundtrip)
{
  enum { N = 100000 };
  float *x = malloc(N * sizeof *x);
  uint16_t *h = malloc(N * sizeof *h);
  uint64_t st = ts_seed();
  for (size_t i = 0; i < N; i++) {
    x[i] = ldexpf((float)(ts_rand64(&st) >> 40) / 16777216.0f, (int)(ts_rand64(&st) % 60) - 40);
    h[i] = mpe_fp32_to_bf16(x[i], MPE_RNE);
  }
  uint64_t shape[2] = { 250, 400 };
  mpe_io_out out[2] = { { "w", MPE_FP32, 2, shape, x }, { "w.bf16", MPE_BF16, 2, shape, h } };
  char dir[] = "/tmp/mpe_check_io_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char p[4][256];
  snprintf(p[0], 256, "%s/w.npy", dir);
  snprintf(p[1], 256, "%s/w.safetensors", dir);
  snprintf(p[2], 256, "%s/w.npz", dir);
  snprintf(p[3], 256, "%s/ws.npz", dir);
  ck_assert_int_eq(mpe_io_write_npy(p[0], &out[0]), 0);
  ck_assert_int_eq(mpe_io_write_safetensors(p[1], out, 2), 0);
  ck_assert_int_eq(mpe_io_write_npz(p[2], out, 2, 1), 0);
  ck_assert_int_eq(mpe_io_write_npz(p[3], out, 2, 0), 0);
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.chunk_bytes = 4096;
  o.has_dtype = 1;
  o.dtype = MPE_BF16;     /* for the |V2 members */
  float *y = malloc(N * sizeof *y);
  for (int j = 0; j < 4; j++) {
    mpe_io *f;
    char msg[256];
    ck_assert_msg(mpe_io_open(&f, p[j], &o, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_uint_eq(mpe_io_count(f), j ? 2 : 1);
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      mpe_io_tensor t;
      mpe_io_info(f, i, &t);
      ck_assert_uint_eq(t.count, N);
      ck_assert_int_eq(t.ndim, 2);
      ck_assert_uint_eq(t.shape[1], 400);
      ck_assert_int_eq(mpe_io_select(f, i), 0);
      size_t got = 0, n;
      while (mpe_io_read(f, y + got, N - got, &n) == 0 && n)
        got += n;
      ck_assert_uint_eq(got, N);
      for (size_t k = 0; k < N; k++) {
        float want = t.dtype == MPE_BF16 ? mpe_bf16_to_fp32(h[k]) : x[k];
        ck_assert(ts_f2u(y[k]) == ts_f2u(want));
      }
    }
    ck_assert_uint_eq(mpe_io_bytes_done(f), mpe_io_bytes_total(f));
    mpe_io_close(f);
    unlink(p[j]);
  }
  rmdir(dir);
  /* writer argument errors */
  mpe_io_out bad = { "b", MPE_TF32, 1, shape, x };
  ck_assert_int_eq(mpe_io_write_npy(p[0], &bad), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_write_npy(NULL, &out[0]), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_write_safetensors(p[1], NULL, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_write_npy("/nonexistent/dir/x.npy", &out[0]), MPE_EIO);
  /* two tensors of one name: the readers refuse such a file, so the writers
     do not make one (nothing is written) */
  mpe_io_out twice[3] = { out[0], out[1], out[0] };
  ck_assert_int_eq(mpe_io_write_safetensors(p[1], twice, 3), MPE_EINVAL);
  ck_assert_int_eq(mpe_io_write_npz(p[2], twice, 3, 0), MPE_EINVAL);
  ck_assert_int_eq(access(p[1], F_OK), -1);
  ck_assert_int_eq(access(p[2], F_OK), -1);
  /* .npz member names that would leave the archive's plain names (before: written,
     ../x.npy among them); the file named is left as it was */
  char sp[] = "/tmp/mpe_npz_names_XXXXXX";
  int sfd = mkstemp(sp);
  ck_assert_int_ge(sfd, 0);
  close(sfd);
  static const char *const evil[] = { "../x", "a/../../x", "/abs", "./x", "a//b", "", "a\\b", "tab\there",
                                      "bad\xff" };
  struct stat sb;
  for (size_t k = 0; k < sizeof evil / sizeof *evil; k++) {
    mpe_io_out e = out[0];
    e.name = evil[k];
    ck_assert_msg(mpe_io_write_npz(sp, &e, 1, 0) == MPE_EINVAL, "npz member '%s'", evil[k]);
    ck_assert_int_eq(stat(sp, &sb), 0);
    ck_assert_int_eq(sb.st_size, 0);
  }
  mpe_io_out sub = out[0];
  sub.name = "layer.0/w";   /* a folder inside the archive, as np.savez writes it */
  ck_assert_int_eq(mpe_io_write_npz(sp, &sub, 1, 0), 0);
  unlink(sp);
  mpe_io_out meta = out[0];
  meta.name = "__metadata__";
  ck_assert_int_eq(mpe_io_write_safetensors(p[1], &meta, 1), MPE_EINVAL);
  free(x);
  free(h);
  free(y);
}
END_TEST

/* Replay every fuzz corpus and crash-regression input through every reader:
   any outcome but a crash (or a sanitizer report) is fine. */
static void replay_file(const char *path)
{
  static const mpe_io_kind kinds[] = { MPE_IO_AUTO, MPE_IO_NPY, MPE_IO_NPZ, MPE_IO_SAFETENSORS, MPE_IO_TEXT, MPE_IO_RAW };
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    mpe_io_opts o;
    memset(&o, 0, sizeof o);
    o.kind = kinds[k];
    o.has_dtype = 1;
    o.dtype = k % 2 ? MPE_BF16 : MPE_E4M3;
    o.chunk_bytes = 4096;
    mpe_io *f;
    char msg[256];
    if (mpe_io_open(&f, path, &o, msg, sizeof msg))
      continue;
    double buf[512];
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      size_t n;
      if (mpe_io_select(f, i))
        continue;
      while (mpe_io_read(f, buf, 512, &n) == 0 && n)
        ;
    }
    mpe_io_close(f);
  }
}

static void replay_cb(const char *path, void *ctx)
{
  (void)ctx;
  replay_file(path);
}

START_TEST(test_fuzz_replay)
{
  static const char *dirs[] = { "corpus/npy", "corpus/npz", "corpus/safetensors", "corpus/text", "corpus/raw", "crashes" };
  size_t files = 0;
  for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
    char rel[64];
    snprintf(rel, sizeof rel, "tests/fuzz/%s", dirs[d]);
    files += ts_each_file(rel, "", replay_cb, NULL);
  }
  /* the hand-made files too */
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++)
    replay_file(data(hostile[i].file));
  ck_assert_msg(files > 0, "no fuzz corpus found under tests/fuzz");
  printf("fuzz replay: %zu files through every reader\n", files);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("io");
  TCase *tc = tcase_create("readers");
  tcase_add_loop_test(tc, test_reader_boundary, 0, (int)(sizeof Bfiles / sizeof Bfiles[0]));
  tcase_add_test(tc, test_reader_shapes);
  tcase_add_test(tc, test_reader_half);
  tcase_add_test(tc, test_reader_narrow);
  tcase_add_test(tc, test_seek);
  suite_add_tcase(s, tc);
  tc = tcase_create("hostile");
  tcase_add_loop_test(tc, test_hostile, 0, (int)(sizeof hostile / sizeof hostile[0]));
  tcase_add_test(tc, test_zip_longer);
  tcase_add_loop_test(tc, test_scalar, 0, 3);
  tcase_add_test(tc, test_st_no_float);
  tcase_add_test(tc, test_skipped_named);
  tcase_add_test(tc, test_dtype_rules);
  tcase_add_loop_test(tc, test_st_header, 0, (int)(sizeof st_hdr / sizeof st_hdr[0]));
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_fuzz_replay);
  suite_add_tcase(s, tc);
  tc = tcase_create("writers");
  tcase_add_test(tc, test_writers_roundtrip);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
