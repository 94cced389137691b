/* libFuzzer target: Fusion policy parse -> canonical serialise -> re-parse -> compare -> free, and
 * the canonical form is a fixed point (serialising the re-parsed policy gives the same bytes). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  oci_policy *p = NULL;
  char *err = NULL;
  int r = oci_policy_parse((const char *)data, size, "policy.json", &p, &err);
  fuzz_check_error(r, err);
  if (r == 0) {
    FUZZ_ROUND_TRIP(oci_policy, p, oci_policy_serialize(p, &serr_), oci_policy_parse,
                    oci_policy_equal, oci_policy_free);
    char *e1 = NULL, *e2 = NULL;
    char *canon = oci_policy_serialize(p, &e1);
    oci_policy *again = NULL;
    FUZZ_CHECK(canon && oci_policy_parse(canon, strlen(canon), "again", &again, &e2) == 0,
               "canonical form re-parses");
    char *canon2 = oci_policy_serialize(again, &e1);
    FUZZ_CHECK(canon2 && strcmp(canon, canon2) == 0, "canonical form is stable:\n%s\n%s", canon,
               canon2);
    free(canon);
    free(canon2);
    free(e1);
    free(e2);
    oci_policy_free(again);
  }
  oci_policy_free(p);
  return 0;
}
