/* mpanalyze: the input arguments: files, folders and quoted globs, expanded
   and sorted naturally. */
#include <config.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <glob.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include "mpanalyze.h"

int mpa_name_match(const char *pattern, const char *name)
{
  return !strcmp(pattern, name) || (strpbrk(pattern, "*?[") && !fnmatch(pattern, name, 0));
}

int mpa_natcmp(const char *a, const char *b)
{
  while (*a && *b) {
    if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
      const char *ea = a, *eb = b;
      while (*a == '0' && a[1] >= '0' && a[1] <= '9') a++;   /* leading zeros do not count */
      while (*b == '0' && b[1] >= '0' && b[1] <= '9') b++;
      const char *da = a, *db = b;
      while (*a >= '0' && *a <= '9') a++;
      while (*b >= '0' && *b <= '9') b++;
      if (a - da != b - db)
        return a - da < b - db ? -1 : 1;
      int c = strncmp(da, db, (size_t)(a - da));
      if (c)
        return c;
      if (a - ea != b - eb)   /* equal numbers: fewer leading zeros first */
        return a - ea < b - eb ? -1 : 1;
      continue;
    }
    if (*a != *b)
      return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++, b++;
  }
  return *a ? 1 : *b ? -1 : 0;
}

static int natcmp_p(const void *a, const void *b)
{
  return mpa_natcmp(*(char *const *)a, *(char *const *)b);
}

static int tensor_ext(const char *name)
{
  static const char *ext[] = { ".npy", ".npz", ".safetensors", ".pt", ".pth", ".bin", ".csv", ".txt", ".tsv",
                               ".dat", ".raw" };
  const char *dot = strrchr(name, '.');
  for (size_t i = 0; dot && i < sizeof ext / sizeof ext[0]; i++)
    if (!strcasecmp(dot, ext[i]))
      return 1;
  return 0;
}

void mpa_free_inputs(char **paths, size_t np)
{
  for (size_t i = 0; paths && i < np; i++)
    free(paths[i]);
  free(paths);
}

/* Files named one by one in an order a shell's sorting gives but natural order
   does not (step10 before step2: an unquoted step*.npy): one warning line, as
   the steps are taken in the order given. */
static void warn_order(int n, char **args)
{
  for (int a = 0; a + 1 < n; a++)
    if (mpa_natcmp(args[a], args[a + 1]) > 0 && strcmp(args[a], args[a + 1]) < 0 &&
        !strpbrk(args[a], "*?[") && !strpbrk(args[a + 1], "*?[")) {
      mpa_error(mpa_cmd_name, "warning: %s comes before %s: the files are taken in the order given "
                "(quote the pattern, e.g. 'step*.npy', and mpanalyze sorts it naturally)",
                args[a], args[a + 1]);
      return;
    }
}

int mpa_expand_inputs(int n, char **args, char ***paths, size_t *np)
{
  char **v = NULL;
  size_t nv = 0, cap = 0;
  *paths = NULL;
  *np = 0;
  warn_order(n, args);
#define PUSH(str) do { \
    if (nv == cap) { \
      cap = cap ? 2 * cap : 16; \
      char **nn = realloc(v, cap * sizeof *nn); \
      if (!nn) goto oom; \
      v = nn; \
    } \
    if (!(v[nv] = strdup(str))) goto oom; \
    nv++; \
  } while (0)
  for (int a = 0; a < n; a++) {
    const char *arg = args[a];
    struct stat sb;
    size_t first = nv;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      DIR *d = opendir(arg);
      if (!d) {
        mpa_free_inputs(v, nv);
        return mpa_error(arg, "cannot read the folder: %s", strerror(errno));
      }
      size_t al = strlen(arg);
      for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !tensor_ext(e->d_name))
          continue;
        char *p = malloc(al + strlen(e->d_name) + 2);
        if (!p) {
          closedir(d);
          goto oom;
        }
        sprintf(p, "%s%s%s", arg, al && arg[al - 1] == '/' ? "" : "/", e->d_name);
        struct stat fb;
        int reg = stat(p, &fb) == 0 && S_ISREG(fb.st_mode);
        if (reg && nv == cap) {
          cap = cap ? 2 * cap : 16;
          char **nn = realloc(v, cap * sizeof *nn);
          if (!nn) {
            free(p);
            closedir(d);
            goto oom;
          }
          v = nn;
        }
        if (reg)
          v[nv++] = p;
        else
          free(p);
      }
      closedir(d);
      if (nv == first) {
        mpa_free_inputs(v, nv);
        return mpa_error(arg, "the folder holds no tensor file (.npy, .npz, .safetensors, .pt, .pth, .bin, .csv, .txt, ...)");
      }
    } else if (access(arg, F_OK) != 0 && strpbrk(arg, "*?[")) {
      /* a name that exists is a file, whatever it holds; one that does not
         may be a pattern, and when it matches nothing either, both are said */
      int literal_err = errno;
      glob_t g;
      int gr = glob(arg, GLOB_NOSORT, NULL, &g);
      if (gr == GLOB_NOMATCH || (gr == 0 && g.gl_pathc == 0)) {
        globfree(&g);
        mpa_free_inputs(v, nv);
        return mpa_error(NULL, "cannot open '%s': %s (and no file matches it as a pattern)", arg,
                         strerror(literal_err));
      }
      if (gr) {
        globfree(&g);
        mpa_free_inputs(v, nv);
        return gr == GLOB_NOSPACE ? (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL) : mpa_error(arg, "cannot read the folders this pattern names");
      }
      for (size_t k = 0; k < g.gl_pathc; k++) {
        struct stat fb;
        if (stat(g.gl_pathv[k], &fb) == 0 && S_ISDIR(fb.st_mode))
          continue;   /* a pattern names files; folders it matches are passed by */
        if (nv == cap) {
          cap = cap ? 2 * cap : 16;
          char **nn = realloc(v, cap * sizeof *nn);
          if (!nn) {
            globfree(&g);
            goto oom;
          }
          v = nn;
        }
        if (!(v[nv] = strdup(g.gl_pathv[k]))) {
          globfree(&g);
          goto oom;
        }
        nv++;
      }
      globfree(&g);
      if (nv == first) {
        mpa_free_inputs(v, nv);
        return mpa_error(arg, "no file matches this pattern (only folders)");
      }
    } else {
      PUSH(arg);   /* a file (or a name that fails to open later, with its own message) */
    }
    if (nv - first > 1)
      qsort(v + first, nv - first, sizeof *v, natcmp_p);
  }
#undef PUSH
  *paths = v;
  *np = nv;
  return 0;
oom:
  mpa_free_inputs(v, nv);
  mpa_error(NULL, "out of memory");
  return MPA_EXIT_FAIL;
}

