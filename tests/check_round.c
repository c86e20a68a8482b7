/* Array rounding: SIMD kernels vs the reference, stochastic rounding
   (statistics, thread and path independence), argument errors, aliasing. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "testsupport.h"

static void fill_random(float *x, size_t n, uint64_t seed)
{
  uint64_t s = seed;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = ts_rand64(&s);
    uint32_t u = (uint32_t)r;
    if ((r >> 32) % 3 == 0)   /* bias toward the formats' ranges */
      u = (u & 0x807fffffu) | (uint32_t)(100 + (r >> 40) % 60) << 23;
    x[i] = ts_u2f(u);
  }
}

/* every kernel, every format, every mode and option gives the reference's bits and flags */
START_TEST(test_simd_vs_reference)
{
  /* random bulk: 2^16 values, or 2^16 / MPE_CHECK_SUBSET (at least 2^12) */
  enum { N = 1 << 16 };
  const size_t n = N / ts_subset() < 4096 ? 4096 : N / ts_subset();
  float *x = malloc(N * 4), *y = malloc(N * 4), *z = malloc(N * 4);
  fill_random(x, N, ts_seed() + 5);
  const mpe_format *fmts[6] = { mpe_format_of(MPE_FP32), mpe_format_of(MPE_TF32), mpe_format_of(MPE_FP16),
                                mpe_format_of(MPE_BF16), mpe_format_of(MPE_E4M3), mpe_format_of(MPE_E5M2) };
  mpe_format *c1;
  ck_assert_int_eq(mpe_format_custom(&c1, 6, -20, 20), MPE_OK);
  long cases = 0;
  for (int fi = 0; fi < 7; fi++)
    for (int r = 0; r < MPE_NROUND; r++)
      for (int opt = 0; opt < 4; opt++) {
        const mpe_format *f = fi < 6 ? fmts[fi] : c1;
        mpe_round_opts o = { (mpe_round)r, opt & 1, opt >> 1, 99, 12345 };
        mpe_simd_level_set(0);
        mpe_flags_clear(~0u);
        ck_assert_int_eq(mpe_round_f32(z, x, n, f, &o), MPE_OK);
        const unsigned fz = mpe_flags_get();
        for (int lvl = 1; lvl <= 2; lvl++) {
          mpe_simd_level_set(lvl);
          mpe_flags_clear(~0u);
          ck_assert_int_eq(mpe_round_f32(y, x, n, f, &o), MPE_OK);
          unsigned fy = mpe_flags_get();
          for (size_t i = 0; i < n; i++)
            if (ts_f2u(y[i]) != ts_f2u(z[i]))
              ck_abort_msg("level %d %s %s opt %d: x=%08x simd %08x ref %08x", lvl, mpe_format_name(f),
                           mpe_round_name((mpe_round)r), opt, ts_f2u(x[i]), ts_f2u(y[i]), ts_f2u(z[i]));
          ck_assert_uint_eq(fy, fz);
          cases += (long)n;
        }
      }
  mpe_simd_level_set(-1);
  fprintf(stderr, "SIMD vs reference: %ld results and their flags match (levels available: %s)\n", cases,
          mpe_cpu_features());
  mpe_format_free(c1);
  free(x); free(y); free(z);
}
END_TEST

/* Mixed vectors: every SIMD vector (and every group of vectors the kernels
   test at once) holding normal, subnormal, underflow-to-zero and, in the
   second pass, overflow, infinite and NaN lanes together, with ties at the
   subnormal boundaries: q/2, 3q/2, minnorm - q/2, the largest finite plus
   half an ulp. Each kernel against the reference path (level 0), bits and
   flags, every format (custom ones with emin = binary32's and inside the
   range), mode and option. Flags are compared per array of 16 elements. */
static float pick_mixed(uint64_t *s, const mpe_format *f, int specials)
{
  const double q = mpe_format_min_subnormal(f), mn = mpe_format_min_normal(f), mx = mpe_format_max(f);
  const int p = mpe_format_precision(f);
  uint64_t r = ts_rand64(s);
  double v;
  switch (r % (specials ? 24 : 18)) {
  case 0: v = q / 2; break;                       /* tie: to 0 (even) */
  case 1: v = 1.5 * q; break;                     /* tie: to 2q */
  case 2: v = mn - q / 2; break;                  /* tie between the largest subnormal and minnorm */
  case 3: v = q * (double)(1 + (r >> 8) % 7) + q / 2; break;   /* ties inside the subnormal range */
  case 4: v = q * ldexp(1.0, -(int)((r >> 8) % 30)) * (1 + ((r >> 20) & 1) * 0.25); break;   /* far below q */
  case 5: v = (double)ts_u2f((uint32_t)(r >> 12) & 0x007fffffu); break;   /* binary32 subnormals */
  case 6: v = 0; break;
  case 7: v = nextafter((float)(q / 2), 1.0); break;
  case 8: v = mn; break;
  case 9: v = mn * (1 - ldexp(1.0, -p - 1)); break;   /* rounds up to minnorm in the nearest modes */
  case 10: v = mx; break;
  case 11: v = mn * ((double)((r >> 8) & 0xffffff) * 0x1p-24); break;   /* random subnormal-range value */
  case 12: v = q * ((double)((r >> 8) & 0xffffff) * 0x1p-24); break;    /* random value below q */
  case 13: case 14: case 15: case 16: case 17:
    v = ldexp(1.0 + (double)((r >> 8) & 0xffffff) * 0x1p-24, (int)((r >> 40) % 40) - 20); /* normal-ish */
    if (v > mx)
      v = mx / 2;
    break;
  case 18: v = mx * (1 + ldexp(1.0, -p)); break;   /* tie above the largest finite */
  case 19: v = 2 * mx; break;
  case 20: v = INFINITY; break;
  case 21: v = NAN; break;
  case 22: v = (double)ts_u2f(0x7f800001u); break;   /* signalling NaN */
  default: v = nextafter(mx, INFINITY); break;
  }
  float fv = (float)v;
  if (!(fv <= FLT_MAX) && !isnan(fv) && !specials)
    fv = (float)mx;
  return (r >> 63) ? -fv : fv;
}

