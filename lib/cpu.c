/* Run-time CPU feature detection and the SIMD level used by the array kernels.
   One reader of CPUID and XCR0 for the whole library: the level of the kernel
   tables (emu/isa.c) and the instructions the hardware models run (emu/tc_cpu.c)
   come from the same bits. Detection runs once, under pthread_once, so that
   threads calling a kernel for the first time together all see the finished
   answer (no data race); the level forced by mpe_simd_level_set is an atomic. */
#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdatomic.h>
#include "config.h"
#include "mpei.h"

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static int detected = MPEI_SIMD_NONE;
static unsigned features;
static _Atomic int forced = -1;

#if defined(__x86_64__) || defined(__i386__)
static unsigned long long xcr0(void)
{
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (unsigned long long)hi << 32 | lo;
}

/* A feature counts only where the operating system saves its registers
   (XCR0: YMM for the VEX forms, ZMM and the mask registers for EVEX, the tile
   state for AMX). */
static unsigned cpuid_features(void)
{
  unsigned a, b, c, d, a1 = 0, b1, c1, d1, f = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
    return 0;
  const unsigned c1l = c;
  const unsigned long long x = xcr0();
  const int ymm = (x & 6) == 6, zmm = (x & 0xe6) == 0xe6;
  if (ymm && (c1l & bit_FMA))
    f |= MPEI_CPU_FMA;
  if (ymm && (c1l & bit_F16C))
    f |= MPEI_CPU_F16C;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
    return f;
  if (a >= 1)
    __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
  if (ymm && (b & bit_AVX2))
    f |= MPEI_CPU_AVX2;
  if (b & bit_BMI2)
    f |= MPEI_CPU_BMI2;
  const int avx512f = zmm && (b & bit_AVX512F);
  if (avx512f && (b & bit_AVX512BW) && (b & bit_AVX512DQ) && (b & bit_AVX512VL))
    f |= MPEI_CPU_AVX512;
  if (avx512f && (a1 & (1u << 5)))
    f |= MPEI_CPU_AVX512BF16;
  if (avx512f && (c & (1u << 11)))
    f |= MPEI_CPU_AVX512VNNI;
  if (ymm && (a1 & (1u << 4)))
    f |= MPEI_CPU_AVXVNNI;
  /* AMX: the tile state enabled in XCR0 (bits 17, 18) and the tile unit (EDX
     bit 24); a process must still ask Linux for the permission to use it */
  if ((x & 0x60000) == 0x60000 && (d & (1u << 24))) {
    f |= MPEI_CPU_AMX_TILE;
    if (d & (1u << 22))
      f |= MPEI_CPU_AMX_BF16;
    if (a1 & (1u << 21))
      f |= MPEI_CPU_AMX_FP16;
    if (d & (1u << 25))
      f |= MPEI_CPU_AMX_INT8;
  }
  return f;
}
#else
static unsigned cpuid_features(void) { return 0; }
#endif

static void detect_run(void)
{
  features = cpuid_features();
  int level = MPEI_SIMD_NONE;
#ifdef HAVE_X86_SIMD
  const unsigned avx2 = MPEI_CPU_AVX2 | MPEI_CPU_FMA | MPEI_CPU_F16C | MPEI_CPU_BMI2;
  if ((features & avx2) == avx2)
    level = MPEI_SIMD_AVX2;
  if (level == MPEI_SIMD_AVX2 && (features & MPEI_CPU_AVX512))
    level = MPEI_SIMD_AVX512;
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

unsigned mpei_cpu_features(void)
{
  detect();
  return features;
}

const char *mpe_cpu_features(void)
{
  detect();
  const int bf16 = (features & MPEI_CPU_AVX512BF16) != 0;
  switch (detected) {
  case MPEI_SIMD_AVX512: return bf16 ? "avx2 f16c avx512f avx512bw avx512vl avx512bf16" : "avx2 f16c avx512f avx512bw avx512vl";
  case MPEI_SIMD_AVX2: return "avx2 f16c";
  default: return "portable";
  }
}
