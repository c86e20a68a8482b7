/* mpemu — range analysis of tensors for a target format (issue 6). */
#ifndef MPEMU_RANGE_H
#define MPEMU_RANGE_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