START_TEST(test_mixed_vectors)
{
  enum { N = 4096, CHUNK = 16 };
  float *x = malloc(N * 4), *y = malloc(N * 4), *z = malloc(N * 4), *w = malloc(N * 4);
  unsigned fzc[N / CHUNK];
  mpe_format *c1, *c2, *c3;
  ck_assert_int_eq(mpe_format_custom(&c1, 6, -126, 20), MPE_OK);   /* emin = binary32's */
  ck_assert_int_eq(mpe_format_custom(&c2, 9, -100, 30), MPE_OK);   /* emin + 127 >= p */
  ck_assert_int_eq(mpe_format_custom(&c3, 11, -120, 20), MPE_OK);  /* 1 < emin + 127 < p: the lane path */
  const mpe_format *fmts[] = { mpe_format_of(MPE_FP16), mpe_format_of(MPE_BF16), mpe_format_of(MPE_TF32),
                               mpe_format_of(MPE_E4M3), mpe_format_of(MPE_E5M2), mpe_format_of(MPE_FP32), c1, c2, c3 };
  const int nf = (int)(sizeof fmts / sizeof fmts[0]);
  int levels[2], nlev = 0;
  for (int lvl = 1; lvl <= 2; lvl++)
    if (mpe_simd_level_set(lvl) == lvl)
      levels[nlev++] = lvl;
  long cases = 0, flag_checks = 0;
  for (int pass = 0; pass < 3; pass++)   /* 0: finite only; 1: rare specials; 2: many */
    for (int fi = 0; fi < nf; fi++) {
      const mpe_format *f = fmts[fi];
      uint64_t s = ts_seed() + 31 * (uint64_t)fi + (uint64_t)pass;
      for (size_t i = 0; i < N; i++)
        x[i] = pick_mixed(&s, f, pass == 2 || (pass == 1 && ts_rand64(&s) % 97 == 0));
      for (int r = 0; r < MPE_NROUND; r++)
        for (int opt = 0; opt < 4; opt++) {
          mpe_round_opts o = { (mpe_round)r, opt & 1, opt >> 1, 1234, 7 };
          /* the reference, chunk by chunk (its flags per chunk), once for every level */
          unsigned fz_all = 0;
          mpe_simd_level_set(0);
          for (size_t c = 0; c < N; c += CHUNK) {
            mpe_round_opts oc = o;
            oc.offset = o.offset + c;
            mpe_flags_clear(~0u);
            ck_assert_int_eq(mpe_round_f32(z + c, x + c, CHUNK, f, &oc), MPE_OK);
            fz_all |= fzc[c / CHUNK] = mpe_flags_get();
          }
          for (int li = 0; li < nlev; li++) {
            const int lvl = levels[li];
            mpe_simd_level_set(lvl);
            for (size_t c = 0; c < N; c += CHUNK) {
              mpe_round_opts oc = o;
              oc.offset = o.offset + c;
              mpe_flags_clear(~0u);
              ck_assert_int_eq(mpe_round_f32(y + c, x + c, CHUNK, f, &oc), MPE_OK);
              ck_assert_msg(mpe_flags_get() == fzc[c / CHUNK],
                            "level %d %s %s opt %d pass %d chunk %zu: flags %x, reference %x", lvl,
                            mpe_format_name(f), mpe_round_name((mpe_round)r), opt, pass, c, mpe_flags_get(),
                            fzc[c / CHUNK]);
              flag_checks++;
            }
            /* the whole array in one call too: the 4-vector groups and the streaming-free main loop */
            mpe_flags_clear(~0u);
            ck_assert_int_eq(mpe_round_f32(w, x, N, f, &o), MPE_OK);
            ck_assert_uint_eq(mpe_flags_get(), fz_all);
            flag_checks++;
            for (size_t i = 0; i < N; i++) {
              ck_assert_msg(ts_f2u(y[i]) == ts_f2u(z[i]), "level %d %s %s opt %d pass %d: x=%08x simd %08x ref %08x",
                            lvl, mpe_format_name(f), mpe_round_name((mpe_round)r), opt, pass, ts_f2u(x[i]),
                            ts_f2u(y[i]), ts_f2u(z[i]));
              ck_assert_msg(ts_f2u(w[i]) == ts_f2u(z[i]), "level %d %s %s opt %d pass %d (one call): x=%08x simd %08x ref %08x",
                            lvl, mpe_format_name(f), mpe_round_name((mpe_round)r), opt, pass, ts_f2u(x[i]),
                            ts_f2u(w[i]), ts_f2u(z[i]));
            }
            cases += N;
          }
        }
    }
  mpe_simd_level_set(-1);
  fprintf(stderr, "mixed vectors: %ld results (x2: chunks of %d and one call) match the reference on %d level(s), "
          "%ld flag sets match\n", cases, CHUNK, nlev, flag_checks);
  ck_assert_int_gt(nlev, 0);
  mpe_format_free(c1);
  mpe_format_free(c2);
  mpe_format_free(c3);
  free(x); free(y); free(z); free(w);
}
END_TEST

