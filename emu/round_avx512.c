/* AVX-512 build of the binary32 rounding kernel (compiled with AVX512_CFLAGS). */
#include "config.h"
#include "mpei.h"
#include "isa_avx512.h"
#include "round_kernel.h"
