#include "mpemu/core.h"

static const char *const messages[MPE_NERRORS] = {
  [MPE_OK] = "success",
  [MPE_EINVAL] = "invalid argument",
  [MPE_ENOMEM] = "out of memory",
  [MPE_EUNSUP] = "not supported",
  [MPE_ERANGE] = "value out of range (NaN or infinity where a finite value is needed)",
  [MPE_EIO] = "input/output error",
  [MPE_EFORMAT] = "malformed file or data",
  [MPE_EDEVICE] = "no usable GPU device",
  [MPE_ENOTFOUND] = "unknown name",
  [MPE_ECONVERGE] = "iteration did not converge",
};

const char *mpe_strerror(int code)
{
  if (code < 0 || code >= MPE_NERRORS || !messages[code])
    return "unknown error";
  return messages[code];
}
