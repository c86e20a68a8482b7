/* mpemu — correctly rounded FP16/BF16 arithmetic and element-wise array functions (issue 3). */
#ifndef MPEMU_ARITH_H
#define MPEMU_ARITH_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
