#include "mpei.h"

_Thread_local unsigned mpei_flags;

unsigned mpe_flags_get(void) { return mpei_flags; }
void mpe_flags_clear(unsigned mask) { mpei_flags &= ~mask; }
void mpe_flags_raise(unsigned mask) { mpei_flags |= mask; }
unsigned mpe_flags_test_clear(unsigned mask)
{
  unsigned f = mpei_flags & mask;
  mpei_flags &= ~mask;
  return f;
}
