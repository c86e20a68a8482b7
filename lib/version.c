#include <string.h>
#include <strings.h>
#include "mpemu/version.h"
#include "mpemu/core.h"
#include "mpei_names.h"

const char *mpe_version_string(void) { return MPE_VERSION_STRING; }

static const char *const round_names[MPE_NROUND] = { "rne", "rna", "rz", "ru", "rd", "ro", "sr", "sr_eq" };

const char *mpe_round_name(mpe_round r)
{
  return (unsigned)r < MPE_NROUND ? round_names[r] : NULL;
}

int mpe_round_lookup(const char *name)
{
  return mpei_name_index(round_names, MPE_NROUND, name, 1);
}

const char *mpe_type_name(mpe_type t)
{
  static const char *const names[] = {
#define MPE_FORMAT(type, value, name, ...) [type] = name,
#include "mpemu/formats.def"
#undef MPE_FORMAT
    [MPE_INT8] = "int8", [MPE_UINT8] = "uint8", [MPE_INT4] = "int4", [MPE_UINT4] = "uint4",
    [MPE_INT32] = "int32" };
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : NULL;
}
