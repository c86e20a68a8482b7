/* The PyTorch reader (analysis/io_pt.c): files written by a real torch.save
   (tests/data/pt/make_pt.py) give every value that torch itself decodes
   (tests/data/pt/expected.txt, hex floats), under the same dotted names, with
   views (transposes, slices with an offset, shared storage) gathered in C order,
   integer/bool tensors skipped and named, and range counts equal to those of
   torch's own conversions (tests/data/pt/counts.txt); hostile archives
   (tests/data/pt/make_hostile.py: pickles that would run a command, views
   outside their storage, absurd nesting and memo indices) are refused with one
   line, and nothing in them is run. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include "testsupport.h"

static char path_buf[4096];
static const char *data(const char *rel)
{
  const char *src = getenv("MPE_SRCDIR");
  snprintf(path_buf, sizeof path_buf, "%s/tests/data/%s", src ? src : MPE_SRCDIR, rel);
  return path_buf;
}

static const struct { const char *dtype; mpe_type t; } dtypes[] = {
  { "float32", MPE_FP32 }, { "float64", MPE_FP64 }, { "float16", MPE_FP16 },
  { "bfloat16", MPE_BF16 }, { "float8_e4m3fn", MPE_E4M3 }, { "float8_e5m2", MPE_E5M2 },
};

/* one line of expected.txt: NAME DTYPE (SHAPE) VALUES... against the reader */
static uint64_t check_tensor(mpe_io *f, char *line, size_t chunk)
{
  char *save, *name = strtok_r(line, " ", &save), *dt = strtok_r(NULL, " ", &save),
       *shape = strtok_r(NULL, " ", &save);
  ck_assert_ptr_nonnull(shape);
  size_t i;
  ck_assert_msg(mpe_io_find(f, name, &i) == 0, "tensor '%s' not found", name);
  mpe_io_tensor t;
  ck_assert_int_eq(mpe_io_info(f, i, &t), 0);
  ck_assert_str_eq(t.name, name);
  int known = 0;
  for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++)
    if (!strcmp(dt, dtypes[k].dtype)) {
      ck_assert_msg(t.dtype == dtypes[k].t, "%s: dtype %d, want %s", name, t.dtype, dt);
      known = 1;
    }
  ck_assert_msg(known, "%s: dtype %s", name, dt);
  /* the shape "(a,b)" */
  int nd = 0;
  uint64_t count = 1;
  for (char *p = shape + 1; *p && *p != ')';) {
    char *e;
    uint64_t s = strtoull(p, &e, 10);
    ck_assert_msg(nd < t.ndim && t.shape[nd] == s, "%s: dimension %d", name, nd);
    nd++;
    count *= s;
    p = *e == ',' ? e + 1 : e;
  }
  ck_assert_int_eq(nd, t.ndim);
  ck_assert_uint_eq(t.count, count);
  ck_assert_int_eq(mpe_io_select(f, i), 0);
  double *want = malloc((count + 1) * sizeof *want), *got = malloc((count + 1) * sizeof *got);
  ck_assert_ptr_nonnull(want);
  ck_assert_ptr_nonnull(got);
  for (uint64_t k = 0; k < count; k++) {
    char *v = strtok_r(NULL, " \n", &save);
    ck_assert_ptr_nonnull(v);
    want[k] = strtod(v, NULL);
  }
  ck_assert_ptr_null(strtok_r(NULL, " \n", &save));
  /* read in pieces of `chunk` values: views resume mid-row */
  uint64_t have = 0;
  for (;;) {
    size_t n;
    if (t.value_type == MPE_FP64) {
      ck_assert_int_eq(mpe_io_read(f, got + have, chunk, &n), 0);
    } else {
      float tmp[64];
      ck_assert_int_eq(mpe_io_read(f, tmp, chunk < 64 ? chunk : 64, &n), 0);
      for (size_t k = 0; k < n; k++)
        got[have + k] = tmp[k];
    }
    if (!n)
      break;
    have += n;
    ck_assert_uint_le(have, count);
  }
  ck_assert_uint_eq(have, count);
  for (uint64_t k = 0; k < count; k++)
    ck_assert_msg(memcmp(&want[k], &got[k], sizeof(double)) == 0, "%s[%llu]: %a, want %a", name,
                  (unsigned long long)k, got[k], want[k]);
  free(want);
  free(got);
  return count;
}

