/* libFuzzer target: config.json parse -> serialise -> re-parse -> compare -> free. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  oci_config *c = NULL;
  char *err = NULL;
  int r = oci_config_parse((const char *)data, size, "config.json", &c, &err);
  fuzz_check_error(r, err);
  if (r == 0) {
    FUZZ_ROUND_TRIP(oci_config, c, oci_config_serialize(c, false, &serr_), oci_config_parse,
                    oci_config_equal, oci_config_free);
    FUZZ_ROUND_TRIP(oci_config, c, oci_config_serialize(c, true, &serr_), oci_config_parse,
                    oci_config_equal, oci_config_free);
  }
  oci_config_free(c);
  return 0;
}
