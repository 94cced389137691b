/* libFuzzer target for the smaller documents: the same input is parsed as state.json, exec's
 * process.json, update's resources JSON and features.json; each successful parse must round-trip.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  char *err = NULL;

  oci_state *s = NULL;
  int r = oci_state_parse(text, size, "state.json", &s, &err);
  fuzz_check_error(r, err);
  if (r == 0)
    FUZZ_ROUND_TRIP(oci_state, s, oci_state_serialize(s, false, &serr_), oci_state_parse,
                    oci_state_equal, oci_state_free);
  oci_state_free(s);

  oci_process *p = NULL;
  err = NULL;
  r = oci_process_parse(text, size, "process.json", &p, &err);
  fuzz_check_error(r, err);
  if (r == 0)
    FUZZ_ROUND_TRIP(oci_process, p, oci_process_serialize(p, true, &serr_), oci_process_parse,
                    oci_process_equal, oci_process_free);
  oci_process_free(p);

  oci_resources *res = NULL;
  err = NULL;
  r = oci_resources_parse(text, size, "resources.json", &res, &err);
  fuzz_check_error(r, err);
  if (r == 0)
    FUZZ_ROUND_TRIP(oci_resources, res, oci_resources_serialize(res, false, &serr_),
                    oci_resources_parse, oci_resources_equal, oci_resources_free);
  oci_resources_free(res);

  oci_features *f = NULL;
  err = NULL;
  r = oci_features_parse(text, size, "features.json", &f, &err);
  fuzz_check_error(r, err);
  if (r == 0)
    FUZZ_ROUND_TRIP(oci_features, f, oci_features_serialize(f, true, &serr_), oci_features_parse,
                    oci_features_equal, oci_features_free);
  oci_features_free(f);
  return 0;
}