/* odd lengths and misaligned pointers: the tail and the streaming prologue */
START_TEST(test_lengths_alignment)
{
  enum { N = 3000 };
  float *buf = malloc((N + 64) * 4), *y = malloc((N + 64) * 4), *z = malloc((N + 64) * 4);
  fill_random(buf, N + 64, 77);
  mpe_round_opts o = { MPE_SR, 0, 0, 7, 3 };
  for (size_t off = 0; off < 17; off++)
    for (size_t n = 0; n < 40; n++) {
      mpe_simd_level_set(0);
      mpe_round_opts oo = o;
      ck_assert_int_eq(mpe_round_f32(z, buf + off, n, mpe_format_of(MPE_BF16), &oo), MPE_OK);
      mpe_simd_level_set(2);
      ck_assert_int_eq(mpe_round_f32(y + off, buf + off, n, mpe_format_of(MPE_BF16), &oo), MPE_OK);
      for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(ts_f2u(y[off + i]), ts_f2u(z[i]));
    }
  mpe_simd_level_set(-1);
  free(buf); free(y); free(z);
}
END_TEST

/* Edge values one at a time inside arrays that otherwise round exactly: the
   flags of each call are those of the one edge lane, so every lane position of
   the 4-vector groups is held to the reference's flags, not only its bits.
   Values: ties at the subnormal boundaries and in the normal range, the
   largest finite and the ties and overflows above it, binary32 subnormals,
   zeros, infinities and NaNs, both signs. Arrays: lengths that are whole
   groups and not, pointers off a vector boundary, in place and not, and with
   a first lane that raises inexact and underflow (later groups then need no
   flag work in the kernels). Every format, mode and option. */
static int probe_values(const mpe_format *f, float *v)
{
  const double q = mpe_format_min_subnormal(f), mn = mpe_format_min_normal(f), mx = mpe_format_max(f);
  const int p = mpe_format_precision(f);
  const double w[] = { q / 2, 1.5 * q, q, q / 4, mn - q / 2, mn, mn - q, mn * (1 - ldexp(1.0, -p - 1)),
                       mn * (1 + ldexp(1.0, 1 - p)) + mn * ldexp(1.0, -p),   /* tie to even, odd below */
                       1 + ldexp(1.0, -p), 1 + 3 * ldexp(1.0, -p), 1 + ldexp(1.0, -p - 3),
                       mx, mx * (1 + ldexp(1.0, -p - 1)), mx * (1 + ldexp(1.0, -p)), nextafter(mx * (1 + ldexp(1.0, -p)), 0),
                       2 * mx, 0x1p-149, 0x1p-127 * 1.75, 0, INFINITY, NAN, FLT_MAX };
  int k = 0;
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
    float fv = (float)w[i];
    v[k++] = fv;
    v[k++] = -fv;
  }
  v[k++] = ts_u2f(0x7f800001u);   /* signalling NaN */
  v[k++] = ts_u2f(0xffa00000u);
  v[k++] = nextafterf((float)(q / 2), 1.0f);
  v[k++] = nextafterf((float)(q / 2), 0.0f);
  return k;
}

START_TEST(test_edge_lanes)
{
  enum { CAP = 160 };
  const mpe_format *fmts[] = { mpe_format_of(MPE_FP16), mpe_format_of(MPE_E5M2), mpe_format_of(MPE_E4M3),
                               mpe_format_of(MPE_BF16), mpe_format_of(MPE_TF32) };
  static const size_t lens[] = { 32, 64, 71, 128 };
  static const size_t offs[] = { 0, 1, 3 };
  float *bx = malloc(CAP * 4), *by = malloc(CAP * 4), *bz = malloc(CAP * 4);
  float probes[64];
  long calls = 0, levels_run = 0;
  for (int lvl = 1; lvl <= 2; lvl++) {
    if (mpe_simd_level_set(lvl) != lvl)
      continue;
    levels_run++;
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
      const mpe_format *f = fmts[fi];
      const int np = probe_values(f, probes);
      uint64_t s = ts_seed() + 17 * fi;
      for (int r = 0; r < MPE_SR; r++)
        for (int opt = 0; opt < 3; opt++)
          for (int first = 0; first < 2; first++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
              for (int pi = 0; pi < np; pi++) {
                const size_t n = lens[li], off = offs[(size_t)pi % 3];
                const size_t pos = (size_t)(ts_rand64(&s) % n);
                mpe_round_opts o = { (mpe_round)r, opt == 2, opt == 1, 3, 0 };
                float *x = bx + off;
                /* exact lanes: small integers and their halves, in every format */
                for (size_t i = 0; i < n; i++)
                  x[i] = (float)((int)(ts_rand64(&s) % 17) - 8) * 0.5f;
                if (first)
                  x[0] = (float)(mpe_format_min_subnormal(f) / 4);
                x[pos] = probes[pi];
                mpe_simd_level_set(0);
                mpe_flags_clear(~0u);
                ck_assert_int_eq(mpe_round_f32(bz, x, n, f, &o), MPE_OK);
                const unsigned fz = mpe_flags_get();
                for (int inplace = 0; inplace < 2; inplace++) {
                  float *y = inplace ? x : by + 3 - off;   /* off 0, 1, 3: y misaligned by 3, 2, 0 */
                  if (inplace)
                    memcpy(by, x, n * 4);
                  mpe_simd_level_set(lvl);
                  mpe_flags_clear(~0u);
                  ck_assert_int_eq(mpe_round_f32(y, x, n, f, &o), MPE_OK);
                  const unsigned fy = mpe_flags_get();
                  size_t i = 0;
                  while (i < n && ts_f2u(y[i]) == ts_f2u(bz[i]))
                    i++;
                  if (i < n)
                    ck_abort_msg("level %d %s %s opt %d n %zu%s: x[%zu]=%08x simd %08x ref %08x", lvl,
                                 mpe_format_name(f), mpe_round_name((mpe_round)r), opt, n,
                                 inplace ? " in place" : "", i, ts_f2u(inplace ? by[i] : x[i]), ts_f2u(y[i]),
                                 ts_f2u(bz[i]));
                  ck_assert_msg(fy == fz, "level %d %s %s opt %d n %zu%s: probe %08x at %zu%s: flags %x, reference %x",
                                lvl, mpe_format_name(f), mpe_round_name((mpe_round)r), opt, n,
                                inplace ? " in place" : "", ts_f2u(probes[pi]), pos, first ? " (after q/4)" : "",
                                fy, fz);
                  if (inplace)
                    memcpy(x, by, n * 4);
                  calls++;
                }
              }
    }
  }
  mpe_simd_level_set(-1);
  fprintf(stderr, "edge lanes: %ld calls, bits and flags match the reference on %ld level(s)\n", calls, levels_run);
  ck_assert_int_gt(levels_run, 0);
  free(bx); free(by); free(bz);
}
END_TEST

