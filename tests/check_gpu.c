/* The GPU path. Built twice:
   tests/check_gpu         what needs no device: the return codes of every
                           mpe_gpu_* (MPE_EUNSUP without CUDA, MPE_EINVAL then
                           MPE_EDEVICE with CUDA and no device), the host-compiled
                           arithmetic of the kernels (round_dev.h) and of the
                           epilogue against the CPU, the K-order probes on the CPU
                           models;
   tests/check_gpu_device  (MPE_GPU_DEVICE_TESTS) CPU against GPU; exits 77
                           (skipped) without a device. */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"
#include "mpei.h"
#include "round_dev.h"
#include "half_rne.h"
#include "korder.h"

static const mpe_type ins[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2 };
#define NINS 5

#ifndef MPE_GPU_DEVICE_TESTS
static int have_device(void)
{
  int n = 0;
  return mpe_gpu_device_count(&n) == MPE_OK && n > 0;
}

/* ------------------------------------------------------------------ pure helpers */

START_TEST(test_names)
{
  ck_assert_str_eq(mpe_gpu_path_name(MPE_GPU_PATH_MMA), "mma");
  ck_assert_str_eq(mpe_gpu_path_name(MPE_GPU_PATH_CUBLASLT), "cublaslt");
  ck_assert_str_eq(mpe_gpu_path_name(MPE_GPU_PATH_GEMMEX), "gemmex");
  ck_assert_ptr_null(mpe_gpu_path_name((mpe_gpu_path)3));
  ck_assert_ptr_null(mpe_gpu_path_name((mpe_gpu_path)-1));
  static const struct { int ma, mi; const char *m; } arch[] = {
    { 7, 0, "v100" }, { 7, 5, "t4" }, { 8, 0, "a100" }, { 8, 6, "a100" }, { 8, 9, "ada" },
    { 9, 0, "h100" }, { 10, 0, "b200" }, { 12, 0, "rtx-pro-6000" }, { 6, 1, NULL }, { 7, 2, NULL },
    { 9, 1, NULL }, { 11, 0, NULL }, { -1, 0, NULL },
  };
  for (size_t i = 0; i < sizeof arch / sizeof arch[0]; i++) {
    const char *m = mpe_gpu_arch_model(arch[i].ma, arch[i].mi);
    if (arch[i].m) {
      ck_assert_ptr_nonnull(m);
      ck_assert_str_eq(m, arch[i].m);
      /* every name is a CPU model with an fp16 instruction, and an mma.sync one */
      ck_assert_ptr_nonnull(mpe_tc_model_get(m, MPE_FP16));
      char full[32];
      snprintf(full, sizeof full, "%s:mma.sync", m);
      ck_assert_ptr_nonnull(mpe_tc_model_get(full, MPE_FP16));
    } else {
      ck_assert_ptr_null(m);
    }
  }
}
END_TEST

/* ------------------------------------------------------------------ codes without a device */

/* Every mpe_gpu_* with valid arguments returns `want` and writes nothing. */
static void expect_all(int want)
{
  const mpe_tc_model *a100 = mpe_tc_model_get("a100", MPE_FP16);
  ck_assert_ptr_nonnull(a100);
  int count = -5;
  ck_assert_int_eq(mpe_gpu_device_count(&count), want);
  ck_assert_int_eq(count, -5);
  mpe_gpu_info info;
  memset(&info, 0xab, sizeof info);
  ck_assert_int_eq(mpe_gpu_info_get(0, &info), want);
  ck_assert_uint_eq(((unsigned char *)&info)[0], 0xab);
  ck_assert_int_eq(mpe_gpu_device_set(0), want);
  const mpe_tc_model *m = (const mpe_tc_model *)&count;
  for (int t = 0; t < NINS; t++) {
    ck_assert_int_eq(mpe_gpu_model(&m, ins[t]), want);
    ck_assert_ptr_eq(m, (const mpe_tc_model *)&count);
  }
  float x[8] = { 1.1f, 2.2f, 3.3f, -4.4f, 5.5f, 6.6f, 7.7f, 8.8f }, y[8];
  for (int i = 0; i < 8; i++)
    y[i] = -1.0f;
  for (int r = 0; r < MPE_NROUND; r++) {
    mpe_round_opts o = { (mpe_round)r, 0, 0, 1, 0 };
    ck_assert_int_eq(mpe_gpu_round_f32(y, x, 8, mpe_format_of(MPE_FP16), &o), want);
  }
  ck_assert_int_eq(mpe_gpu_round_f32(y, x, 0, mpe_format_of(MPE_FP16), NULL), want);
  for (int i = 0; i < 8; i++)
    ck_assert(y[i] == -1.0f);
  float A[16 * 16], B[16 * 8], C[16 * 8], D[16 * 8];
  for (int i = 0; i < 256; i++)
    A[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < 128; i++) {
    B[i] = (float)(i % 5) * 0.5f;
    C[i] = 1.0f;
    D[i] = -7.0f;
  }
  ck_assert_int_eq(mpe_gpu_mma(a100, 16, 8, 16, A, MPE_FP32, 16, B, MPE_FP32, 8, C, 8, D, MPE_FP32, 8), want);
  ck_assert_int_eq(mpe_gpu_mma(NULL, 16, 8, 16, A, MPE_FP32, 16, B, MPE_FP32, 8, C, 8, D, MPE_FP32, 8),
                   want == MPE_EUNSUP ? MPE_EUNSUP : MPE_EINVAL);   /* no model, no packed type */
  for (int i = 0; i < 128; i++)
    ck_assert(D[i] == -7.0f);
  for (int p = 0; p < MPE_GPU_NPATHS; p++) {
    ck_assert_int_eq(mpe_gpu_gemm((mpe_gpu_path)p, a100, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 16, 8, 16,
                                  1.0f, A, MPE_FP32, 16, B, MPE_FP32, 8, 0.5f, D, MPE_FP32, 8), want);
    ck_assert_int_eq(mpe_gpu_gemm((mpe_gpu_path)p, NULL, MPE_COL_MAJOR, MPE_TRANS, MPE_NO_TRANS, 0, 0, 0,
                                  1.0f, NULL, MPE_FP16, 1, NULL, MPE_FP16, 1, 0.0f, NULL, MPE_FP32, 1), want);
  }
  for (int i = 0; i < 128; i++)
    ck_assert(D[i] == -7.0f);
  /* the integer tensor cores (mpe_tc_int(3)) on every path */
  static const mpe_type itypes[] = { MPE_INT8, MPE_UINT8, MPE_INT4, MPE_UINT4 };
  for (int t = 0; t < 4; t++) {
    m = (const mpe_tc_model *)&count;
    ck_assert_int_eq(mpe_gpu_model(&m, itypes[t]), want);
    ck_assert_ptr_eq(m, (const mpe_tc_model *)&count);
  }
  const mpe_tc_model *i8 = mpe_tc_model_get("a100", MPE_INT8);
  int8_t IA[16 * 32], IB[32 * 8];
  int32_t IC[16 * 8], ID[16 * 8];
  for (int i = 0; i < 16 * 32; i++)
    IA[i] = (int8_t)(i % 11 - 5);
  for (int i = 0; i < 32 * 8; i++)
    IB[i] = (int8_t)(i % 7 - 3);
  for (int i = 0; i < 128; i++)
    IC[i] = i, ID[i] = -9;
  ck_assert_int_eq(mpe_gpu_mma(i8, 16, 8, 32, IA, MPE_INT8, 32, IB, MPE_INT8, 8, IC, 8, ID, MPE_INT32, 8), want);
  ck_assert_int_eq(mpe_gpu_mma(NULL, 16, 8, 32, IA, MPE_INT8, 32, IB, MPE_INT8, 8, IC, 8, ID, MPE_INT32, 8), want);
  for (int p = 0; p < MPE_GPU_NPATHS; p++)
    ck_assert_int_eq(mpe_gpu_gemm((mpe_gpu_path)p, i8, MPE_COL_MAJOR, MPE_TRANS, MPE_NO_TRANS, 16, 8, 32, 2.0f, IA,
                                  MPE_INT8, 32, IB, MPE_UINT8, 32, -1.0f, ID, MPE_INT32, 16), want);
  for (int i = 0; i < 128; i++)
    ck_assert_int_eq(ID[i], -9);
}

