/* The README's analysis tour: the constructor convention and a range report on
   gradient-like values (libmpemu-analysis).
   Build: cc tour_range.c $(pkg-config --cflags --libs mpemu-analysis) */
#include <stdio.h>
#include <mpemu.h>

int main(void)
{
  static float g[100000];
  const size_t n = sizeof g / sizeof g[0];
  mpe_train_randn(g, n, 7);
  for (size_t i = 0; i < n; i++)
    g[i] *= 1e-6f;                           /* gradients of about 1e-6: FP16 underflows */
  const mpe_format *formats[2] = { mpe_format_of(MPE_FP16), mpe_format_of(MPE_BF16) };

  mpe_range *r;
  int rc = mpe_range_create(&r, formats, 2, NULL);
  if (rc)
    fprintf(stderr, "range: %s\n", mpe_strerror(rc));   /* r is NULL here */
  if (!rc)
    rc = mpe_range_add_f32(r, g, n);
  for (size_t k = 0; !rc && k < 2; k++) {
    mpe_range_stats s;
    if (!(rc = mpe_range_stats_get(r, k, &s)))
      printf("%-5s %6llu of %zu values underflow, %6llu are subnormal; loss scale 2^%d\n",
             mpe_format_name(formats[k]), (unsigned long long)s.underflow, n,
             (unsigned long long)s.subnormal, s.scale_log2);
  }
  mpe_range_free(r);

  /* a bad argument is told apart from no memory, and the pointer is NULL after it */
  mpe_range *bad = (mpe_range *)formats;
  int einval = mpe_range_create(&bad, formats, 0, NULL);
  printf("no formats: %s (pointer %s)\n", mpe_strerror(einval), bad ? "set" : "NULL");
  return rc || einval != MPE_EINVAL || bad != NULL;
}
