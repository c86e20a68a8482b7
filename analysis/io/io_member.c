/* Members of tensor files that are not plain floating point: the list of
   those skipped (integer, bool, complex, untyped), and the per-member element
   types a caller gives with mpe_io_opts.rules (issue 15). */
#include <config.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "io_internal.h"
#include "mpai.h"

int mpai_skip_add(struct mpai_skips *s, const char *name, size_t nl, const char *dtype, const char *why)
{
  if (mpai_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v))
    return MPE_ENOMEM;
  struct mpai_skip *k = &s->v[s->n];
  if (!(k->name = malloc(nl + 1)))
    return MPE_ENOMEM;
  memcpy(k->name, name, nl);
  k->name[nl] = 0;
  snprintf(k->dtype, sizeof k->dtype, "%s", dtype);
  k->why = why;
  s->n++;
  return MPE_OK;
}

void mpai_skips_free(struct mpai_skips *s)
{
  for (size_t i = 0; i < s->n; i++)
    free(s->v[i].name);
  free(s->v);
  s->v = NULL;
  s->n = s->cap = 0;
}

static int is_plain(const char *p)
{
  return strpbrk(p, "*?[") == NULL;
}

int mpai_dtype_rule(const mpe_io_opts *o, const char *name, size_t es, mpe_type *t, char *msg, size_t msglen)
{
  for (size_t r = 0; o && r < o->nrules; r++) {
    const mpe_io_dtype_rule *u = &o->rules[r];
    int plain = is_plain(u->pattern);
    if (plain ? strcmp(u->pattern, name) != 0 : fnmatch(u->pattern, name, 0) != 0)
      continue;
    size_t want = mpe_io_dtype_size(u->dtype);
    if (want == es || es == 0) {
      *t = u->dtype;
      return 1;
    }
    if (plain) {
      mpai_io_msg(msg, msglen, "member '%.64s' holds %zu-byte values; dtype %s has %zu-byte ones", name, es,
                  mpe_type_name(u->dtype), want);
      return -1;
    }
  }
  return 0;
}
