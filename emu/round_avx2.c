/* AVX2 build of the binary32 rounding kernel (compiled with AVX2_CFLAGS). */
#include "config.h"
#include "mpei.h"
#include "isa_avx2.h"
#include "round_kernel.h"
