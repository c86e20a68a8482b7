/* mpemu — 16-bit fixed point: QUDA block-normalised and Q formats (issue 3). */
#ifndef MPEMU_FIXED_H
#define MPEMU_FIXED_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
