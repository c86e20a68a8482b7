/* mpemu — mixed-precision LU, LU-IR, GMRES-IR and test matrices (issue 8). */
#ifndef MPEMU_IR_H
#define MPEMU_IR_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