static const char *files[] = { "pt/state.pt", "pt/nested.pt", "pt/bare.pt" };

START_TEST(test_torch_files)
{
  FILE *ex = fopen(data("pt/expected.txt"), "r");
  ck_assert_ptr_nonnull(ex);
  char *line = NULL;
  size_t cap = 0, chunks[] = { 1, 5, 64 };
  uint64_t values = 0;
  size_t tensors = 0, skipped = 0;
  for (size_t c = 0; c < 3; c++) {
    rewind(ex);
    size_t file = 0, nt = 0, ns = 0;
    mpe_io *f = NULL;
    char msg[256];
    while (getline(&line, &cap, ex) > 0) {
      if (line[0] == '#')
        continue;
      if (!f) {
        ck_assert_msg(mpe_io_open(&f, data(files[file]), NULL, msg, sizeof msg) == 0, "%s: %s", files[file], msg);
        ck_assert_int_eq(mpe_io_kind_of(f), MPE_IO_PT);
      }
      if (!strncmp(line, "end ", 4)) {
        ck_assert_uint_eq(mpe_io_count(f), nt);
        ck_assert_uint_eq(mpe_io_skipped(f), ns);
        mpe_io_close(f);
        f = NULL;
        tensors += nt, skipped += ns;
        nt = ns = 0;
        file++;
      } else if (!strncmp(line, "skip ", 5)) {
        char name[256], dt[64];
        ck_assert_int_eq(sscanf(line, "skip %255s %63s", name, dt), 2);
        const char *n, *d, *why;
        ck_assert_int_eq(mpe_io_skipped_info(f, ns, &n, &d, &why), 0);
        ck_assert_str_eq(n, name);
        ck_assert_str_eq(d, dt);
        ck_assert_ptr_nonnull(strstr(why, !strcmp(dt, "bool") ? "bool" : "integer"));
        size_t i;
        ck_assert_int_eq(mpe_io_find(f, name, &i), MPE_ENOTFOUND);
        ns++;
      } else {
        values += check_tensor(f, line, chunks[c]);
        nt++;
      }
    }
    ck_assert_uint_eq(file, 3);
  }
  free(line);
  fclose(ex);
  printf("torch.save files: %zu tensors (%llu values) equal to torch's own decoding, %zu skipped, "
         "read in chunks of 1, 5 and 64\n", tensors / 3, (unsigned long long)(values / 3), skipped / 3);
}
END_TEST

/* the views of state.pt, by hand: view.transpose is grad.fp32 transposed,
   view.slice rows 1.. and columns 1..3 of it, view.row its row 2 */
