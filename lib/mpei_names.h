/* Names of enumerations: the lookup every name table shares (not installed). */
#ifndef MPEI_NAMES_H
#define MPEI_NAMES_H
#include <string.h>
#include <strings.h>

/* The index of name in names[0..n) (compared with strcasecmp when nocase, else
   strcmp); -1 for NULL or a name not there. */
static inline int mpei_name_index(const char *const *names, int n, const char *name, int nocase)
{
  for (int i = 0; name && i < n; i++)
    if (!(nocase ? strcasecmp(name, names[i]) : strcmp(name, names[i])))
      return i;
  return -1;
}
#endif
