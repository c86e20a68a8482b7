/* The cuBLAS/cuBLASLt/cuSOLVER loaders of cuda_lazy.h. The libraries are looked for
   first in the toolkit configure found (MPE_CUDA_LIBDIR), then by soname
   (LD_LIBRARY_PATH, the loader cache), with the major version the code was
   compiled against (cuBLAS and cuSOLVER have their own). They stay loaded until the process ends. */
#include "config.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#define MPEI_CUDA_LAZY_IMPL
#include "cuda_lazy.h"

#ifndef MPE_CUDA_LIBDIR
#define MPE_CUDA_LIBDIR ""
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
#define SOVER(major) "." STR(major)

mpei_cublas_api mpei_cublas;
mpei_cusolver_api mpei_cusolver;

static pthread_once_t once = PTHREAD_ONCE_INIT, once_solver = PTHREAD_ONCE_INIT;
static int load_rc = MPE_EDEVICE, load_solver_rc = MPE_EDEVICE;
static char load_why[512] = "not loaded", load_solver_why[512] = "not loaded";

static void *open_lib(const char *name, const char *sover, char *why, size_t whylen)
{
  char path[1024];
  void *h = NULL;
  if (MPE_CUDA_LIBDIR[0]) {
    snprintf(path, sizeof path, "%s/%s%s", MPE_CUDA_LIBDIR, name, sover);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h) {
    snprintf(path, sizeof path, "%s%s", name, sover);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (!h)
    snprintf(why, whylen, "cannot load %s%s: %s", name, sover, dlerror());
  return h;
}

/* dlsym through h (and the libraries it depends on); on failure `why` says which */
static int sym(void *h, const char *name, void **slot, char *why, size_t whylen)
{
  *slot = dlsym(h, name);
  if (!*slot)
    snprintf(why, whylen, "no symbol %s", name);
  return *slot != NULL;
}

static void load(void)
{
  /* cuBLASLt first: libcublas needs it and then finds it already loaded; its
     symbols are then found through libcublas's dependencies */
  const char *v = SOVER(CUBLAS_VER_MAJOR);
  void *lt = open_lib("libcublasLt.so", v, load_why, sizeof load_why);
  void *blas = lt ? open_lib("libcublas.so", v, load_why, sizeof load_why) : NULL;
  if (!blas)
    return;
  mpei_cublas_api a;
#define MPEI_CUBLAS_SYM(f) \
  if (!sym(blas, #f, (void **)&a.f, load_why, sizeof load_why)) \
    return;
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

static void load_solver(void)
{
  void *h = open_lib("libcusolver.so", SOVER(CUSOLVER_VER_MAJOR), load_solver_why, sizeof load_solver_why);
  if (!h)
    return;
  mpei_cusolver_api a;
#define MPEI_CUSOLVER_SYM(f) \
  if (!sym(h, #f, (void **)&a.f, load_solver_why, sizeof load_solver_why)) \
    return;
  MPEI_CUSOLVER_FUNCS(MPEI_CUSOLVER_SYM)
#undef MPEI_CUSOLVER_SYM
  mpei_cusolver = a;
  load_solver_why[0] = 0;
  load_solver_rc = MPE_OK;
}

int mpei_cusolver_load(const char **why)
{
  pthread_once(&once_solver, load_solver);
  if (why)
    *why = load_solver_why;
  return load_solver_rc;
}