START_TEST(test_views)
{
  mpe_io *f;
  char msg[256];
  ck_assert_int_eq(mpe_io_open(&f, data("pt/state.pt"), NULL, msg, sizeof msg), 0);
  float base[20], tr[20], sl[9], row[5];
  struct { const char *name; float *v; size_t n; } r[] = {
    { "grad.fp32", base, 20 }, { "view.transpose", tr, 20 }, { "view.slice", sl, 9 }, { "view.row", row, 5 } };
  for (size_t k = 0; k < 4; k++) {
    size_t i, n;
    ck_assert_int_eq(mpe_io_find(f, r[k].name, &i), 0);
    ck_assert_int_eq(mpe_io_select(f, i), 0);
    ck_assert_int_eq(mpe_io_read(f, r[k].v, r[k].n, &n), 0);
    ck_assert_uint_eq(n, r[k].n);
  }
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 5; b++)
      ck_assert(tr[b * 4 + a] == base[a * 5 + b]);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      ck_assert(sl[a * 3 + b] == base[(a + 1) * 5 + b + 1]);
  for (int b = 0; b < 5; b++)
    ck_assert(row[b] == base[10 + b]);
  /* the progress counters cover the four views */
  ck_assert_uint_gt(mpe_io_bytes_done(f), 0);
  mpe_io_close(f);
  /* a big-endian archive (byteorder "big", as torch.save writes on such a machine) */
  ck_assert_int_eq(mpe_io_open(&f, data("pt/big_endian.pt"), NULL, msg, sizeof msg), 0);
  float be[6];
  size_t nbe;
  ck_assert_int_eq(mpe_io_select(f, 0), 0);
  ck_assert_int_eq(mpe_io_read(f, be, 6, &nbe), 0);
  ck_assert_uint_eq(nbe, 6);
  for (int k = 0; k < 6; k++)
    ck_assert(be[k] == (float)(k + 1));
  mpe_io_close(f);
  /* a kind forced on a file of another kind */
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.kind = MPE_IO_PT;
  ck_assert_int_eq(mpe_io_open(&f, data("grads.npz"), &o, msg, sizeof msg), MPE_EFORMAT);
  ck_assert_ptr_nonnull(strstr(msg, "data.pkl"));
  ck_assert_str_eq(mpe_io_kind_name(MPE_IO_PT), "pt");
  /* skipped-tensor names are kept for PyTorch files only */
  o.kind = MPE_IO_AUTO;
  ck_assert_int_eq(mpe_io_open(&f, data("pt/bare.pt"), NULL, msg, sizeof msg), 0);
  const char *n, *d, *w;
  ck_assert_int_eq(mpe_io_skipped_info(f, 0, &n, &d, &w), MPE_EINVAL);
  mpe_io_close(f);
}
END_TEST

/* range counts of every tensor (read through the reader, views included) equal the counts
   torch's own conversions give (tests/data/pt/counts.txt, made by make_pt.py) */
START_TEST(test_counts_equal_torch)
{
  FILE *in = fopen(data("pt/counts.txt"), "r");
  ck_assert_ptr_nonnull(in);
  char line[512];
  size_t rows = 0, nonzero = 0;
  while (fgets(line, sizeof line, in)) {
    char file[64], name[256], fmt[16], rel[96], msg[256];
    unsigned long long u, sn, o;
    if (line[0] == '#')
      continue;
    ck_assert_int_eq(sscanf(line, "%63s %255s %15s %llu %llu %llu", file, name, fmt, &u, &sn, &o), 6);
    snprintf(rel, sizeof rel, "pt/%s", file);
    mpe_io *f;
    ck_assert_int_eq(mpe_io_open(&f, data(rel), NULL, msg, sizeof msg), 0);
    size_t i;
    ck_assert_msg(mpe_io_find(f, name, &i) == 0, "%s: %s", file, name);
    const mpe_format *fm = mpe_format_lookup(fmt);
    ck_assert_ptr_nonnull(fm);
    mpe_range *r;
    ck_assert_int_eq(mpe_range_create(&r, &fm, 1, NULL), MPE_OK);
    ck_assert_int_eq(mpe_io_select(f, i), 0);
    float v[7];
    size_t n;
    while (mpe_io_read(f, v, 7, &n) == 0 && n)
      ck_assert_int_eq(mpe_range_add_f32(r, v, n), 0);
    mpe_range_stats st;
    ck_assert_int_eq(mpe_range_stats_get(r, 0, &st), 0);
    ck_assert_msg(st.underflow == u && st.subnormal == sn && st.overflow == o,
                  "%s %s %s: underflow %llu subnormal %llu overflow %llu, torch %llu %llu %llu", file, name, fmt,
                  (unsigned long long)st.underflow, (unsigned long long)st.subnormal,
                  (unsigned long long)st.overflow, u, sn, o);
    rows++;
    nonzero += u + sn + o > 0;
    mpe_range_free(r);
    mpe_io_close(f);
  }
  fclose(in);
  ck_assert_uint_gt(nonzero, 20);
  printf("range counts equal to torch's conversions: %zu tensor x format rows (%zu with events)\n", rows, nonzero);
}
END_TEST

