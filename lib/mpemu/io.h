/* mpemu — tensor-file readers: npy, npz, safetensors, raw, text (issue 6). */
#ifndef MPEMU_IO_H
#define MPEMU_IO_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
