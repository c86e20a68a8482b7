/* mpemu — mixed-precision CG with reliable updates (issue 8). */
#ifndef MPEMU_CG_H
#define MPEMU_CG_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