static const struct { const char *file; int rc; const char *says; } hostile[] = {
  { "pt_os_system.pt", MPE_EFORMAT, "'posix.system', which is not allowed" },
  { "pt_eval.pt", MPE_EFORMAT, "eval', which is not allowed" },
  { "pt_stack_global.pt", MPE_EFORMAT, "'posix.system', which is not allowed" },
  { "pt_call_odict.pt", MPE_EFORMAT, "OrderedDict called with arguments" },
  { "pt_call_storage.pt", MPE_EFORMAT, "not a tensor rebuild" },
  { "pt_oob_size.pt", MPE_EFORMAT, "reaches element 8 but the storage holds 6" },
  { "pt_oob_offset.pt", MPE_EFORMAT, "reaches element 6 but the storage holds 6" },
  { "pt_oob_stride.pt", MPE_EFORMAT, "reaches element 9" },
  { "pt_stride_overflow.pt", MPE_EFORMAT, "storage holds 6" },
  { "pt_storage_size.pt", MPE_EFORMAT, "claims 28 bytes but its member holds 24" },
  { "pt_storage_missing.pt", MPE_EFORMAT, "no member data/9" },
  { "pt_storage_key.pt", MPE_EFORMAT, "storage key with characters" },
  { "pt_deep.pt", MPE_EFORMAT, "nested deeper than 64" },
  { "pt_bomb.pt", MPE_EFORMAT, "too many times" },
  { "pt_cycle.pt", MPE_EFORMAT, "nested deeper" },
  { "pt_memo_huge.pt", MPE_EFORMAT, "memo index 4294967280 is absurd" },
  { "pt_memo_unset.pt", MPE_EFORMAT, "never set" },
  { "pt_inst.pt", MPE_EFORMAT, "opcode 0x69 is not allowed" },
  { "pt_persid_text.pt", MPE_EFORMAT, "opcode 0x50 is not allowed" },
  { "pt_newobj.pt", MPE_EFORMAT, "opcode 0x81 is not allowed" },
  { "pt_truncated.pt", MPE_EFORMAT, "ends inside an opcode" },
  { "pt_no_stop.pt", MPE_EFORMAT, "without STOP" },
  { "pt_long_string.pt", MPE_EFORMAT, "runs past its end" },
  { "pt_key_utf8.pt", MPE_EFORMAT, "UTF-8" },
  { "pt_byteorder.pt", MPE_EFORMAT, "byteorder" },
  { "pt_legacy.pt", MPE_EUNSUP, "before PyTorch 1.6" },
  { "pt_bare_pickle.pt", MPE_EUNSUP, "bare pickle" },
};

START_TEST(test_hostile)
{
  char rel[128], msg[256];
  snprintf(rel, sizeof rel, "hostile/%s", hostile[_i].file);
  mpe_io *f = (mpe_io *)1;
  int rc = mpe_io_open(&f, data(rel), NULL, msg, sizeof msg);
  ck_assert_msg(rc == hostile[_i].rc, "%s: rc %d (%s)", hostile[_i].file, rc, msg);
  ck_assert_ptr_null(f);
  ck_assert_msg(strstr(msg, hostile[_i].says) != NULL, "%s: message '%s'", hostile[_i].file, msg);
  ck_assert_ptr_null(strchr(msg, '\n'));
  /* the command those pickles would run creates this file: it must not exist */
  ck_assert_int_ne(access("mpemu-pwned-marker", F_OK), 0);
}
END_TEST

/* an empty tuple made by MARK TUPLE before any other tuple (found by fuzz_pkl: the
   tuple pool was still NULL, and UBSan stopped on NULL + 0): a valid pickle of no tensor */
START_TEST(test_empty_tuple)
{
  char msg[256];
  mpe_io *f = NULL;
  ck_assert_int_eq(mpe_io_open(&f, data("hostile/pt_empty_tuple.pt"), NULL, msg, sizeof msg), MPE_OK);
  ck_assert_uint_eq(mpe_io_count(f), 0);
  ck_assert_uint_eq(mpe_io_skipped(f), 0);
  mpe_io_close(f);
}
END_TEST