START_TEST(test_codes_without_device)
{
  if (MPE_HAVE_CUDA && have_device()) {
    printf("check_gpu: a device is present; the no-device codes are not testable here\n");
    return;
  }
  expect_all(MPE_HAVE_CUDA ? MPE_EDEVICE : MPE_EUNSUP);
}
END_TEST

#if MPE_HAVE_CUDA
MPE_API int mpei_cublas_load(const char **why);   /* gpu/cuda_lazy.h */
MPE_API int mpei_cusolver_load(const char **why);

static int mapped(const char *lib)
{
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (f && fgets(line, sizeof line, f))
    found |= strstr(line, lib) != NULL;
  if (f)
    fclose(f);
  return found;
}
#endif

/* cuBLAS, cuBLASLt and cuSOLVER are not mapped until a GPU call needs them (linking them
   would cost every program ~210 MB of resident memory); then the loader finds
   them in the toolkit configure found and resolves every function. */
START_TEST(test_cublas_lazy)
{
#if MPE_HAVE_CUDA
  const char *fork = getenv("CK_FORK");
  if (!(fork && !strcmp(fork, "no")))   /* a fresh process: nothing has loaded them yet */
    ck_assert_msg(!mapped("libcublasLt.so") && !mapped("libcublas.so"), "cuBLAS mapped at startup");
  const char *why = NULL;
  ck_assert_msg(mpei_cublas_load(&why) == MPE_OK, "cuBLAS not loadable: %s", why);
  ck_assert_str_eq(why, "");
  ck_assert(mapped("libcublasLt.so") && mapped("libcublas.so"));
  ck_assert_int_eq(mpei_cublas_load(NULL), MPE_OK);   /* once */
  ck_assert_msg(!mapped("libcusolver.so"), "cuSOLVER mapped before use");
  ck_assert_msg(mpei_cusolver_load(&why) == MPE_OK, "cuSOLVER not loadable: %s", why);
  ck_assert(mapped("libcusolver.so"));
#else
  printf("check_gpu: built without CUDA, no cuBLAS to load\n");
#endif
}
END_TEST

/* Bad arguments: MPE_EINVAL before any device check (with CUDA); without CUDA
   every call answers MPE_EUNSUP whatever its arguments. */