/* Arrays above the streaming threshold (non-temporal stores): a destination
   off a vector boundary, edge values in the first and last groups and in the
   tail, every format and deterministic mode against the reference, one thread. */
START_TEST(test_streaming)
{
  const size_t n = ((size_t)9 << 18) + 45;   /* 9 MiB of binary32 and a partial group */
  float *x = malloc(n * 4), *y = malloc((n + 8) * 4), *z = malloc(n * 4);
  const mpe_format *fmts[] = { mpe_format_of(MPE_FP16), mpe_format_of(MPE_BF16), mpe_format_of(MPE_E5M2),
                               mpe_format_of(MPE_E4M3), mpe_format_of(MPE_TF32) };
  float probes[64];
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  long cases = 0;
  for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
    const mpe_format *f = fmts[fi];
    uint64_t s = ts_seed() + 3 * fi;
    for (size_t i = 0; i < n; i++)
      x[i] = (float)ldexp((double)(ts_rand64(&s) % 2001) - 1000, (int)(ts_rand64(&s) % 30) - 33);
    const int np = probe_values(f, probes);
    for (int pi = 0; pi < np; pi++) {
      x[(size_t)pi] = probes[pi];
      x[n - 1 - (size_t)pi] = probes[np - 1 - pi];
      x[n / 2 + 7 * (size_t)pi] = probes[pi];
    }
    for (int r = 0; r < MPE_SR_EQ + 1; r++) {
      mpe_round_opts o = { (mpe_round)r, 0, 0, 77, 5 };
      mpe_simd_level_set(0);
      mpe_flags_clear(~0u);
      ck_assert_int_eq(mpe_round_f32(z, x, n, f, &o), MPE_OK);
      const unsigned fz = mpe_flags_get();
      for (int lvl = 1; lvl <= 2; lvl++) {
        if (mpe_simd_level_set(lvl) != lvl)
          continue;
        for (size_t off = 0; off < 3; off += 2) {
          mpe_flags_clear(~0u);
          ck_assert_int_eq(mpe_round_f32(y + off, x, n, f, &o), MPE_OK);
          ck_assert_uint_eq(mpe_flags_get(), fz);
          size_t i = 0;
          while (i < n && ts_f2u(y[off + i]) == ts_f2u(z[i]))
            i++;
          if (i < n)
            ck_abort_msg("level %d %s %s: x[%zu]=%08x simd %08x ref %08x", lvl, mpe_format_name(f),
                         mpe_round_name((mpe_round)r), i, ts_f2u(x[i]), ts_f2u(y[off + i]), ts_f2u(z[i]));
          cases++;
        }
      }
    }
  }
#ifdef _OPENMP
  omp_set_num_threads(omp_get_num_procs());
#endif
  mpe_simd_level_set(-1);
  fprintf(stderr, "streaming: %ld arrays of %zu elements match the reference\n", cases, n);
  free(x); free(y); free(z);
}
END_TEST

/* The quantum-add path (AVX-512, RNE and RZ, formats whose largest finite
   keeps 2^23 q a finite binary32: E4M3, E5M2, FP6/FP4 and custom ones;
   every lane finite and at most the largest finite): every binary32 exponent
   field, at each the patterns that decide a rounding at the format's last
   place there (the kept bit odd and even; the dropped part 0, 1, half - 1,
   half, half + 1, all ones) and random significands, both signs; one probe
   per 64-element array of zeros (so the call's flags are the probe's),
   in place and not, at every lane position of a 4-vector group, against the
   reference's bits and flags. Custom formats: p = 23 (dbase 1), p = 2,
   emin = binary32's, and the largest emax the path takes (B's exponent 254). */
