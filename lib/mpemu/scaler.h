/* mpemu — dynamic loss scalers (issue 6). */
#ifndef MPEMU_SCALER_H
#define MPEMU_SCALER_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