/* files legal for torch.load that the reader first mishandled (tests/data/pt/attack/make_attack.py) */
static const struct { const char *file; int rc; const char *says; } attack[] = {
  /* the same key twice in one dict; a key "a.b" beside a dict a holding b: one name, two tensors */
  { "dup_key.pt", MPE_EFORMAT, "two tensors named 'w'" },
  { "name_clash.pt", MPE_EFORMAT, "two tensors named 'a.b'" },
  /* 2^62 elements broadcast (stride 0) from one: would be streamed for ever */
  { "broadcast_huge.pt", MPE_EUNSUP, "broadcast" },
  /* one tensor under 100000 names of 1000 bytes from a 1 kB file */
  { "name_bomb.pt", MPE_EFORMAT, "names" },
  /* 50000 integers in a list referred to 200000 times: 10^10 leaves walked from a 1 kB file */
  { "leaf_walk.pt", MPE_EFORMAT, "too many times" },
  /* 5 million values made and dropped: 120 MB held for a 10 kB file */
  { "value_flood.pt", MPE_EFORMAT, "values" },
  /* 64 broadcast views of 2^30 elements each from one stored value: streamed for hours */
  { "broadcast_many.pt", MPE_EUNSUP, "in all" },
  /* an int64 a.b beside a float32 a.b: a --dtype glob adopting it made a second 'a.b' */
  { "int_beside.pt", MPE_EFORMAT, "two tensors named 'a.b'" },
};

START_TEST(test_attack)
{
  char rel[128], msg[256];
  snprintf(rel, sizeof rel, "pt/attack/%s", attack[_i].file);
  mpe_io *f = (mpe_io *)1;
  int rc = mpe_io_open(&f, data(rel), NULL, msg, sizeof msg);
  if (rc == 0)
    mpe_io_close(f);
  ck_assert_msg(rc == attack[_i].rc, "%s: rc %d (%s)", attack[_i].file, rc, rc ? msg : "opened");
  ck_assert_ptr_null(f);
  ck_assert_msg(strstr(msg, attack[_i].says) != NULL, "%s: message '%s'", attack[_i].file, msg);
  ck_assert_ptr_null(strchr(msg, '\n'));
}
END_TEST

/* an empty tensor may have any storage offset (torch.load accepts it): it reads as 0 values */
START_TEST(test_empty_far_offset)
{
  mpe_io *f;
  char msg[256];
  ck_assert_msg(mpe_io_open(&f, data("pt/attack/empty_far_offset.pt"), NULL, msg, sizeof msg) == 0, "%s", msg);
  size_t i, n = 1;
  float v[4];
  ck_assert_int_eq(mpe_io_find(f, "w", &i), 0);
  ck_assert_msg(mpe_io_select(f, i) == 0, "select: %s", mpe_io_message(f));
  ck_assert_msg(mpe_io_read(f, v, 4, &n) == 0, "read: %s", mpe_io_message(f));
  ck_assert_uint_eq(n, 0);
  mpe_io_close(f);
}
END_TEST

/* mpe_io_opts.max_memory: what the reader holds for a file, counted before it is
   allocated (before: a 64 MiB storage held for a transposed view and a list of
   200,000 tensors whatever the limit) */
