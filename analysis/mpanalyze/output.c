/* mpanalyze: files it writes (checked before any work, written through a
   temporary beside them), standard output's last check, the memory budget. */
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

/* "DIR/.mpa-XXXXXX" beside path: a short name, so that any name that can be
   created in DIR can be written through it */
static int temp_beside(const char *path, char *tmp, size_t n)
{
  const char *slash = strrchr(path, '/');
  int dl = slash ? (int)(slash - path + 1) : 0;
  if (snprintf(tmp, n, "%.*s.mpa-XXXXXX", dl, path) >= (int)n)
    return -1;
  return mkstemp(tmp);
}

/* The file an output goes to: path itself, or where a symbolic link at path
   leads (the link is kept; its target is replaced). A link to nothing or a loop
   of links is refused. 0 with *target path or buf, or prints and returns 2. */
static int output_target(const char *path, char *buf, const char **target)
{
  struct stat sl;
  *target = path;
  if (lstat(path, &sl) != 0 || !S_ISLNK(sl.st_mode))
    return 0;
  if (realpath(path, buf))
    *target = buf;
  else if (errno == ENOENT)
    return mpa_error(path, "a symbolic link to nothing; refusing to write through it");
  else if (errno == ELOOP)
    return mpa_error(path, "a loop of symbolic links; refusing to write through it");
  else
    return mpa_error(path, "cannot follow the symbolic link: %s", strerror(errno));
  return 0;
}

int mpa_output_check(const char *out, int argc, char **argv)
{
  if (!strcmp(out, "-"))
    return mpa_error(out, "an output must be a file name (refusing to write it to standard output)");
  char real[PATH_MAX];
  const char *target;
  if (output_target(out, real, &target))
    return MPA_EXIT_INPUT;
  struct stat so, si;
  int exists = stat(target, &so) == 0;
  if (exists && !S_ISREG(so.st_mode))
    return mpa_error(out, "not a regular file; refusing to replace it with an output");
  for (int i = 0; exists && i < argc; i++)
    if (argv[i] != out && stat(argv[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
      return mpa_error(out, "is also an input (%s); refusing to overwrite it", argv[i]);
  char tmp[4096];
  int fd = temp_beside(target, tmp, sizeof tmp);
  if (fd < 0)
    return mpa_error(out, "cannot write here: %s", strerror(errno));
  close(fd);
  unlink(tmp);
  return 0;
}

int mpa_write_file(const char *path, const void *data, size_t n)
{
  char tmp[4096], real[PATH_MAX];
  const char *target;
  if (output_target(path, real, &target))
    return MPA_EXIT_INPUT;
  int fd = temp_beside(target, tmp, sizeof tmp);
  if (fd < 0)
    return mpa_error(path, "cannot write here: %s", strerror(errno));
  const char *p = data;
  int err = 0;
  while (n && !err) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      err = w < 0 ? errno : EIO;
    else
      p += w, n -= (size_t)w;
  }
  /* the mode a new file would get (mkstemp made it 0600) */
  mode_t um = umask(0);
  umask(um);
  if (!err && fchmod(fd, 0666 & ~um) != 0)
    err = errno;
  if (!err && fsync(fd) != 0 && errno != EINVAL)
    err = errno;
  if (close(fd) != 0 && !err)
    err = errno;
  if (!err && rename(tmp, target) != 0)
    err = errno;
  if (err) {
    unlink(tmp);
    return mpa_error(path, "write failed: %s (nothing written; an old file is left as it was)", strerror(err));
  }
  return 0;
}

int mpa_close_stdout(int status)
{
  /* a report cut short by a full disk or a closed pipe must not exit 0 */
  int bad = fflush(stdout) != 0 || ferror(stdout);
  int err = errno;
  if (fclose(stdout) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (bad) {
    mpa_error("standard output", "write failed: %s", strerror(err ? err : EIO));
    return MPA_EXIT_INPUT;
  }
  return status;
}

uint64_t mpa_max_memory;

static uint64_t physical_memory(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : (uint64_t)8 << 30;
}

/* "512M", "16G", "1.5T", "1048576" (bytes), "25%" (of physical memory) */
static int parse_size(const char *s, uint64_t *out)
{
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || errno || !(v > 0) || !isfinite(v))
    return -1;
  double mul = 1;
  if (*e == '%') {
    if (v > 100)
      return -1;
    mul = (double)physical_memory() / 100;
    e++;
  } else if (*e) {
    const char *units = "KMGT";
    const char *u = strchr(units, *e == 'k' ? 'K' : *e == 'm' ? 'M' : *e == 'g' ? 'G' : *e == 't' ? 'T' : *e);
    if (!u || !*e)
      return -1;
    mul = ldexp(1.0, 10 * (int)(u - units + 1));
    e++;
    if (*e == 'i')
      e++;
    if (*e == 'B' || *e == 'b')
      e++;
  }
  /* at least one byte: 0.5 or 1e-300 would be a limit of 0 bytes, as "0" is refused */
  if (*e || v * mul >= 0x1p63 || v * mul < 1)
    return -1;
  *out = (uint64_t)(v * mul);
  return 0;
}

int mpa_take_max_memory(int *argc, char **argv)
{
  mpa_max_memory = physical_memory() / 2;
  int o = 1;
  for (int i = 1; i < *argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--")) {
      /* "--" and what follows are operands, "--max-memory" among them a file name */
      while (i < *argc)
        argv[o++] = argv[i++];
      break;
    }
    if (!strcmp(argv[i], "--max-memory")) {
      if (i + 1 >= *argc)
        return mpa_error(NULL, "--max-memory needs a size (e.g. 4G, 512M, 50%%)");
      v = argv[++i];
    } else if (!strncmp(argv[i], "--max-memory=", 13)) {
      v = argv[i] + 13;
    } else {
      argv[o++] = argv[i];
      continue;
    }
    if (parse_size(v, &mpa_max_memory))
      return mpa_error(v, "--max-memory wants a size such as 4G, 512M, 1048576 or 50%% (of physical memory)");
  }
  argv[o] = NULL;
  *argc = o;
  return 0;
}

static const char *human(uint64_t b, char *buf, size_t n)
{
  static const char *u[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  double v = (double)b;
  int k = 0;
  while (v >= 1024 && k < 6)
    v /= 1024, k++;
  snprintf(buf, n, k ? "%.1f %s" : "%.0f %s", v, u[k]);
  return buf;
}

int mpa_budget(const char *where, const char *what, uint64_t bytes)
{
  if (bytes <= mpa_max_memory)
    return 0;
  char need[32], lim[32];
  return mpa_error(where, "%s needs about %s, over the memory limit of %s (--max-memory, default half of "
                   "physical memory; raise it with --max-memory SIZE, e.g. --max-memory %lluG)",
                   what, human(bytes, need, sizeof need), human(mpa_max_memory, lim, sizeof lim),
                   (unsigned long long)((bytes >> 30) + 1));
}