START_TEST(test_argument_errors)
{
  int inv = MPE_HAVE_CUDA ? MPE_EINVAL : MPE_EUNSUP;
  const mpe_tc_model *a100 = mpe_tc_model_get("a100", MPE_FP16);
  float x[4] = { 1, 2, 3, 4 }, y[4] = { 9, 9, 9, 9 };
  ck_assert_int_eq(mpe_gpu_device_count(NULL), inv);
  mpe_gpu_info info;
  ck_assert_int_eq(mpe_gpu_info_get(-1, &info), inv);
  ck_assert_int_eq(mpe_gpu_info_get(0, NULL), inv);
  ck_assert_int_eq(mpe_gpu_device_set(-1), inv);
  const mpe_tc_model *m = NULL;
  ck_assert_int_eq(mpe_gpu_model(NULL, MPE_FP16), inv);
  ck_assert_int_eq(mpe_gpu_model(&m, MPE_FP32), inv);
  ck_assert_int_eq(mpe_gpu_model(&m, (mpe_type)99), inv);
  ck_assert_ptr_null(m);
  mpe_round_opts bad = { (mpe_round)MPE_NROUND, 0, 0, 0, 0 };
  ck_assert_int_eq(mpe_gpu_round_f32(y, x, 4, NULL, NULL), inv);
  ck_assert_int_eq(mpe_gpu_round_f32(y, x, 4, mpe_format_of(MPE_FP16), &bad), inv);
  ck_assert_int_eq(mpe_gpu_round_f32(NULL, x, 4, mpe_format_of(MPE_FP16), NULL), inv);
  ck_assert_int_eq(mpe_gpu_round_f32(y, NULL, 4, mpe_format_of(MPE_FP16), NULL), inv);
  ck_assert_int_eq(mpe_gpu_round_f32(y, x, 4, mpe_format_of(MPE_FP64), NULL), inv);   /* p > 24 */
  for (int i = 0; i < 4; i++)
    ck_assert(y[i] == 9.0f);
  float A[64], B[64], C[64], D[64];
  for (int i = 0; i < 64; i++)
    A[i] = B[i] = C[i] = 1.0f, D[i] = 5.0f;
  ck_assert_int_eq(mpe_gpu_mma(a100, -1, 4, 4, A, MPE_FP32, 4, B, MPE_FP32, 4, C, 4, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(a100, 4, 4, 4, A, MPE_BF16, 4, B, MPE_FP32, 4, C, 4, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(a100, 4, 4, 4, A, MPE_FP32, 3, B, MPE_FP32, 4, C, 4, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(a100, 4, 4, 4, A, MPE_FP32, 4, B, MPE_FP32, 4, C, 4, D, MPE_BF16, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(a100, 4, 4, 4, NULL, MPE_FP32, 4, B, MPE_FP32, 4, C, 4, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(a100, 4, 4, 4, A, MPE_FP32, 4, B, MPE_FP32, 4, C, 4, NULL, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(NULL, 4, 4, 4, A, MPE_FP32, 4, B, MPE_FP32, 4, C, 4, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm((mpe_gpu_path)3, a100, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4,
                                1, A, MPE_FP32, 4, B, MPE_FP32, 4, 0, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, a100, (mpe_layout)2, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4,
                                1, A, MPE_FP32, 4, B, MPE_FP32, 4, 0, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, a100, MPE_ROW_MAJOR, (mpe_trans)5, MPE_NO_TRANS, 4, 4, 4,
                                1, A, MPE_FP32, 4, B, MPE_FP32, 4, 0, D, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_CUBLASLT, a100, MPE_COL_MAJOR, MPE_TRANS, MPE_NO_TRANS, 8, 4, 4,
                                1, A, MPE_FP32, 3, B, MPE_FP32, 4, 0, D, MPE_FP32, 8), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_GEMMEX, a100, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4,
                                1, A, MPE_FP32, 4, B, MPE_FP32, 4, 0, D, MPE_E4M3, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, a100, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4,
                                1, A, MPE_FP32, 4, B, MPE_FP32, 4, 0, NULL, MPE_FP32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, NULL, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4,
                                1, A, MPE_FP32, 4, B, MPE_FP32, 4, 0, D, MPE_FP32, 4), inv);
  for (int i = 0; i < 64; i++)
    ck_assert(D[i] == 5.0f);
  /* integer calls: mpe_mma/mpe_gemm's integer rules (emu/tc_int.c), checked
     before the device: MPE_EINVAL, and MPE_EUNSUP for a well-formed type
     combination no integer model computes (as on the CPU) */
  const mpe_tc_model *i8 = mpe_tc_model_get("a100", MPE_INT8), *i4 = mpe_tc_model_get("a100", MPE_INT4);
  int8_t IA[16] = { 0 }, IB[16] = { 0 };
  int32_t IC[16] = { 0 }, ID[16];
  for (int i = 0; i < 16; i++)
    ID[i] = 77;
  int uns = MPE_EUNSUP;
  ck_assert_int_eq(mpe_gpu_mma(i8, -1, 4, 4, IA, MPE_INT8, 4, IB, MPE_INT8, 4, IC, 4, ID, MPE_INT32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(i8, 4, 4, 4, IA, MPE_INT8, 3, IB, MPE_INT8, 4, IC, 4, ID, MPE_INT32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(i8, 4, 4, 4, IA, MPE_INT8, 4, IB, MPE_INT8, 4, IC, 4, NULL, MPE_INT32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(i8, 4, 4, 4, IA, (mpe_type)77, 4, IB, MPE_INT8, 4, IC, 4, ID, MPE_INT32, 4), inv);
  ck_assert_int_eq(mpe_gpu_mma(i4, 4, 4, 4, IA, MPE_INT8, 4, IB, MPE_INT8, 4, IC, 4, ID, MPE_INT32, 4), uns);
  ck_assert_int_eq(mpe_gpu_mma(i8, 4, 4, 4, IA, MPE_INT8, 4, IB, MPE_INT8, 4, IC, 4, ID, MPE_FP32, 4), uns);
  ck_assert_int_eq(mpe_gpu_mma(i8, 4, 4, 4, A, MPE_FP32, 4, B, MPE_FP32, 4, IC, 4, ID, MPE_INT32, 4), uns);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4, NAN, IA,
                                MPE_INT8, 4, IB, MPE_INT8, 4, 0, ID, MPE_INT32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4, 1, IA,
                                MPE_INT8, 4, IB, MPE_INT8, 4, 0, NULL, MPE_INT32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_CUBLASLT, i8, (mpe_layout)7, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4, 1,
                                IA, MPE_INT8, 4, IB, MPE_INT8, 4, 0, ID, MPE_INT32, 4), inv);
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4, 0.5f, IA,
                                MPE_INT8, 4, IB, MPE_INT8, 4, 0, ID, MPE_INT32, 4), uns);   /* alpha not an integer */
  ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, a100, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 4, 4, 4, 1, A,
                                MPE_FP32, 4, B, MPE_FP32, 4, 0, ID, MPE_INT32, 4), uns);    /* float model, int C */
  for (int i = 0; i < 16; i++)
    ck_assert_int_eq(ID[i], 77);
}
END_TEST

/* ------------------------------------------------------------------ kernel arithmetic on the host */

static const mpe_format *fmt_of(int i, mpe_format **custom)
{
  if (i < 6)
    return mpe_format_of((mpe_type)(MPE_FP32 + i));    /* fp32, tf32, fp16, bf16, e4m3, e5m2 */
  return custom[i - 6];
}

/* round_dev.h compiled by gcc, element by element, against mpe_round_f32 on
   whole arrays (every SIMD level), flags included. */
START_TEST(test_round_dev_host)
{
  mpe_format *custom[3];
  ck_assert_int_eq(mpe_format_custom(&custom[0], 12, -200, 300), MPE_OK);   /* emin below binary32's */
  ck_assert_int_eq(mpe_format_custom(&custom[1], 5, -3, 4), MPE_OK);
  ck_assert_int_eq(mpe_format_custom(&custom[2], 24, -140, 100), MPE_OK);
  uint64_t st = ts_seed();
  enum { N = 4096 };
  static float x[N], y[N];
  for (int i = 0; i < N; i++) {
    uint32_t u = (uint32_t)ts_rand64(&st);
    if (i % 4 == 1)
      u = (u & 0x807fffffu) | ((uint32_t)(100 + ts_rand64(&st) % 60) << 23);
    if (i % 8 == 3)
      u &= 0x80ffffffu;        /* subnormals and tiny normals */
    x[i] = ts_u2f(u);
  }
  x[0] = INFINITY; x[1] = -INFINITY; x[2] = NAN; x[3] = ts_u2f(0xff800001u); x[4] = 0.0f; x[5] = -0.0f;
  x[6] = 65520.0f; x[7] = 464.0f; x[8] = 0x1p-25f; x[9] = -0x1p-149f;
  long checked = 0;
  for (int lvl = 0; lvl <= 2; lvl++) {
    mpe_simd_level_set(lvl);
    for (int fi = 0; fi < 9; fi++)
      for (int r = 0; r < MPE_NROUND; r++)
        for (int opt = 0; opt < 4; opt++) {
          const mpe_format *f = fmt_of(fi, custom);
          mpe_round_opts o = { (mpe_round)r, opt & 1, opt >> 1, 0x1234 + (uint64_t)r, 4093 };
          mpe_flags_clear(~0u);
          ck_assert_int_eq(mpe_round_f32(y, x, N, f, &o), MPE_OK);
          unsigned want_flags = mpe_flags_test_clear(~0u);
          mpei_gpu_plan pl;
          mpei_gpu_plan_make(&pl, f, &o);
          unsigned fl = 0;
          for (int i = 0; i < N; i++) {
            uint32_t rnd = (r == MPE_SR || r == MPE_SR_EQ) ? mpei_gpu_sr_word(o.seed, o.offset + i) : 0;
            uint32_t g = mpei_gpu_round_bits(ts_f2u(x[i]), &pl, rnd, &fl);
            if (g != ts_f2u(y[i]))
              ck_abort_msg("level %d format %s mode %s opt %d: x=%a (%08x) cpu %08x gpu-code %08x", lvl,
                           mpe_format_name(f), mpe_round_name((mpe_round)r), opt, x[i], ts_f2u(x[i]),
                           ts_f2u(y[i]), g);
            checked++;
          }
          ck_assert_uint_eq(fl, want_flags);
        }
  }
  mpe_simd_level_set(-1);
  /* SR far below the quantum (d > 40): binary16 of 2^-50 goes up with
     probability 2^-50 / 2^-24, i.e. when the word is below 2^32 * 2^-26 = 64
     (the threshold once came from d clamped to 40: 2^15) */
  {
    mpe_round_opts o = { MPE_SR, 0, 0, 0, 0 };
    mpei_gpu_plan pl;
    mpei_gpu_plan_make(&pl, mpe_format_of(MPE_FP16), &o);
    unsigned fl = 0;
    const uint32_t minsub = ts_f2u(0x1p-24f), tiny = ts_f2u(0x1p-50f);
    ck_assert_uint_eq(mpei_gpu_round_bits(tiny, &pl, 63, &fl), minsub);
    ck_assert_uint_eq(mpei_gpu_round_bits(tiny, &pl, 64, &fl), 0);
    ck_assert_uint_eq(mpei_gpu_round_bits(tiny, &pl, 32767, &fl), 0);
    ck_assert_uint_eq(mpei_gpu_round_bits(tiny | 0x80000000u, &pl, 63, &fl), minsub | 0x80000000u);
  }
  for (int i = 0; i < 3; i++)
    mpe_format_free(custom[i]);
  ck_assert_int_eq(checked, 3L * 9 * MPE_NROUND * 4 * N);
}
END_TEST

/* The stochastic stream of the kernels is emu/philox.c's: compare with the
   CPU's SR results on a value whose rounding direction reveals the word. */
START_TEST(test_philox_word)
{
  /* Known answer of Philox4x32-10 (Random123 test vector: counter 0, key 0). */
  ck_assert_uint_eq(mpei_gpu_sr_word(0, 0), 0x6627e8d5u);
  ck_assert_uint_eq(mpei_gpu_sr_word(0, 1), 0xe169c58du);
  ck_assert_uint_eq(mpei_gpu_sr_word(0, 2), 0xbc57ac4cu);
  ck_assert_uint_eq(mpei_gpu_sr_word(0, 3), 0x9b00dbd8u);
}
END_TEST

/* The epilogue of the MMA and cuBLASLt paths is mpe_gemm's own, one
   definition in emu/tc_mma.c, called by gpu_host.c on a C of either layout
   (element (i, j) at i*crs + j*ccs). Here: acc from mpe_gemm(alpha=1, beta=0),
   then that epilogue on a row-major and a column-major padded C, against
   mpe_gemm with alpha, beta and C in the same layout (which walks a
   column-major C as the transposed row-major problem, and a binary32 C through
   the instruction set's row kernel). */
MPE_API void mpei_tc_epilogue_strided(const float *acc, int M, int N, float alpha, float beta, int use_ab,
                                      void *C, mpe_type ctype, long crs, long ccs);   /* emu/tc_iface.h */

START_TEST(test_epilogue_host)
{
  uint64_t st = ts_seed() + 7;
  const mpe_tc_model *h100 = mpe_tc_model_get("h100", MPE_FP16);
  ck_assert_ptr_nonnull(h100);
  enum { M = 9, N = 7, K = 33, LDC = 11, CS = LDC * (M > N ? M : N) };
  float A[M * K], B[K * N], C0[CS], acc[M * N], want[CS], got[CS];
  uint16_t C16[CS], acc16[M * N], want16[CS], got16[CS];
  float v[M * N];
  static const float ab[][2] = { { 1, 0 }, { 0.75f, 0 }, { 1, 1 }, { -2.5f, 0.125f }, { 0, 3 },
                                 { 0, 0 }, { 1e30f, 1e30f }, { 3.0f, -1.0f } };
  long compared = 0;
  for (int rep = 0; rep < 20; rep++) {
    for (int i = 0; i < M * K; i++)
      A[i] = (float)ldexp((double)(int32_t)(ts_rand64(&st) >> 40) / 8388608.0, (int)(ts_rand64(&st) % 9) - 4);
    for (int i = 0; i < K * N; i++)
      B[i] = (float)ldexp((double)(int32_t)(ts_rand64(&st) >> 40) / 8388608.0, (int)(ts_rand64(&st) % 9) - 4);
    for (int i = 0; i < CS; i++) {
      C0[i] = (float)((double)(int32_t)(ts_rand64(&st) >> 32) / 2147483648.0 * 50);
      C16[i] = mpe_fp32_to_fp16(C0[i], MPE_RNE);
    }
    for (int c16 = 0; c16 < 2; c16++) {
      mpe_type ct = c16 ? MPE_FP16 : MPE_FP32;
      ck_assert_int_eq(mpe_gemm(h100, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, A, MPE_FP32, K,
                                B, MPE_FP32, N, 0.0f, c16 ? (void *)acc16 : (void *)acc, ct, N), MPE_OK);
      for (int i = 0; i < M * N; i++)
        v[i] = c16 ? mpe_fp16_to_fp32(acc16[i]) : acc[i];
      for (int col = 0; col < 2; col++)
        for (size_t t = 0; t < sizeof ab / sizeof ab[0]; t++)
          for (int kk = 0; kk < 2; kk++) {
            int k = kk ? K : 0;
            float alpha = ab[t][0], beta = ab[t][1];
            memcpy(want, C0, sizeof want);
            memcpy(got, C0, sizeof got);
            memcpy(want16, C16, sizeof want16);
            memcpy(got16, C16, sizeof got16);
            void *w = c16 ? (void *)want16 : (void *)want, *g = c16 ? (void *)got16 : (void *)got;
            /* column-major: A (m x k row-major, ld K) is the column-major k x m array, used transposed */
            ck_assert_int_eq(mpe_gemm(h100, col ? MPE_COL_MAJOR : MPE_ROW_MAJOR, col ? MPE_TRANS : MPE_NO_TRANS,
                                      col ? MPE_TRANS : MPE_NO_TRANS, M, N, k, alpha, A, MPE_FP32, K, B, MPE_FP32,
                                      N, beta, w, ct, LDC), MPE_OK);
            int use_ab = k > 0 && alpha != 0.0f;
            mpei_tc_epilogue_strided(v, M, N, alpha, beta, use_ab, g, ct, col ? 1 : LDC, col ? LDC : 1);
            for (int i = 0; i < CS; i++) {
              if (c16)
                ck_assert_msg(want16[i] == got16[i], "fp16 C %s: alpha %g beta %g k %d [%d]: %04x vs %04x",
                              col ? "col" : "row", alpha, beta, k, i, want16[i], got16[i]);
              else
                ck_assert_msg(ts_f2u(want[i]) == ts_f2u(got[i]), "C %s: alpha %g beta %g k %d [%d]: %a vs %a",
                              col ? "col" : "row", alpha, beta, k, i, want[i], got[i]);
              compared++;
            }
          }
    }
  }
  ck_assert_int_eq(compared, 20L * 2 * 2 * (long)(sizeof ab / sizeof ab[0]) * 2 * CS);
}
END_TEST

/* The binary16 conversion of cublasGemmEx's alpha and beta, over every binary32 pattern with a
   stride, against the library's conversion. */
START_TEST(test_f16_rne)
{
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4093) {
    float x = ts_u2f((uint32_t)u);
    uint16_t want = isnan(x) ? 0x7fff : mpe_fp32_to_fp16(x, MPE_RNE);
    ck_assert_msg(mpei_gpu_f32_to_f16_rne(x) == want, "%08x", (unsigned)u);
  }
  mpe_flags_clear(~0u);
}
END_TEST

/* ------------------------------------------------------------------ K-order probes on the CPU */

static int cpu_gemm(void *ctx, int m, int n, int k, const float *A, const float *B, float *C)
{
  return mpe_gemm((const mpe_tc_model *)ctx, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k, 1.0f, A,
                  MPE_FP32, k, B, MPE_FP32, n, 0.0f, C, MPE_FP32, n);
}

/* A backend that sums K in two halves, upper half first: not ascending. */
static int reversed_halves(void *ctx, int m, int n, int k, const float *A, const float *B, float *C)
{
  const mpe_tc_model *md = ctx;
  int h = k / 2;
  float *lo = malloc(sizeof(float) * (size_t)m * n);
  if (!lo)
    return MPE_ENOMEM;
  /* upper half into C, then the lower half with C as the accumulator: D = A_lo B_lo + C */
  int r = mpe_gemm(md, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k - h, 1.0f, A + h, MPE_FP32, k,
                   B + (size_t)h * n, MPE_FP32, n, 0.0f, lo, MPE_FP32, n);
  if (!r)
    r = mpe_mma(md, m, n, h, A, MPE_FP32, k, B, MPE_FP32, n, lo, n, C, MPE_FP32, n);
  free(lo);
  return r;
}

/* A backend with no intermediate rounding: binary64 sums are exact here. */
static int exact_sum(void *ctx, int m, int n, int k, const float *A, const float *B, float *C)
{
  (void)ctx;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < k; l++)
        s += (double)A[(size_t)i * k + l] * B[(size_t)l * n + j];
      C[(size_t)i * n + j] = (float)s;
    }
  return MPE_OK;
}

