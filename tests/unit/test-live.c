/* Unit tests for live.c/events.c's pure parts: runc's size and duration syntax for update and
 * events, and the stats event's JSON (runc's names, omitempty, counters above INT64_MAX). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "live.h"
#include "tap.h"
#include "utils.h"

static void check_bytes(const char *text, int64_t want) {
  cleanup_error fsrun_error_t err = NULL;
  int64_t got = 0;
  int ret = live_parse_bytes(text, &got, &err);
  tap_ok(ret == 0 && got == want, "size `%s` = %lld (got %lld%s%s)", text, (long long)want,
         (long long)got, err ? ", " : "", err ? err->msg : "");
}

static void check_bytes_rejected(const char *text) {
  cleanup_error fsrun_error_t err = NULL;
  int64_t got = 0;
  int ret = live_parse_bytes(text, &got, &err);
  tap_ok(ret < 0 && err != NULL && strstr(err->msg, "size") != NULL, "size `%s` is rejected (%s)",
         text, err ? err->msg : "accepted");
}

static void check_duration(const char *text, uint64_t want) {
  cleanup_error fsrun_error_t err = NULL;
  uint64_t got = 0;
  int ret = live_parse_duration(text, &got, &err);
  tap_ok(ret == 0 && got == want, "duration `%s` = %llu ns (got %llu%s%s)", text,
         (unsigned long long)want, (unsigned long long)got, err ? ", " : "", err ? err->msg : "");
}

static void check_duration_rejected(const char *text) {
  cleanup_error fsrun_error_t err = NULL;
  uint64_t got = 0;
  int ret = live_parse_duration(text, &got, &err);
  tap_ok(ret < 0 && err != NULL && strstr(err->msg, "duration") != NULL,
         "duration `%s` is rejected (%s)", text, err ? err->msg : "accepted");
}

/* "" for anything but a string, so comparisons never see NULL */
static const char *str_of(yajl_val v) {
  return YAJL_IS_STRING(v) && v->u.string != NULL ? v->u.string : "";
}

/* the number's text, "" for anything else */
static const char *number_text_of(yajl_val v) {
  return YAJL_IS_NUMBER(v) && v->u.number.r != NULL ? v->u.number.r : "";
}

static yajl_val path_get(yajl_val root, const char *const *path) {
  return yajl_tree_get(root, (const char **)path, yajl_t_any);
}

