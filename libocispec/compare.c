/* Field-for-field comparison, driven by the same descriptions as the parser. */
#include "model.h"

static bool equal(const type_desc *d, const void *a, const void *b) {
  if (a == NULL || b == NULL)
    return a == b;
  return model_equal(d, a, b);
}

bool oci_config_equal(const oci_config *a, const oci_config *b) {
  return equal(&oci_config_desc, a, b);
}

bool oci_process_equal(const oci_process *a, const oci_process *b) {
  return equal(&oci_process_desc, a, b);
}

bool oci_resources_equal(const oci_resources *a, const oci_resources *b) {
  return equal(&oci_resources_desc, a, b);
}

bool oci_state_equal(const oci_state *a, const oci_state *b) {
  return equal(&oci_state_desc, a, b);
}

bool oci_features_equal(const oci_features *a, const oci_features *b) {
  return equal(&oci_features_desc, a, b);
}

bool oci_policy_equal(const oci_policy *a, const oci_policy *b) {
  return equal(&oci_policy_settings_desc, a, b);
}