START_TEST(test_korder_cpu)
{
  static const struct { const char *model; mpe_type in; int verdict, block; } cases[] = {
    { "v100", MPE_FP16, MPEK_ASCENDING, 4 },  { "a100", MPE_FP16, MPEK_ASCENDING, 8 },
    { "a100", MPE_BF16, MPEK_ASCENDING, 8 },  { "a100", MPE_TF32, MPEK_ASCENDING, 4 },
    { "h100", MPE_FP16, MPEK_ASCENDING, 16 }, { "h100", MPE_TF32, MPEK_ASCENDING, 8 },
    { "ada", MPE_E4M3, MPEK_ASCENDING, 16 },  { "h100", MPE_E5M2, MPEK_ASCENDING, 32 },
    { "fma-chain", MPE_FP16, MPEK_ASCENDING, 1 },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const mpe_tc_model *md = mpe_tc_model_get(cases[i].model, cases[i].in);
    ck_assert_ptr_nonnull(md);
    mpek_result r;
    char line[256];
    ck_assert_int_eq(mpek_probe(cpu_gemm, (void *)md, cases[i].in, 64, 2, 48, &r), MPE_OK);
    mpek_describe(&r, line, sizeof line);
    ck_assert_msg(r.verdict == cases[i].verdict && (cases[i].verdict != MPEK_ASCENDING || r.block == cases[i].block),
                  "%s %s: %s", cases[i].model, mpe_type_name(cases[i].in), line);
    ck_assert_int_eq(r.probes, 47L * 46);
  }
  mpek_result r;
  ck_assert_int_eq(mpek_probe(exact_sum, NULL, MPE_FP16, 32, 1, 20, &r), MPE_OK);
  ck_assert_int_eq(r.verdict, MPEK_EXACT);
  /* K shorter than one block */
  ck_assert_int_eq(mpek_probe(cpu_gemm, (void *)mpe_tc_model_get("h100", MPE_FP16), MPE_FP16, 16, 1, 12, &r), MPE_OK);
  ck_assert_int_eq(r.verdict, MPEK_ONE_BLOCK);
  /* a split-K order is seen as not ascending */
  ck_assert_int_eq(mpek_probe(reversed_halves, (void *)mpe_tc_model_get("a100", MPE_FP16), MPE_FP16, 64, 1, 32, &r),
                   MPE_OK);
  ck_assert_int_eq(r.verdict, MPEK_OTHER);
  ck_assert_int_eq(mpek_probe(cpu_gemm, NULL, MPE_FP16, 16, 1, 3, &r), MPE_EINVAL);
}
END_TEST

