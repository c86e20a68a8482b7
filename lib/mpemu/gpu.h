/* mpemu — the GPU path, mpe_gpu_* (issue 5). */
#ifndef MPEMU_GPU_H
#define MPEMU_GPU_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
