/* The cuBLAS/cuBLASLt loader of cublas_lazy.h. The libraries are looked for
   first in the toolkit configure found (MPE_CUDA_LIBDIR), then by soname
   (LD_LIBRARY_PATH, the loader cache), with the major version the code was
   compiled against. They stay loaded until the process ends. */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#define MPEI_CUBLAS_LAZY_IMPL
#include "cublas_lazy.h"

#ifndef MPE_CUDA_LIBDIR
#define MPE_CUDA_LIBDIR ""
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
#define SOVER "." STR(CUBLAS_VER_MAJOR)

mpei_cublas_api mpei_cublas;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc = MPE_EDEVICE;
static char load_why[512] = "not loaded";

static void *open_lib(const char *name)
{
  char path[1024];
  void *h = NULL;
  if (MPE_CUDA_LIBDIR[0]) {
    snprintf(path, sizeof path, "%s/%s%s", MPE_CUDA_LIBDIR, name, SOVER);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    snprintf(path, sizeof path, "%s%s", name, SOVER);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h)
    snprintf(load_why, sizeof load_why, "cannot load %s%s: %s", name, SOVER, dlerror());
  return h;
}

static void load(void)
{
  /* cuBLASLt first: libcublas needs it and then finds it already loaded */
  void *lt = open_lib("libcublasLt.so");
  void *blas = lt ? open_lib("libcublas.so") : NULL;
  if (!lt || !blas)
    return;
  mpei_cublas_api a;
#define MPEI_CUBLAS_SYM(f)                                                        \
  *(void **)&a.f = dlsym(strncmp(#f, "cublasLt", 8) == 0 ? lt : blas, #f);         \
  if (!a.f) {                                                                     \
    snprintf(load_why, sizeof load_why, "cuBLAS has no symbol %s", #f);           \
    return;                                                                       \
  }
  MPEI_CUBLAS_FUNCS(MPEI_CUBLAS_SYM)
#undef MPEI_CUBLAS_SYM
  mpei_cublas = a;
  load_why[0] = 0;
  load_rc = MPE_OK;
}

int mpei_cublas_load(const char **why)
{
  pthread_once(&once, load);
  if (why)
    *why = load_why;
  return load_rc;
}