#endif

#ifdef MPE_GPU_DEVICE_TESTS
/* ------------------------------------------------------------------ CPU against GPU (device) */

START_TEST(test_dev_round)
{
  uint64_t st = ts_seed() + 11;
  size_t n = 300001;
  float *x = malloc(n * 4), *yc = malloc(n * 4), *yg = malloc(n * 4);
  ck_assert(x && yc && yg);
  for (size_t i = 0; i < n; i++)
    x[i] = ts_u2f((uint32_t)ts_rand64(&st));
  for (int t = MPE_TF32; t <= MPE_E5M2; t++)
    for (int r = 0; r < MPE_NROUND; r++) {
      mpe_round_opts o = { (mpe_round)r, r & 1, (r >> 1) & 1, 99, (uint64_t)1 << 33 };
      mpe_flags_clear(~0u);
      ck_assert_int_eq(mpe_round_f32(yc, x, n, mpe_format_of((mpe_type)t), &o), MPE_OK);
      unsigned fc = mpe_flags_test_clear(~0u);
      ck_assert_int_eq(mpe_gpu_round_f32(yg, x, n, mpe_format_of((mpe_type)t), &o), MPE_OK);
      ck_assert_uint_eq(mpe_flags_test_clear(~0u), fc);
      ck_assert_int_eq(memcmp(yc, yg, n * 4), 0);
      /* in place */
      memcpy(yg, x, n * 4);
      ck_assert_int_eq(mpe_gpu_round_f32(yg, yg, n, mpe_format_of((mpe_type)t), &o), MPE_OK);
      ck_assert_int_eq(memcmp(yc, yg, n * 4), 0);
    }
  free(x); free(yc); free(yg);
}
END_TEST