START_TEST(test_quantum_add)
{
  enum { N = 64 };
  mpe_format *c1, *c2, *c3, *c4;
  ck_assert_int_eq(mpe_format_custom(&c1, 23, -30, 30), MPE_OK);
  ck_assert_int_eq(mpe_format_custom(&c2, 2, -10, 5), MPE_OK);
  ck_assert_int_eq(mpe_format_custom(&c3, 6, -126, 20), MPE_OK);
  ck_assert_int_eq(mpe_format_custom(&c4, 8, -100, 111), MPE_OK);   /* 111 + 127 + 16 = 254 */
  const mpe_format *fmts[] = { mpe_format_of(MPE_E4M3), mpe_format_of(MPE_E5M2), mpe_format_lookup("e3m2"),
                               mpe_format_lookup("e2m1"), c1, c2, c3, c4 };
  float x[N], y[N], z[N], w[N];
  long calls = 0, levels_run = 0;
  for (int lvl = 1; lvl <= 2; lvl++) {
    if (mpe_simd_level_set(lvl) != lvl)
      continue;
    levels_run++;
    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
      const mpe_format *f = fmts[fi];
      ck_assert_ptr_nonnull(f);
      const int p = mpe_format_precision(f);
      const int eminb = mpe_format_emin(f) + 127;
      uint64_t s = ts_seed() + 101 * fi;
      for (int r = 0; r < 3; r++) {
        const mpe_round mode = r == 0 ? MPE_RNE : r == 1 ? MPE_RZ : MPE_RU;   /* RU: the other paths */
        mpe_round_opts o = { mode, 0, 0, 0, 0 };
        for (uint32_t E = 0; E < 256; E++) {
          /* bits dropped at this exponent (binary32 subnormals: E = 0 has emin 1) */
          int d = 24 - p + ((int)(E ? E : 1) < eminb ? eminb - (int)(E ? E : 1) : 0);
          for (int k = 0; k < 14; k++) {
            uint32_t m = (uint32_t)ts_rand64(&s) & 0x7fffffu;
            if (d <= 23) {
              const uint32_t one = 1u << d, half = one >> 1, low = one - 1;
              static const int lowsel[6] = { 0, 1, 2, 3, 4, 5 };
              if (k < 12) {
                uint32_t lb = 0;
                switch (lowsel[k % 6]) {
                case 0: lb = 0; break;
                case 1: lb = 1 & low; break;
                case 2: lb = half ? half - 1 : 0; break;
                case 3: lb = half; break;
                case 4: lb = (half + 1) & low; break;
                default: lb = low; break;
                }
                m = (m & ~low) | lb;
                m = k < 6 ? m & ~one : m | one;   /* the last kept bit even, odd */
                m &= 0x7fffffu;
              }
            }
            const uint32_t u = E << 23 | m | ((uint32_t)(k & 1) << 31);
            const size_t pos = (size_t)(ts_rand64(&s) % N);
            memset(x, 0, sizeof x);
            x[pos] = ts_u2f(u);
            mpe_simd_level_set(0);
            mpe_flags_clear(~0u);
            ck_assert_int_eq(mpe_round_f32(z, x, N, f, &o), MPE_OK);
            const unsigned fz = mpe_flags_get();
            for (int inplace = 0; inplace < 2; inplace++) {
              float *out = inplace ? w : y;
              if (inplace)
                memcpy(w, x, sizeof x);
              mpe_simd_level_set(lvl);
              mpe_flags_clear(~0u);
              ck_assert_int_eq(mpe_round_f32(out, inplace ? w : x, N, f, &o), MPE_OK);
              const unsigned fy = mpe_flags_get();
              for (size_t i = 0; i < N; i++)
                if (ts_f2u(out[i]) != ts_f2u(z[i]))
                  ck_abort_msg("level %d %s %s%s: x=%08x simd %08x ref %08x", lvl, mpe_format_name(f),
                               mpe_round_name(mode), inplace ? " in place" : "", ts_f2u(x[i]), ts_f2u(out[i]),
                               ts_f2u(z[i]));
              ck_assert_msg(fy == fz, "level %d %s %s%s: x=%08x flags %x, reference %x", lvl, mpe_format_name(f),
                            mpe_round_name(mode), inplace ? " in place" : "", u, fy, fz);
              calls++;
            }
          }
        }
      }
    }
  }
  mpe_simd_level_set(-1);
  fprintf(stderr, "quantum add: %ld calls, bits and flags match the reference on %ld level(s)\n", calls, levels_run);
  ck_assert_int_gt(levels_run, 0);
  mpe_format_free(c1);
  mpe_format_free(c2);
  mpe_format_free(c3);
  mpe_format_free(c4);
}
END_TEST

/* Large arrays (interleaved 4 KiB stretches): arrays of exact values with
   one lane that raises inexact only early and one underflowing lane placed
   in each stretch of a span, in the last span, in the whole groups after the
   spans and in the tail; out of place (streaming, destination aligned and
   not) and in place; the flags (the kernels skip the flag work once both are
   raised) and bits against the reference. */
