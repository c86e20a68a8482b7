/* Run-time CPU feature detection and the SIMD level used by the array kernels.
   Detection runs once, under pthread_once, so that threads calling a kernel
   for the first time together all see the finished answer (no data race);
   the level forced by mpe_simd_level_set is an atomic. */
#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdatomic.h>
#include "config.h"
#include "mpei.h"

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static int detected = MPEI_SIMD_NONE;
static _Atomic int forced = -1;
static int has_bf16, has_f16c;

static void detect_run(void)
{
  int level = MPEI_SIMD_NONE;
#if defined(HAVE_X86_SIMD) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  /* F16C from CPUID leaf 1, ECX bit 29: clang's __builtin_cpu_supports has no "f16c"
     (it is VEX-encoded, so usable wherever the AVX2 test below passes) */
  unsigned eax, ebx, ecx, edx;
  has_f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c &&
      __builtin_cpu_supports("bmi2"))
    level = MPEI_SIMD_AVX2;
  if (level == MPEI_SIMD_AVX2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    level = MPEI_SIMD_AVX512;
  has_bf16 = level == MPEI_SIMD_AVX512 && __builtin_cpu_supports("avx512bf16");
#endif
  detected = level;
}

static void detect(void)
{
  pthread_once(&detect_once, detect_run);
}

int mpei_simd_level(void)
{
  detect();
  int f = atomic_load(&forced);
  return f >= 0 && f < detected ? f : detected;
}

int mpe_simd_level_set(int level)
{
  detect();
  atomic_store(&forced, level < 0 ? -1 : level);
  return mpei_simd_level();
}

int mpe_simd_level(void) { return mpei_simd_level(); }

int mpei_cpu_has_avx512bf16(void) { detect(); return has_bf16; }
int mpei_cpu_has_f16c(void) { detect(); return has_f16c; }

const char *mpe_cpu_features(void)
{
  detect();
  switch (detected) {
  case MPEI_SIMD_AVX512: return has_bf16 ? "avx2 f16c avx512f avx512bw avx512vl avx512bf16" : "avx2 f16c avx512f avx512bw avx512vl";
  case MPEI_SIMD_AVX2: return "avx2 f16c";
  default: return "portable";
  }
}