static void fill(float *v, size_t n, uint64_t *st)
{
  for (size_t i = 0; i < n; i++)
    v[i] = (float)((double)(int32_t)(ts_rand64(st) >> 32) / 2147483648.0 * 4);
}

START_TEST(test_dev_mma)
{
  mpe_type in = ins[_i];
  const mpe_tc_model *m = NULL;
  int rc = mpe_gpu_model(&m, in);
  if (rc == MPE_EUNSUP)
    return;                   /* no instruction for this input on this GPU */
  ck_assert_int_eq(rc, MPE_OK);
  uint64_t st = ts_seed() + (uint64_t)_i;
  enum { M = 37, N = 21, K = 100 };
  float A[M * K], B[K * N], C[M * N], Dc[M * N], Dg[M * N];
  fill(A, M * K, &st); fill(B, K * N, &st); fill(C, M * N, &st);
  ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, Dc, MPE_FP32, N), MPE_OK);
  rc = mpe_gpu_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, Dg, MPE_FP32, N);
  if (rc == MPE_EUNSUP)
    return;                   /* no MMA kernel for this architecture (V100 with CUDA >= 13) */
  ck_assert_int_eq(rc, MPE_OK);
  ck_assert_int_eq(memcmp(Dc, Dg, sizeof Dc), 0);
  /* the BLAS form, every layout and transposition, on the MMA path */
  for (int lay = 0; lay < 2; lay++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        int row = lay == 0;
        int lda = ((ta == 0) == row ? K : M) + 3, ldb = ((tb == 0) == row ? N : K) + 1, ldc = (row ? N : M) + 2;
        static float Aa[(M + 3) * (K + 3)], Ba[(K + 3) * (N + 3)], Cc[(M + 3) * (N + 3)], Cg[(M + 3) * (N + 3)];
        fill(Aa, sizeof Aa / 4, &st); fill(Ba, sizeof Ba / 4, &st); fill(Cc, sizeof Cc / 4, &st);
        memcpy(Cg, Cc, sizeof Cc);
        ck_assert_int_eq(mpe_gemm(m, (mpe_layout)lay, (mpe_trans)ta, (mpe_trans)tb, M, N, K, 0.5f, Aa, MPE_FP32, lda,
                                  Ba, MPE_FP32, ldb, 2.0f, Cc, MPE_FP32, ldc), MPE_OK);
        ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, m, (mpe_layout)lay, (mpe_trans)ta, (mpe_trans)tb, M, N, K,
                                      0.5f, Aa, MPE_FP32, lda, Ba, MPE_FP32, ldb, 2.0f, Cg, MPE_FP32, ldc), MPE_OK);
        ck_assert_int_eq(memcmp(Cc, Cg, sizeof Cc), 0);
      }
  /* the pinned cuBLASLt path gives the same bits on every call */
  float P1[M * N], P2[M * N];
  rc = mpe_gpu_gemm(MPE_GPU_PATH_CUBLASLT, m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, A, MPE_FP32,
                    K, B, MPE_FP32, N, 0.0f, P1, MPE_FP32, N);
  if (rc != MPE_EUNSUP) {
    ck_assert_int_eq(rc, MPE_OK);
    ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_CUBLASLT, m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f,
                                  A, MPE_FP32, K, B, MPE_FP32, N, 0.0f, P2, MPE_FP32, N), MPE_OK);
    ck_assert_int_eq(memcmp(P1, P2, sizeof P1), 0);
  }
}
END_TEST

