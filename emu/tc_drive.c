/* The loop nest of the fast GEMM paths (tc_drive.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mpei_threads.h"
#include "tc_drive.h"

enum { TILE_BYTES = 8192 };

int mpei_gemm_threads(void)
{
  return mpei_threads_team();
}

/* element (i, j) of acc to dst, or zero outside M × N */
static inline void cell_in(const mpei_gemm_plan *p, void *dst, int i, int j)
{
  const size_t es = (size_t)p->esize;
  if (i < p->M && j < p->N)
    memcpy(dst, (const char *)p->acc + ((size_t)i * p->N + j) * es, es);
  else
    memset(dst, 0, es);
}

/* The kernel tile (ip, jp) of acc: in place when whole, else through buf. */
static void *tile_get(const mpei_gemm_plan *p, int ip, int jp, void *buf, long *ldc)
{
  const size_t es = (size_t)p->esize;
  if ((ip + 1) * p->mr <= p->M && (jp + 1) * p->nr <= p->N) {
    *ldc = p->N;
    return (char *)p->acc + ((size_t)ip * p->mr * p->N + (size_t)jp * p->nr) * es;
  }
  for (int rr = 0; rr < p->mr; rr++)
    for (int jj = 0; jj < p->nr; jj++)
      cell_in(p, (char *)buf + ((size_t)rr * p->nr + jj) * es, ip * p->mr + rr, jp * p->nr + jj);
  *ldc = p->nr;
  return buf;
}

static void tile_put(const mpei_gemm_plan *p, int ip, int jp, const void *buf, const void *tile)
{
  const size_t es = (size_t)p->esize;
  if (tile != buf)
    return;
  for (int rr = 0; rr < p->mr; rr++)
    for (int jj = 0; jj < p->nr; jj++) {
      const int i = ip * p->mr + rr, j = jp * p->nr + jj;
      if (i < p->M && j < p->N)
        memcpy((char *)p->acc + ((size_t)i * p->N + j) * es, (const char *)buf + ((size_t)rr * p->nr + jj) * es, es);
    }
}

static inline int needs_fix(const mpei_gemm_plan *p, int i, int j)
{
  return p->rowbad[i] || p->colbad[j] || (p->cbad && p->cbad(p->ctx, i, j));
}

/* Thread tile (ti, tj): its K loop, then with epi the fix-up and epilogue. */
static void thread_tile(const mpei_gemm_plan *p, int ti, int tj, float *tacc, void *scratch)
{
  _Alignas(64) unsigned char cbuf[TILE_BYTES];
  const int mp = (p->M + p->mr - 1) / p->mr, np = (p->N + p->nr - 1) / p->nr;
  const int tm = p->mcp * p->mr, tn = p->ncp * p->nr, i0 = ti * tm, j0 = tj * tn;
  if (tacc)
    memset(tacc, 0, sizeof(float) * (size_t)tm * tn);
  for (int k0 = 0; k0 < p->K; k0 += p->kc) {
    const int kn = p->K - k0 < p->kc ? p->K - k0 : p->kc;
    for (int jp = tj * p->ncp; jp < np && jp < (tj + 1) * p->ncp; jp++)
      for (int ip = ti * p->mcp; ip < mp && ip < (ti + 1) * p->mcp; ip++) {
        long ldc;
        void *cp;
        if (tacc) {   /* the thread's tile buffer, whole kernel tiles: in place */
          ldc = tn;
          cp = tacc + (size_t)(ip * p->mr - i0) * tn + (size_t)(jp * p->nr - j0);
        } else {
          cp = tile_get(p, ip, jp, cbuf, &ldc);
        }
        p->tile(p->ctx, ip, jp, k0, kn, cp, ldc);
        if (!tacc)
          tile_put(p, ip, jp, cbuf, cp);
      }
  }
  if (!tacc)
    return;
  const int ni = p->M - i0 < tm ? p->M - i0 : tm, nj = p->N - j0 < tn ? p->N - j0 : tn;
  if (p->rowbad)   /* outputs touched by inf/NaN: the portable engine */
    for (int ii = 0; ii < ni; ii++)
      for (int jj = 0; jj < nj; jj++)
        if (needs_fix(p, i0 + ii, j0 + jj))
          tacc[(size_t)ii * tn + jj] = p->fix(p->ctx, i0 + ii, j0 + jj, scratch);
  for (int ii = 0; ii < ni; ii++)
    p->epi(p->C + (size_t)(i0 + ii) * p->ldc + j0, tacc + (size_t)ii * tn, nj, p->alpha, p->beta, 1);
}

int mpei_gemm_run(const mpei_gemm_plan *p)
{
  if ((size_t)p->mr * p->nr * p->esize > TILE_BYTES || (p->epi && p->esize != 4))
    return MPE_EUNSUP;
  const int mp = (p->M + p->mr - 1) / p->mr, np = (p->N + p->nr - 1) / p->nr;
  const int mt = (mp + p->mcp - 1) / p->mcp, nt = (np + p->ncp - 1) / p->ncp;
  const size_t tsz = p->epi ? (size_t)p->mcp * p->mr * p->ncp * p->nr : 0;
  const size_t ssz = p->epi && p->rowbad ? (p->fix_scratch + 63) / 64 * 64 : 0;
  const int par = p->work > 100000, nthr = par ? mpei_gemm_threads() : 1;
  /* each thread's tile buffer and scratch, allocated before C is touched */
  float *tacc_all = NULL;
  unsigned char *scr_all = NULL;
  if (p->epi) {
    tacc_all = malloc(sizeof(float) * tsz * (size_t)nthr);
    scr_all = malloc(ssz * (size_t)nthr + 1);
    if (!tacc_all || !scr_all) {
      free(tacc_all);
      free(scr_all);
      return MPE_ENOMEM;
    }
  }
#pragma omp parallel if (par) num_threads(nthr)
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
    int me = 0;
#ifdef _OPENMP
    me = omp_get_thread_num();
#endif
    float *tacc = p->epi ? tacc_all + tsz * (size_t)me : NULL;
    void *scratch = p->epi ? scr_all + ssz * (size_t)me : NULL;
#pragma omp for schedule(dynamic) collapse(2)
    for (int ti = 0; ti < mt; ti++)
      for (int tj = 0; tj < nt; tj++)
        thread_tile(p, ti, tj, tacc, scratch);
  }
  free(tacc_all);
  free(scr_all);
  return MPE_OK;
}

int mpei_gemm_fixup(const mpei_gemm_plan *p, float *acc)
{
  if (!p->rowbad)
    return MPE_OK;
  void *scratch = malloc(p->fix_scratch + 1);
  if (!scratch)
    return MPE_ENOMEM;
  for (int i = 0; i < p->M; i++)
    for (int j = 0; j < p->N; j++)
      if (needs_fix(p, i, j))
        acc[(size_t)i * p->N + j] = p->fix(p->ctx, i, j, scratch);
  free(scratch);
  return MPE_OK;
}
