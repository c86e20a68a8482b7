/* What the modules of libmpemu-analysis share (mpai.h). */
#include "config.h"
#include <stdint.h>
#include <stdlib.h>
#include "mpai.h"

int mpai_grow(void **p, size_t *cap, size_t need, size_t esize)
{
  if (need <= *cap)
    return 0;
  size_t nc = *cap ? *cap : 16;
  while (nc < need) {
    if (nc > SIZE_MAX / 2 / esize)
      return -1;
    nc *= 2;
  }
  void *q = realloc(*p, nc * esize);
  if (!q)
    return -1;
  *p = q;
  *cap = nc;
  return 0;
}