/* The integer tensor cores: mpe_gpu_mma and the MMA path of mpe_gpu_gemm
   against mpe_mma/mpe_gemm bit for bit (wrap-around and .satfinite, operands at
   the type limits, C near the int32 limits, every layout and transposition,
   mixed signedness), and the cuBLASLt path (INT8) where no int32 overflow can
   occur (the sum is then exact in any order). */
static const mpe_type int_ins[] = { MPE_INT8, MPE_UINT8, MPE_INT4, MPE_UINT4 };

static void fill_int(void *v, size_t n, mpe_type t, uint64_t *st)
{
  for (size_t i = 0; i < n; i++) {
    uint64_t r = ts_rand64(st);
    int x;
    switch (t) {
    case MPE_INT8: x = (r & 3) == 0 ? ((r >> 2) & 1 ? 127 : -128) : (int)(int8_t)(r >> 8); break;
    case MPE_UINT8: x = (r & 3) == 0 ? 255 : (int)(uint8_t)(r >> 8); break;
    case MPE_INT4: x = (int)((r >> 8) % 16) - 8; break;
    default: x = (int)((r >> 8) % 16); break;
    }
    ((int8_t *)v)[i] = (int8_t)x;
  }
}

START_TEST(test_dev_int)
{
  mpe_type in = int_ins[_i / 2];
  const mpe_tc_model *dev = NULL;
  int rc = mpe_gpu_model(&dev, in);
  if (rc == MPE_EUNSUP)
    return;                   /* no integer instruction of this width on this GPU */
  ck_assert_int_eq(rc, MPE_OK);
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(dev, &p), MPE_OK);
  p.satfinite = _i % 2;
  mpe_tc_model *m = NULL;
  ck_assert_int_eq(mpe_tc_model_custom(&m, &p), MPE_OK);
  mpe_type other = in == MPE_INT8 ? MPE_UINT8 : in == MPE_UINT8 ? MPE_INT8 : in == MPE_INT4 ? MPE_UINT4 : MPE_INT4;
  uint64_t st = ts_seed() + 100 + (uint64_t)_i;
  enum { M = 37, N = 21, K = 300 };
  static int8_t A[(M + 3) * (K + 3)], B[(K + 3) * (N + 3)];
  static int32_t C[(M + 3) * (N + 3)], Dc[(M + 3) * (N + 3)], Dg[(M + 3) * (N + 3)];
  fill_int(A, sizeof A, in, &st);
  fill_int(B, sizeof B, other, &st);
  for (size_t i = 0; i < sizeof C / 4; i++)
    C[i] = (int32_t)(i % 3 == 0 ? INT32_MAX - (int32_t)(i % 1000) : i % 3 == 1 ? INT32_MIN + (int32_t)(i % 1000)
                                                                              : (int32_t)ts_rand64(&st));
  /* every GPU with an integer model has the instruction of its block (sm_75+) */
  ck_assert_int_eq(mpe_gpu_mma(m, M, N, K, A, in, K, B, other, N, C, N, Dg, MPE_INT32, N), MPE_OK);
  ck_assert_int_eq(mpe_mma(m, M, N, K, A, in, K, B, other, N, C, N, Dc, MPE_INT32, N), MPE_OK);
  ck_assert_int_eq(memcmp(Dc, Dg, (size_t)M * N * 4), 0);
  static const float ab[][2] = { { 1, 0 }, { 3, -2 }, { -1, 1 }, { 0, 5 } };
  for (int lay = 0; lay < 2; lay++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        int row = lay == 0, t = (lay * 4 + ta * 2 + tb) % 4;
        int lda = ((ta == 0) == row ? K : M) + 3, ldb = ((tb == 0) == row ? N : K) + 1, ldc = (row ? N : M) + 2;
        memcpy(Dc, C, sizeof C);
        memcpy(Dg, C, sizeof C);
        ck_assert_int_eq(mpe_gemm(m, (mpe_layout)lay, (mpe_trans)ta, (mpe_trans)tb, M, N, K, ab[t][0], A, in, lda, B,
                                  other, ldb, ab[t][1], Dc, MPE_INT32, ldc), MPE_OK);
        ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, m, (mpe_layout)lay, (mpe_trans)ta, (mpe_trans)tb, M, N, K,
                                      ab[t][0], A, in, lda, B, other, ldb, ab[t][1], Dg, MPE_INT32, ldc), MPE_OK);
        ck_assert_int_eq(memcmp(Dc, Dg, sizeof Dc), 0);
      }
  if (in == MPE_INT8 && !p.satfinite) {
    /* small values: |sum| < 2^31, exact in any order */
    for (size_t i = 0; i < sizeof A; i++)
      A[i] = (int8_t)(A[i] / 4);
    for (size_t i = 0; i < sizeof B; i++)
      B[i] = (int8_t)((int8_t)B[i] / 4);
    memcpy(Dc, C, sizeof C);
    memcpy(Dg, C, sizeof C);
    ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 2, A, MPE_INT8, K, B, MPE_INT8,
                              N, 0, Dc, MPE_INT32, N), MPE_OK);
    rc = mpe_gpu_gemm(MPE_GPU_PATH_CUBLASLT, m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 2, A, MPE_INT8,
                      K, B, MPE_INT8, N, 0, Dg, MPE_INT32, N);
    if (rc != MPE_EUNSUP) {   /* no IMMA algorithm with the constraints */
      ck_assert_int_eq(rc, MPE_OK);
      ck_assert_int_eq(memcmp(Dc, Dg, sizeof Dc), 0);
    }
  }
  mpe_tc_model_free(m);
}
END_TEST

