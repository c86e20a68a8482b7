/* What the modules of libmpemu-analysis share (not installed): its private
   names start mpai_, as libmpemu's start mpei_ (lib/mpei.h). */
#ifndef MPAI_H
#define MPAI_H
#include <stddef.h>
#include "mpei.h"

/* grow *p (cap elements of esize bytes, doubling from 16) to hold at least
   need elements: 0, or -1 with *p and *cap unchanged (no memory, overflow) */
MPEI_HIDDEN int mpai_grow(void **p, size_t *cap, size_t need, size_t esize);

#endif