START_TEST(test_large_flags)
{
  const size_t n = ((size_t)9 << 18) + 4096 + 64 * 3 + 13;   /* spans, whole groups, a tail */
  float *x = malloc(n * 4), *y = malloc((n + 8) * 4), *z = malloc(n * 4);
  const mpe_format *fmts[] = { mpe_format_of(MPE_E4M3), mpe_format_of(MPE_FP16), mpe_format_of(MPE_BF16),
                               mpe_format_of(MPE_E5M2) };
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  const size_t spans_end = (n - 3) / 4096 * 4096;   /* a prologue of up to 15 lanes may come first */
  const size_t where[] = { 5, 1024 + 70, 2048 + 3, 3072 + 1000, 4096 + 3 * 1024 + 1, spans_end - 4096 + 3 * 1024 + 63,
                           spans_end - 1, spans_end + 100, n - 20, n - 2 };
  long cases = 0;
  for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
    const mpe_format *f = fmts[fi];
    const float tinyv = (float)(mpe_format_min_subnormal(f) * 1.25);   /* inexact and tiny */
    const float inex = 1 + (float)ldexp(1.0, -mpe_format_precision(f) - 1) * 1.5f;   /* inexact, normal */
    for (int r = 0; r < 2; r++) {
      mpe_round_opts o = { r ? MPE_RZ : MPE_RNE, 0, 0, 0, 0 };
      /* the reference of the array without its tiny lane, once: rounding is
         elementwise, so each array below is this with one lane replaced */
      for (size_t i = 0; i < n; i++)
        x[i] = (float)((int)(i % 17) - 8) * 0.5f;
      x[1] = inex;
      mpe_simd_level_set(0);
      mpe_flags_clear(~0u);
      ck_assert_int_eq(mpe_round_f32(z, x, n, f, &o), MPE_OK);
      ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_INEXACT);
      float ztiny;
      mpe_flags_clear(~0u);
      ck_assert_int_eq(mpe_round_f32(&ztiny, &tinyv, 1, f, &o), MPE_OK);
      const unsigned fz = MPE_FLAG_INEXACT | mpe_flags_get();
      ck_assert_uint_eq(fz, MPE_FLAG_INEXACT | MPE_FLAG_UNDERFLOW);
      for (size_t wi = 0; wi < sizeof where / sizeof where[0]; wi++) {
        const size_t at = where[wi];
        const float x_at = x[at], z_at = z[at];
        x[at] = tinyv;
        z[at] = ztiny;
        for (int lvl = 1; lvl <= 2; lvl++) {
          if (mpe_simd_level_set(lvl) != lvl)
            continue;
          for (int k = 0; k < 3; k++) {   /* y aligned, y off by 2 lanes, in place */
            float *out = k == 2 ? y : y + 2 * k;
            const float *in = x;
            if (k == 2) {
              memcpy(y, x, n * 4);
              in = y;
            }
            mpe_flags_clear(~0u);
            ck_assert_int_eq(mpe_round_f32(out, in, n, f, &o), MPE_OK);
            ck_assert_msg(mpe_flags_get() == fz, "level %d %s %s k %d: underflowing lane at %zu: flags %x, reference %x",
                          lvl, mpe_format_name(f), mpe_round_name(o.round), k, at, mpe_flags_get(), fz);
            size_t i = 0;
            while (i < n && ts_f2u(out[i]) == ts_f2u(z[i]))
              i++;
            if (i < n)
              ck_abort_msg("level %d %s %s k %d: x[%zu]=%08x simd %08x ref %08x", lvl, mpe_format_name(f),
                           mpe_round_name(o.round), k, i, ts_f2u(x[i]), ts_f2u(out[i]), ts_f2u(z[i]));
            cases++;
          }
        }
        x[at] = x_at;
        z[at] = z_at;
      }
    }
  }
#ifdef _OPENMP
  omp_set_num_threads(omp_get_num_procs());
#endif
  mpe_simd_level_set(-1);
  fprintf(stderr, "large arrays: %ld arrays of %zu elements, flags and bits match the reference\n", cases, n);
  free(x); free(y); free(z);
}
END_TEST

/* same bits for 1 and 2 threads; in place equals out of place */
START_TEST(test_threads_and_aliasing)
{
  size_t n = (1u << 22) + 13;   /* large enough for the parallel and streaming paths */
  float *x = malloc(n * 4), *y1 = malloc(n * 4), *y2 = malloc(n * 4);
  fill_random(x, n, 1234);
  for (int r = 0; r < MPE_NROUND; r++) {
    mpe_round_opts o = { (mpe_round)r, 0, 0, 2024, 1ull << 40 };
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    ck_assert_int_eq(mpe_round_f32(y1, x, n, mpe_format_of(MPE_E4M3), &o), MPE_OK);
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    ck_assert_int_eq(mpe_round_f32(y2, x, n, mpe_format_of(MPE_E4M3), &o), MPE_OK);
    ck_assert_int_eq(memcmp(y1, y2, n * 4), 0);
    memcpy(y2, x, n * 4);
    ck_assert_int_eq(mpe_round_f32(y2, y2, n, mpe_format_of(MPE_E4M3), &o), MPE_OK);
    ck_assert_int_eq(memcmp(y1, y2, n * 4), 0);
  }
  /* binary64 arrays too */
  double *d = malloc(n * 8), *e1 = malloc(n * 8), *e2 = malloc(n * 8);
  for (size_t i = 0; i < n; i++)
    d[i] = (double)x[i] * (1 + 0x1p-30);
  mpe_round_opts o = { MPE_SR, 0, 0, 5, 0 };
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  mpe_round_f64(e1, d, n, mpe_format_of(MPE_BF16), &o);
#ifdef _OPENMP
  omp_set_num_threads(2);
#endif
  mpe_round_f64(e2, d, n, mpe_format_of(MPE_BF16), &o);
  ck_assert_int_eq(memcmp(e1, e2, n * 8), 0);
  mpe_round_f64(d, d, n, mpe_format_of(MPE_BF16), &o);
  ck_assert_int_eq(memcmp(e1, d, n * 8), 0);
  free(x); free(y1); free(y2); free(d); free(e1); free(e2);
}
END_TEST

/* the scalar stream after mpe_seed(s) is element i of the array with seed s, offset 0 */
START_TEST(test_scalar_vs_array_stream)
{
  enum { N = 5000 };
  static float x[N], y[N];
  fill_random(x, N, 99);
  for (int r = MPE_SR; r <= MPE_SR_EQ; r++) {
    mpe_round_opts o = { (mpe_round)r, 0, 0, 0xfeedULL, 0 };
    mpe_round_f32(y, x, N, mpe_format_of(MPE_FP16), &o);
    mpe_seed(0xfeedULL);
    for (size_t i = 0; i < N; i++) {
      uint16_t h = mpe_fp32_to_fp16(x[i], (mpe_round)r);
      float v = mpe_fp16_to_fp32(h);
      ck_assert_msg(ts_same_f64(v, y[i]), "element %zu: scalar %a array %a", i, v, y[i]);
    }
    mpe_round_f32(y, x, N, mpe_format_of(MPE_BF16), &o);
    mpe_seed(0xfeedULL);
    for (size_t i = 0; i < N; i++)
      ck_assert(ts_same_f64(mpe_bf16_to_fp32(mpe_fp32_to_bf16(x[i], (mpe_round)r)), y[i]));
    /* mpe_round_scalar with offset i */
    for (size_t i = 0; i < 200; i++) {
      mpe_round_opts oi = o;
      oi.offset = i;
      ck_assert(ts_same_f64(mpe_round_scalar(x[i], mpe_format_of(MPE_BF16), &oi), y[i]));
    }
  }
}
END_TEST

