/* json-out.c, the one JSON writer of `sandbox --json`, the audit log, `exec --status-json` and the
 * limits not enforced: every byte string comes out as valid JSON, and what was valid UTF-8 text
 * comes out as the same text. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "exec-status.h"
#include "json-out.h"
#include "sandbox-limits.h"
#include "tap.h"

static void check_string(const char *what, const char *in, size_t n, const char *want) {
  struct strbuf b = {0};
  sb_json_string(&b, in, n);
  if (!tap_ok(b.data != NULL && strcmp(b.data, want) == 0, "%s", what))
    tap_diag("  got %s, want %s", b.data ? b.data : "(null)", want);
  free(b.data);
}

static void check_text(const char *what, const char *got, const char *want) {
  if (!tap_ok(got != NULL && strcmp(got, want) == 0, "%s", what))
    tap_diag("  got %s, want %s", got ? got : "(null)", want);
}

/* each: what, the bytes, their length, the JSON literal wanted */
static const struct {
  const char *what, *in;
  size_t n;
  const char *want;
} string_cases[] = {
    {"plain text", "abc", 3, "\"abc\""},
    {"empty", "", 0, "\"\""},
    {"quote and backslash", "a\"b\\c", 5, "\"a\\\"b\\\\c\""},
    {"newline, return, tab short", "\n\r\t", 3, "\"\\n\\r\\t\""},
    {"other control characters as \\u00XX", "\x01\x1f\x1b", 3, "\"\\u0001\\u001f\\u001b\""},
    {"NUL inside the length", "a\0b", 3, "\"a\\u0000b\""},
    {"DEL (0x7f) as \\u007f", "\x7f", 1, "\"\\u007f\""},
    {"two-byte UTF-8 kept", "caf\xc3\xa9", 5, "\"caf\xc3\xa9\""},
    {"three-byte UTF-8 kept", "\xe2\x82\xac", 3, "\"\xe2\x82\xac\""},
    {"four-byte UTF-8 kept", "\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\""},
    {"a lone continuation byte", "a\x80z", 3, "\"a\\ufffdz\""},
    {"Latin-1 (not UTF-8)", "caf\xe9", 4, "\"caf\\ufffd\""},
    {"a sequence cut short by the end", "\xe2\x82", 2, "\"\\ufffd\\ufffd\""},
    {"overlong form", "\xc0\xaf", 2, "\"\\ufffd\\ufffd\""},
    {"surrogate", "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""},
    {"past U+10FFFF", "\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},
    {"0xff", "\xff", 1, "\"\\ufffd\""},
};

static void test_strings(void) {
  for (size_t i = 0; i < sizeof(string_cases) / sizeof(string_cases[0]); i++)
    check_string(string_cases[i].what, string_cases[i].in, string_cases[i].n, string_cases[i].want);
}

static void test_members(void) {
  struct strbuf b = {0};
  char quoted[] = "a\"b", tabbed[] = "tab\there";
  char *items[] = {quoted, tabbed, NULL};
  sb_json_key_string(&b, "k", "v\x01");
  sb_json_key_string(&b, "n", NULL);
  sb_json_string_array(&b, "list", items);
  sb_json_string_array(&b, "none", NULL);
  check_text("key strings, null, arrays", b.data,
             ",\"k\":\"v\\u0001\",\"n\":null,\"list\":[\"a\\\"b\",\"tab\\there\"],\"none\":[]");
  free(b.data);
}

static void test_string_size(void) {
  tap_ok(json_string_size("a\x01\"\n") == 2 + 1 + 6 + 2 + 2 && json_string_size("") == 2,
         "json_string_size: the escaped string's bytes, quotes included");
}

static void test_printf_long(void) {
  struct strbuf b = {0};
  char *big = malloc(5001);
  memset(big, 'x', 5000);
  big[5000] = '\0';
  sb_puts(&b, "<");
  sb_printf(&b, "%s|%d", big, 42);
  tap_ok(b.len == 5004 && strlen(b.data) == 5004 && strcmp(b.data + 5001, "|42") == 0,
         "sb_printf keeps a result longer than any fixed buffer (%zu bytes)", b.len);
  free(big);
  free(b.data);
}

/* the limits' reasons come from host paths: a control character or a byte that is not UTF-8 in
 * one must not break the result's JSON */
static void test_limit_gaps(void) {
  char reason[] = "no \"cgroup\"\n\x01\x7f \xff";
  struct sandbox_limit_gap gap = {.limit = "memoryLimitMb", .reason = reason};
  struct sandbox_limits l = {.gaps = &gap, .n_gaps = 1};
  struct strbuf b = {0};
  sandbox_limits_gaps_json(&b, &l);
  check_text("limitsNotEnforced escapes its reasons", b.data,
             "\"limitsNotEnforced\":[{\"limit\":\"memoryLimitMb\",\"reason\":"
             "\"no \\\"cgroup\\\"\\n\\u0001\\u007f \\ufffd\"}]");
  free(b.data);
}

static void test_exec_status(void) {
  siginfo_t exited = {.si_code = CLD_EXITED, .si_status = 3};
  siginfo_t killed = {.si_code = CLD_KILLED, .si_status = SIGKILL};
  char *s = exec_status_json(&exited, false, false, NULL);
  check_text("status: exited, nothing extra", s, "{\"exitCode\":3,\"signal\":null}\n");
  free(s);
  s = exec_status_json(&killed, true, true, ",\"tamper\":[\"x\"],\"discarded\":[]");
  check_text("status: killed, oomKilled, then the extra members", s,
             "{\"exitCode\":null,\"signal\":\"SIGKILL\",\"oomKilled\":true,\"tamper\":[\"x\"],"
             "\"discarded\":[]}\n");
  free(s);
}

int main(void) {
  test_strings();
  test_members();
  test_string_size();
  test_printf_long();
  test_limit_gaps();
  test_exec_status();
  return tap_done();
}
