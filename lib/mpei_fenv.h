/* The library's floating-point environment (mpemu(3), "FLOATING-POINT ENVIRONMENT").

   Every result of mpemu is defined in one environment: round to nearest even,
   subnormals neither flushed (FTZ) nor read as zero (DAZ), every exception
   masked, and on x86 the x87 unit at its default control word (64-bit
   precision, nearest, masked; range analysis sums in long double). The caller
   may have set anything else: -Ofast and -ffast-math set FTZ and DAZ at start-up,
   ML code flushes subnormals on purpose, interval codes change the rounding
   mode, debugging runs unmask exceptions.

   MPEI_FENV_GUARD() opens a scope under the library's environment: it saves the
   control and status words, loads the library's control word where it differs,
   and when the scope ends (any return: the cleanup attribute runs it) puts the
   saved words back, so the caller gets back its own modes, masks and sticky
   exception flags exactly as they were; the library reports what happened
   through its own flags (mpe_flags_get(3)). It goes first in every public entry
   point that computes, and first in the body of every OpenMP parallel region
   and task, since the team's threads are long-lived: they hold whatever
   environment they were created with or a caller's own parallel region left in
   them, and never take up a later change in the calling thread.

   Cost (x86-64): stmxcsr, fnstcw and fnstsw on entry, stmxcsr on exit, and
   ldmxcsr only where the words differ (on exit nearly always, as the library's
   own operations raise the inexact flag); fldcw and the x87 environment only
   where the caller changed the x87 unit. Elsewhere: fegetenv, fesetenv.
   Measured (make bench, call rows): about 10 ns a call, 17 ns under a caller's
   DAZ+FTZ, against about 100 ns for mpe_fp32_to_fp16 itself, so the scalar
   functions take the guard too instead of an environment-free second path.

   What the guard does not order by itself: the compiler does not know that
   arithmetic depends on MXCSR or the x87 control word, so the guard's asm
   statements and MXCSR builtins order memory (their memory clobbers) but not
   an operation whose operands and result stay in registers, which may move
   across them. Clang does move them: in a scalar function it sinks the last
   step, such as the (float) of a double result, to the return, after the
   cleanup has put the caller's DAZ+FTZ back. So a value that enters the
   scope in a register, a scalar argument, passes MPEI_FENV_IN(x) right after
   the guard, and a value computed in the scope that leaves it in a register,
   a scalar result, leaves through MPEI_FENV_RETURN(e). Both pass the value
   through an empty volatile asm that reads and writes it in memory, which
   keeps its order with the guard's own asm and builtins: every operation on
   the argument comes after the environment is set, every operation of the
   result before it is restored. Values read from and written to memory
   (arrays, structures, out-parameters) need neither. Constant folding is
   harmless: the compiler folds in the library's environment. */
#ifndef MPEI_FENV_H
#define MPEI_FENV_H

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE__))
#define MPEI_FENV_X86 1
#define MPEI_CSR_LIB 0x1f80u      /* every exception masked, nearest, no DAZ, no FTZ */
#define MPEI_CSR_FLAGS 0x3fu      /* the sticky flags, DE included */
#define MPEI_X87_CW_LIB 0x037fu   /* masked, 64-bit precision, nearest (the Linux default) */
#define MPEI_X87_CW_CTRL 0x0f3fu  /* the masks, precision and rounding fields of it */
typedef struct {
  unsigned csr;
  unsigned short cw, sw;
} mpei_fenv;

static inline mpei_fenv mpei_fenv_enter(void)
{
  mpei_fenv s;
  s.csr = __builtin_ia32_stmxcsr();
  if ((s.csr & ~MPEI_CSR_FLAGS) != MPEI_CSR_LIB)
    __builtin_ia32_ldmxcsr(MPEI_CSR_LIB | (s.csr & MPEI_CSR_FLAGS));
  __asm__ volatile("fnstcw %0" : "=m"(s.cw));
  __asm__ volatile("fnstsw %0" : "=m"(s.sw));
  if ((s.cw & MPEI_X87_CW_CTRL) != (MPEI_X87_CW_LIB & MPEI_X87_CW_CTRL)) {
    /* fnclex first: an exception the caller left pending and unmasked would
       otherwise be delivered by the first waiting x87 instruction (fldcw) */
    if (s.sw & 0x3fu & ~s.cw)
      __asm__ volatile("fnclex");
    unsigned short cw = MPEI_X87_CW_LIB;
    __asm__ volatile("fldcw %0" : : "m"(cw));
  }
  __asm__ volatile("" ::: "memory");
  return s;
}

static inline void mpei_fenv_leave(const mpei_fenv *s)
{
  __asm__ volatile("" ::: "memory");
  if (__builtin_ia32_stmxcsr() != s->csr)
    __builtin_ia32_ldmxcsr(s->csr);
  unsigned short sw;
  __asm__ volatile("fnstsw %0" : "=m"(sw));
  if ((sw ^ s->sw) & 0x3fu) {
    /* the x87 flags changed (long double arithmetic): the caller's back, with
       its control word, in one environment load */
    struct { unsigned short cw, r0, sw, r1; unsigned rest[5]; } env;
    __asm__ volatile("fnstenv %0" : "=m"(env));
    env.cw = s->cw;
    env.sw = (unsigned short)((env.sw & ~0x80ffu) | (s->sw & 0x80ffu));
    __asm__ volatile("fldenv %0" : : "m"(env));
  } else if ((s->cw & MPEI_X87_CW_CTRL) != (MPEI_X87_CW_LIB & MPEI_X87_CW_CTRL)) {
    __asm__ volatile("fldcw %0" : : "m"(s->cw));
  }
}
#else
#include <fenv.h>
typedef struct { fenv_t env; } mpei_fenv;

static inline mpei_fenv mpei_fenv_enter(void)
{
  mpei_fenv s;
  fegetenv(&s.env);
  fesetenv(FE_DFL_ENV);
  return s;
}

static inline void mpei_fenv_leave(const mpei_fenv *s) { fesetenv(&s->env); }
#endif

/* MPEI_FENV_IN(x), MPEI_FENV_IN(x, y), MPEI_FENV_IN(x, y, z) */
#define MPEI_FENV_IN(...) MPEI_FENV_IN_(__VA_ARGS__, MPEI_FENV_IN3, MPEI_FENV_IN2, MPEI_FENV_FENCE, -)(__VA_ARGS__)
#define MPEI_FENV_IN_(a, b, c, m, ...) m
#define MPEI_FENV_FENCE(x) __asm__ volatile("" : "+m"(x))
#define MPEI_FENV_IN2(x, y) __asm__ volatile("" : "+m"(x), "+m"(y))
#define MPEI_FENV_IN3(x, y, z) __asm__ volatile("" : "+m"(x), "+m"(y), "+m"(z))
#define MPEI_FENV_RETURN(e)                                                                        \
  do {                                                                                             \
    __typeof__(e) mpei_fenv_ret_ = (e);                                                            \
    MPEI_FENV_FENCE(mpei_fenv_ret_);                                                                  \
    return mpei_fenv_ret_;                                                                         \
  } while (0)

#define MPEI_FENV_GUARD()                                                                          \
  __attribute__((cleanup(mpei_fenv_leave), unused)) const mpei_fenv mpei_fenv_scope_ = mpei_fenv_enter()

#endif