/* stochastic offsets near 2^64: element i uses word (offset + i) mod 2^64 on every path */
START_TEST(test_sr_offset_wrap)
{
  enum { N = 1000 };
  static float x[N], y[N];
  fill_random(x, N, 4242);
  const uint64_t offs[] = { UINT64_MAX - 37, UINT64_MAX - 500, (uint64_t)1 << 63, ((uint64_t)1 << 32) - 5 };
  for (int lvl = 2; lvl >= 0; lvl--)
  for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++)
    for (int r = MPE_SR; r <= MPE_SR_EQ; r++) {
      mpe_simd_level_set(lvl);
      mpe_round_opts o = { (mpe_round)r, 0, 0, 0xabcdefULL + k, offs[k] };
      ck_assert_int_eq(mpe_round_f32(y, x, N, mpe_format_of(MPE_BF16), &o), MPE_OK);
      for (size_t i = 0; i < N; i++) {
        mpe_round_opts oi = o;
        oi.offset = offs[k] + i;
        float v = mpe_round_scalar(x[i], mpe_format_of(MPE_BF16), &oi);
        ck_assert_msg(ts_same_f64(v, y[i]), "level %d offset %llu + %zu mode %d: scalar %a array %a",
                      lvl, (unsigned long long)offs[k], i, r, v, y[i]);
      }
    }
  mpe_simd_level_set(-1);
}
END_TEST

/* P(up) = distance for MPE_SR, 1/2 for MPE_SR_EQ; SR unbiased in the mean.
   Each count is checked against the binomial mean with a 5-sigma bound. */
START_TEST(test_sr_statistics)
{
  enum { N = 200000 };
  static float x[N], y[N];
  const double fracs[] = { 1.0 / 16, 0.25, 0.5, 0.7, 15.0 / 16, 1.0 / 1024 };
  for (size_t k = 0; k < sizeof fracs / sizeof fracs[0]; k++) {
    /* fp16 ulp at 1 is 2^-10; x = 1 + frac ulp, and its negative */
    for (int sgn = 0; sgn < 2; sgn++) {
      float v = (float)(1.0 + fracs[k] * 0x1p-10);
      if (sgn)
        v = -v;
      for (size_t i = 0; i < N; i++)
        x[i] = v;
      for (int r = MPE_SR; r <= MPE_SR_EQ; r++) {
        mpe_round_opts o = { (mpe_round)r, 0, 0, 31337 + k, 1000 * k };
        mpe_round_f32(y, x, N, mpe_format_of(MPE_FP16), &o);
        long up = 0;
        double sum = 0;
        for (size_t i = 0; i < N; i++) {
          up += fabsf(y[i]) > 1.0f;
          sum += y[i];
        }
        double p = r == MPE_SR ? fracs[k] : 0.5;
        double sigma = sqrt(N * p * (1 - p));
        ck_assert_msg(fabs(up - N * p) <= 5 * sigma + 1, "mode %d frac %g: %ld ups of %d, expected %g",
                      r, fracs[k], up, N, N * p);
        if (r == MPE_SR) {
          /* mean equals x within 5 sigma of the mean's standard error */
          double se = 0x1p-10 * sqrt(p * (1 - p) / N);
          ck_assert_msg(fabs(sum / N - v) <= 5 * se + 1e-12, "SR biased: mean %.12g vs %.12g", sum / N, v);
        }
      }
    }
  }
  /* exact inputs never move */
  for (size_t i = 0; i < N; i++)
    x[i] = 1.0f + (float)(i % 1024) * 0x1p-10f;
  mpe_round_opts o = { MPE_SR, 0, 0, 1, 0 };
  mpe_round_f32(y, x, N, mpe_format_of(MPE_FP16), &o);
  ck_assert_int_eq(memcmp(x, y, sizeof x), 0);
}
END_TEST

/* Random123's known-answer vectors for Philox4x32-10, through the public path:
   with seed k and offset 4c, element w of SR_EQ on 1+ulp/2 rounds up iff word w has its top bit. */
START_TEST(test_philox_kat)
{
  static const struct { uint64_t ctr; uint64_t key; uint32_t out[4]; } kat[] = {
    { 0, 0, { 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u } },
  };
  float x[4] = { 1 + 0x1p-11f, 1 + 0x1p-11f, 1 + 0x1p-11f, 1 + 0x1p-11f }, y[4];
  mpe_round_opts o = { MPE_SR_EQ, 0, 0, kat[0].key, kat[0].ctr * 4 };
  mpe_round_f32(y, x, 4, mpe_format_of(MPE_FP16), &o);
  for (int w = 0; w < 4; w++)
    ck_assert_int_eq(y[w] > 1.0f, (int)(kat[0].out[w] >> 31));
  /* MPE_SR at distance 1/2: up iff word < 2^31, the complement of SR_EQ's rule */
  o.round = MPE_SR;
  mpe_round_f32(y, x, 4, mpe_format_of(MPE_FP16), &o);
  for (int w = 0; w < 4; w++)
    ck_assert_int_eq(y[w] > 1.0f, kat[0].out[w] < 0x80000000u);
}
END_TEST

