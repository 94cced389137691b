/* state.json: the OCI state plus runc's extra fields (rootfs, created, owner). */
#include <stdint.h>
#include <stdlib.h>

#include "model.h"

static const field_desc state_fields[] = {
    FIELD("ociVersion", FK_STRING, oci_state, oci_version, .flags = F_REQUIRED),
    FIELD("id", FK_STRING, oci_state, id, .flags = F_REQUIRED | F_NONEMPTY),
    /* runtimes may define more states than the spec's four, so no list here */
    FIELD("status", FK_STRING, oci_state, status, .flags = F_REQUIRED | F_NONEMPTY),
    FIELD("pid", FK_I32, oci_state, pid, SRANGE(0, INT32_MAX)),
    FIELD("bundle", FK_STRING, oci_state, bundle, .flags = F_REQUIRED),
    FIELD("rootfs", FK_STRING, oci_state, rootfs),
    FIELD("created", FK_STRING, oci_state, created),
    FIELD("owner", FK_STRING, oci_state, owner),
    FIELD("annotations", FK_MAP, oci_state, annotations),
};
const type_desc oci_state_desc = DESC(oci_state, state_fields);

int oci_state_parse(const char *json, size_t len, const char *what, oci_state **out, char **err) {
  return model_parse(&oci_state_desc, json, len, what ? what : "state.json", false, (void **)out,
                     err);
}

char *oci_state_serialize(const oci_state *s, bool pretty, char **err) {
  return model_serialize(&oci_state_desc, s, "state", pretty, err);
}

void oci_state_free(oci_state *s) {
  model_free_fields(&oci_state_desc, s);
  free(s);
}