START_TEST(test_max_memory)
{
  mpe_io *f;
  char msg[256];
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.max_memory = 16u << 20;
  /* a transposed view of a deflated 64 MiB storage: opens, but selecting it would hold the storage */
  ck_assert_msg(mpe_io_open(&f, data("pt/attack/big_view.pt"), &o, msg, sizeof msg) == 0, "%s", msg);
  ck_assert_int_eq(mpe_io_select(f, 0), MPE_EUNSUP);
  ck_assert_msg(strstr(mpe_io_message(f), "over the memory limit of 16777216 bytes"), "%s", mpe_io_message(f));
  mpe_io_close(f);
  o.max_memory = 80u << 20;   /* room for it: read whole, every value 0 */
  ck_assert_msg(mpe_io_open(&f, data("pt/attack/big_view.pt"), &o, msg, sizeof msg) == 0, "%s", msg);
  ck_assert_int_eq(mpe_io_select(f, 0), 0);
  static float v[1 << 16];
  size_t n, total = 0, nonzero = 0;
  while (mpe_io_read(f, v, 1 << 16, &n) == 0 && n)
    for (size_t k = 0; k < n; k++, total++)
      nonzero += v[k] != 0;
  ck_assert_uint_eq(total, 1u << 24);
  ck_assert_uint_eq(nonzero, 0);
  mpe_io_close(f);
  /* one tensor listed 200,001 times: the tables for the list pass 8 MiB */
  o.max_memory = 8u << 20;
  f = (mpe_io *)1;
  ck_assert_int_eq(mpe_io_open(&f, data("pt/attack/listed_many.pt"), &o, msg, sizeof msg), MPE_EUNSUP);
  ck_assert_ptr_null(f);
  ck_assert_msg(strstr(msg, "memory limit of 8388608 bytes"), "%s", msg);
  o.max_memory = 0;
  ck_assert_msg(mpe_io_open(&f, data("pt/attack/listed_many.pt"), &o, msg, sizeof msg) == 0, "%s", msg);
  ck_assert_uint_eq(mpe_io_count(f), 200001);   /* w.0 and its 200,000 listings */
  mpe_io_close(f);
}
END_TEST

/* a storage member whose deflate stream is longer than its declared 24 bytes (CRC of the
   24 bytes, or of all 48): refused once the tensor's values are read, as .npz does (before:
   the values came back with no error) */
START_TEST(test_member_longer)
{
  static const char *const files[] = { "pt/attack/longer_crc24.pt", "pt/attack/longer_crc48.pt" };
  mpe_io *f;
  char msg[256];
  ck_assert_msg(mpe_io_open(&f, data(files[_i]), NULL, msg, sizeof msg) == 0, "%s", msg);
  ck_assert_int_eq(mpe_io_select(f, 0), 0);
  float v[8];
  size_t n = 0;
  int rc = mpe_io_read(f, v, 8, &n);
  ck_assert_msg(rc == MPE_EFORMAT, "%s: rc %d, %zu values", files[_i], rc, n);
  ck_assert_msg(strstr(mpe_io_message(f), "storage '0' is longer than declared") ||
                strstr(mpe_io_message(f), "storage '0' is corrupt"), "%s", mpe_io_message(f));
  ck_assert_ptr_null(strstr(mpe_io_message(f), "No error"));
  mpe_io_close(f);
}
END_TEST

/* the fuzz corpus of the PyTorch target, replayed (crashes found later go in tests/fuzz/crashes) */
static void replay(const char *path, void *ctx)
{
  size_t *n = ctx;
  mpe_io *f;
  char msg[256];
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.kind = MPE_IO_PT;
  o.chunk_bytes = 4096;
  if (mpe_io_open(&f, path, &o, msg, sizeof msg) == 0) {
    double buf[700];
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      size_t k;
      if (mpe_io_select(f, i) == 0)
        while (mpe_io_read(f, buf, 700, &k) == 0 && k)
          ;
    }
    mpe_io_close(f);
  }
  ++*n;
}

START_TEST(test_fuzz_replay)
{
  size_t n = 0;
  ts_each_file("tests/fuzz/corpus/pt", "", replay, &n);
  ts_each_file("tests/fuzz/crashes", "pt-", replay, &n);
  ck_assert_uint_gt(n, 0);
  printf("pt fuzz replay: %zu files\n", n);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("io_pt");
  TCase *tc = tcase_create("torch");
  tcase_add_test(tc, test_torch_files);
  tcase_add_test(tc, test_views);
  tcase_add_test(tc, test_counts_equal_torch);
  suite_add_tcase(s, tc);
  tc = tcase_create("hostile");
  tcase_add_test(tc, test_empty_tuple);
  tcase_add_loop_test(tc, test_hostile, 0, (int)(sizeof hostile / sizeof hostile[0]));
  tcase_add_test(tc, test_fuzz_replay);
  tcase_add_loop_test(tc, test_attack, 0, (int)(sizeof attack / sizeof attack[0]));
  tcase_add_test(tc, test_empty_far_offset);
  tcase_add_test(tc, test_max_memory);
  tcase_add_loop_test(tc, test_member_longer, 0, 2);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