START_TEST(test_dev_fma_chain)
{
  const mpe_tc_model *m = mpe_tc_model_get("fma-chain", MPE_BF16);
  ck_assert_ptr_nonnull(m);
  uint64_t st = ts_seed() + 3;
  enum { M = 19, N = 23, K = 77 };
  float A[M * K], B[K * N], C[M * N], Dc[M * N], Dg[M * N];
  fill(A, M * K, &st); fill(B, K * N, &st); fill(C, M * N, &st);
  ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, Dc, MPE_FP32, N), MPE_OK);
  ck_assert_int_eq(mpe_gpu_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, C, N, Dg, MPE_FP32, N), MPE_OK);
  ck_assert_int_eq(memcmp(Dc, Dg, sizeof Dc), 0);
}
END_TEST
#endif

#ifndef MPE_GPU_DEVICE_TESTS
static Suite *gpu_suite(void)
{
  Suite *s = suite_create("gpu");
  TCase *tc = tcase_create("host");
  tcase_add_test(tc, test_names);
  tcase_add_test(tc, test_codes_without_device);
  tcase_add_test(tc, test_cublas_lazy);
  tcase_add_test(tc, test_argument_errors);
  tcase_add_test(tc, test_round_dev_host);
  tcase_add_test(tc, test_philox_word);
  tcase_add_test(tc, test_epilogue_host);
  tcase_add_test(tc, test_f16_rne);
  tcase_add_test(tc, test_korder_cpu);
  tcase_set_timeout(tc, 600);
  suite_add_tcase(s, tc);
  return s;
}
#endif

int main(void)
{
#ifdef MPE_GPU_DEVICE_TESTS
  int count = 0, rc = mpe_gpu_device_count(&count);
  if (rc != MPE_OK) {
    printf("check_gpu_device: SKIP: no GPU device (%s)\n", mpe_strerror(rc));
    return 77;
  }
  Suite *s = suite_create("gpu-device");
  TCase *tc = tcase_create("device");
  tcase_add_test(tc, test_dev_round);
  tcase_add_loop_test(tc, test_dev_mma, 0, NINS);
  tcase_add_test(tc, test_dev_fma_chain);
  tcase_add_loop_test(tc, test_dev_int, 0, 8);
  tcase_set_timeout(tc, 600);
  suite_add_tcase(s, tc);
  return ts_run(s);
#else
  return ts_run(gpu_suite());
#endif
}