START_TEST(test_bad_input)
{
  float x[4] = { 1, 2, 3, 4 }, y[4] = { 7, 7, 7, 7 };
  double xd[2] = { 1, 2 }, yd[2] = { 7, 7 };
  const mpe_format *f = mpe_format_of(MPE_FP16);
  ck_assert_int_eq(mpe_round_f32(NULL, x, 4, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_round_f32(y, NULL, 4, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_round_f32(y, x, 4, NULL, NULL), MPE_EINVAL);
  /* a count no buffer can hold is refused, not read */
  ck_assert_int_eq(mpe_round_f32(y, x, SIZE_MAX, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_round_f32(y, x, (size_t)PTRDIFF_MAX / 4 + 1, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_round_f64(yd, xd, (size_t)PTRDIFF_MAX / 8 + 1, f, NULL), MPE_EINVAL);
  mpe_round_opts bad = { (mpe_round)8, 0, 0, 0, 0 };
  ck_assert_int_eq(mpe_round_f32(y, x, 4, f, &bad), MPE_EINVAL);
  ck_assert_int_eq(mpe_round_f64(yd, xd, 2, f, &bad), MPE_EINVAL);
  ck_assert_int_eq(mpe_round_f64(NULL, xd, 2, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_round_f64(yd, xd, 2, NULL, NULL), MPE_EINVAL);
  mpe_format *wide;
  ck_assert_int_eq(mpe_format_custom(&wide, 30, -100, 100), MPE_OK);
  ck_assert_int_eq(mpe_round_f32(y, x, 4, wide, NULL), MPE_EINVAL);   /* more bits than binary32 */
  ck_assert_int_eq(mpe_round_f64(yd, xd, 2, wide, NULL), MPE_OK);
  mpe_format_free(wide);
  for (int i = 0; i < 4; i++)
    ck_assert(y[i] == 7);
  ck_assert(yd[0] == 1 && yd[1] == 2);
  /* n = 0 with NULL pointers is fine */
  ck_assert_int_eq(mpe_round_f32(NULL, NULL, 0, f, NULL), MPE_OK);
  ck_assert_int_eq(mpe_round_f64(NULL, NULL, 0, f, NULL), MPE_OK);
  ck_assert(isnan(mpe_round_scalar(1.0, NULL, NULL)));
  /* NULL options are the defaults: RNE, keep subnormals, no saturation */
  float v = 65520.0f, w;
  ck_assert_int_eq(mpe_round_f32(&w, &v, 1, f, NULL), MPE_OK);
  ck_assert(isinf(w));
}
END_TEST

/* 16 threads make the first call of the process together (CPU detection and
   kernel choice happen inside it, once): no crash, and every thread gets the
   bits and flags one thread gets alone. Run first in its forked child, so the
   detection is fresh; ThreadSanitizer builds check the absence of races. */
enum { FT_THREADS = 16, FT_N = 4099 };
static pthread_barrier_t ft_barrier;
static float ft_x[FT_N], ft_y[FT_THREADS][FT_N];
static unsigned ft_flags[FT_THREADS];
static int ft_rc[FT_THREADS];

static void *ft_worker(void *arg)
{
  int t = (int)(intptr_t)arg;
  mpe_round_opts o = { MPE_SR, 0, 0, 77, 5 };
  mpe_flags_clear(~0u);
  pthread_barrier_wait(&ft_barrier);
  ft_rc[t] = mpe_round_f32(ft_y[t], ft_x, FT_N, mpe_format_of(t % 2 ? MPE_BF16 : MPE_FP16), &o);
  ft_flags[t] = mpe_flags_get();
  return NULL;
}

START_TEST(test_first_call_threads)
{
  fill_random(ft_x, FT_N, ts_seed() + 11);
  pthread_t th[FT_THREADS];
  ck_assert_int_eq(pthread_barrier_init(&ft_barrier, NULL, FT_THREADS), 0);
  for (int t = 0; t < FT_THREADS; t++)
    ck_assert_int_eq(pthread_create(&th[t], NULL, ft_worker, (void *)(intptr_t)t), 0);
  for (int t = 0; t < FT_THREADS; t++)
    ck_assert_int_eq(pthread_join(th[t], NULL), 0);
  pthread_barrier_destroy(&ft_barrier);
  float *ref = malloc(FT_N * 4);
  for (int t = 0; t < FT_THREADS; t++) {
    mpe_round_opts o = { MPE_SR, 0, 0, 77, 5 };
    mpe_flags_clear(~0u);
    ck_assert_int_eq(ft_rc[t], MPE_OK);
    ck_assert_int_eq(mpe_round_f32(ref, ft_x, FT_N, mpe_format_of(t % 2 ? MPE_BF16 : MPE_FP16), &o), MPE_OK);
    ck_assert_int_eq(memcmp(ref, ft_y[t], FT_N * 4), 0);
    ck_assert_uint_eq(ft_flags[t], mpe_flags_get());
  }
  free(ref);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("round");
  TCase *tc = tcase_create("round");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_first_call_threads);
  tcase_add_test(tc, test_simd_vs_reference);
  tcase_add_test(tc, test_mixed_vectors);
  tcase_add_test(tc, test_lengths_alignment);
  tcase_add_test(tc, test_edge_lanes);
  tcase_add_test(tc, test_streaming);
  tcase_add_test(tc, test_quantum_add);
  tcase_add_test(tc, test_large_flags);
  tcase_add_test(tc, test_threads_and_aliasing);
  tcase_add_test(tc, test_scalar_vs_array_stream);
  tcase_add_test(tc, test_sr_statistics);
  tcase_add_test(tc, test_sr_offset_wrap);
  tcase_add_test(tc, test_philox_kat);
  tcase_add_test(tc, test_bad_input);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
