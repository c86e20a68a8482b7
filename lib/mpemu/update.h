/* mpemu — master-weight update studies (issue 7). */
#ifndef MPEMU_UPDATE_H
#define MPEMU_UPDATE_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