static void test_stats_json(void) {
  cleanup_error fsrun_error_t err = NULL;
  uint64_t percpu[] = {10, 20};
  live_blkio_entry bytes[] = {{8, 0, "Read", 4096}, {8, 0, "Write", 0}};
  live_hugetlb huge[] = {{(char *)"2MB", 0, 0, 3}};
  live_stats s;
  char errbuf[256] = "";
  cleanup_free char *json = NULL;
  yajl_val root;

  memset(&s, 0, sizeof(s));
  s.base.cpu_usage_total = 30;
  s.base.cpu_usage_user = 0; /* always written, as runc does */
  s.base.cpu_usage_kernel = 5;
  s.base.memory_usage = 1 << 20;
  s.base.memory_limit = UINT64_MAX; /* v2 "max" */
  s.base.pids_current = 2;
  oci_map_set(&s.base.memory_raw, "rss", "12345");
  oci_map_set(&s.base.memory_raw, "odd", "not-a-number");
  s.percpu = percpu;
  s.n_percpu = 2;
  s.service_bytes.items = bytes;
  s.service_bytes.len = 2;
  s.hugetlb = huge;
  s.n_hugetlb = 1;

  json = live_stats_event_json("box-1", &s, &err);
  oci_map_free(&s.base.memory_raw);
  if (!tap_ok(json != NULL, "stats JSON is generated (%s)", err ? err->msg : "ok"))
    return;
  tap_ok(strchr(json, '\n') == NULL, "stats JSON is one line");
  root = yajl_tree_parse(json, errbuf, sizeof(errbuf));
  if (!tap_ok(root != NULL, "stats JSON parses (%s)", errbuf)) {
    tap_diag("%s", json);
    return;
  }
  {
    const char *type[] = {"type", NULL}, *id[] = {"id", NULL};
    const char *total[] = {"data", "cpu", "usage", "total", NULL};
    const char *user[] = {"data", "cpu", "usage", "user", NULL};
    const char *pc[] = {"data", "cpu", "usage", "percpu", NULL};
    const char *periods[] = {"data", "cpu", "throttling", "periods", NULL};
    const char *throttling[] = {"data", "cpu", "throttling", NULL};
    const char *limit[] = {"data", "memory", "usage", "limit", NULL};
    const char *usage[] = {"data", "memory", "usage", "usage", NULL};
    const char *failcnt[] = {"data", "memory", "usage", "failcnt", NULL};
    const char *max[] = {"data", "memory", "usage", "max", NULL};
    const char *cache[] = {"data", "memory", "cache", NULL};
    const char *rss[] = {"data", "memory", "raw", "rss", NULL};
    const char *odd[] = {"data", "memory", "raw", "odd", NULL};
    const char *swap_limit[] = {"data", "memory", "swap", "limit", NULL};
    const char *pids_current[] = {"data", "pids", "current", NULL};
    const char *pids_limit[] = {"data", "pids", "limit", NULL};
    const char *blk[] = {"data", "blkio", "ioServiceBytesRecursive", NULL};
    const char *serviced[] = {"data", "blkio", "ioServicedRecursive", NULL};
    const char *huge_failcnt[] = {"data", "hugetlb", "2MB", "failcnt", NULL};
    const char *huge_usage[] = {"data", "hugetlb", "2MB", "usage", NULL};
    yajl_val v;

    v = path_get(root, type);
    tap_ok(strcmp(str_of(v), "stats") == 0, "type is stats");
    v = path_get(root, id);
    tap_ok(strcmp(str_of(v), "box-1") == 0, "id is the container");
    v = path_get(root, total);
    tap_ok(YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) == 30, "cpu.usage.total");
    v = path_get(root, user);
    tap_ok(YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) == 0, "cpu.usage.user is there when 0");
    v = path_get(root, pc);
    tap_ok(YAJL_IS_ARRAY(v) && v->u.array.len == 2 && YAJL_GET_INTEGER(v->u.array.values[1]) == 20,
           "cpu.usage.percpu");
    tap_ok(path_get(root, periods) == NULL && YAJL_IS_OBJECT(path_get(root, throttling)),
           "zero throttling counters are left out, the object stays");
    v = path_get(root, limit);
    tap_ok(strcmp(number_text_of(v), "18446744073709551615") == 0,
           "memory.usage.limit carries UINT64_MAX exactly");
    v = path_get(root, usage);
    tap_ok(YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) == 1 << 20, "memory.usage.usage");
    tap_ok(YAJL_IS_INTEGER(path_get(root, failcnt)) && path_get(root, max) == NULL &&
               path_get(root, cache) == NULL,
           "failcnt always, max and cache only when non-zero");
    v = path_get(root, rss);
    tap_ok(YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) == 12345, "memory.raw.rss");
    tap_ok(path_get(root, odd) == NULL, "a non-numeric memory.stat value is left out");
    tap_ok(YAJL_IS_INTEGER(path_get(root, swap_limit)), "memory.swap.limit is there when 0");
    v = path_get(root, pids_current);
    tap_ok(YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) == 2, "pids.current");
    tap_ok(path_get(root, pids_limit) == NULL, "pids.limit 0 (max) is left out");
    v = path_get(root, blk);
    tap_ok(YAJL_IS_ARRAY(v) && v->u.array.len == 2, "blkio.ioServiceBytesRecursive has 2 entries");
    if (YAJL_IS_ARRAY(v) && v->u.array.len == 2) {
      const char *op[] = {"op", NULL}, *value[] = {"value", NULL}, *major[] = {"major", NULL};
      yajl_val e0 = v->u.array.values[0], e1 = v->u.array.values[1];
      tap_ok(strcmp(str_of(path_get(e0, op)), "Read") == 0 &&
                 YAJL_GET_INTEGER(path_get(e0, value)) == 4096 &&
                 YAJL_GET_INTEGER(path_get(e0, major)) == 8,
             "blkio entry: major, op, value");
      tap_ok(path_get(e1, value) == NULL, "blkio entry: a zero value is left out");
    }
    tap_ok(path_get(root, serviced) == NULL, "an empty blkio list is left out");
    v = path_get(root, huge_failcnt);
    tap_ok(YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) == 3 && path_get(root, huge_usage) == NULL,
           "hugetlb.2MB.failcnt, usage left out when 0");
  }
  yajl_tree_free(root);
}

int main(void) {
  check_bytes("-1", -1);
  check_bytes("0", 0);
  check_bytes("1048576", 1048576);
  check_bytes("64m", 64LL << 20);
  check_bytes("64M", 64LL << 20);
  check_bytes("64mb", 64LL << 20);
  check_bytes("64MiB", 64LL << 20);
  check_bytes("128k", 128LL << 10);
  check_bytes("1g", 1LL << 30);
  check_bytes("1.5g", 3LL << 29);
  check_bytes("2 GB", 2LL << 30);
  check_bytes("1t", 1LL << 40);
  check_bytes("3p", 3LL << 50);
  check_bytes("100b", 100);
  check_bytes_rejected("");
  check_bytes_rejected("m");
  check_bytes_rejected("-2");
  check_bytes_rejected("-64m");
  check_bytes_rejected("64x");
  check_bytes_rejected("64mm");
  check_bytes_rejected("1.2.3g");
  check_bytes_rejected("8192p");
  check_bytes_rejected("99999999999999999999999");

  check_duration("5s", 5000000000ULL);
  check_duration("250ms", 250000000ULL);
  check_duration("1m30s", 90000000000ULL);
  check_duration("1.5h", 5400000000000ULL);
  check_duration("100us", 100000ULL);
  check_duration("100\xc2\xb5s", 100000ULL);
  check_duration("10ns", 10ULL);
  check_duration("0.5s", 500000000ULL);
  check_duration_rejected("");
  check_duration_rejected("5");
  check_duration_rejected("0s");
  check_duration_rejected("-1s");
  check_duration_rejected("5x");
  check_duration_rejected("s");
  check_duration_rejected("99999999999h");

  test_stats_json();
  return tap_done();
}
