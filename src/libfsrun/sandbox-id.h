/* The container id of a `fsrun sandbox` run: `sandbox-TASK__RUN__RANDOM`, where TASK and RUN are
 * the --task-id and --run-id with every byte outside [A-Za-z0-9.-] written `_HH` (two lowercase hex
 * digits). A part's `_` is always followed by two hex digits, so `__` only ever separates parts:
 * two (task, run) pairs never share an id's stem (review19 #9: `a`,`b-c-1` and `a-b`,`c-1` did).
 * When the two encoded parts are longer than SANDBOX_ID_PARTS_MAX, the stem is the task's encoded
 * start, `_h` and 32 hex digits of sha256(TASK NUL RUN): `_h` is no escape, so that form never
 * equals a short one. Without either id the id is `sandbox-RANDOM` (no `__`: no other form's).
 * contrib/fusion's sandboxIdStem computes the same stem. */
#ifndef FSRUN_SANDBOX_ID_H
#define FSRUN_SANDBOX_ID_H

#include <stdint.h>

/* the encoded task and run together (state dir names stay short), and the task's encoded bytes
 * kept before a digest */
#define SANDBOX_ID_PARTS_MAX   160
#define SANDBOX_ID_DIGEST_TASK 64

/* The stem (the id without `__RANDOM`); task and run may be NULL (an empty part). */
char *sandbox_id_stem(const char *task_id, const char *run_id);
/* stem + `__` + rnd as 8 hex digits; `sandbox-` + rnd when both ids are NULL or empty */
char *sandbox_container_id(const char *task_id, const char *run_id, uint32_t rnd);

#endif
