/* linux.seccomp: description and the value lists the spec allows (runtime-spec 1.3). */
#include <stdlib.h>

#include "model.h"

const char *const oci_seccomp_actions[] = {
    "SCMP_ACT_KILL",        "SCMP_ACT_KILL_PROCESS",
    "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP",
    "SCMP_ACT_ERRNO",       "SCMP_ACT_TRACE",
    "SCMP_ACT_ALLOW",       "SCMP_ACT_LOG",
    "SCMP_ACT_NOTIFY",      NULL,
};

const char *const oci_seccomp_archs[] = {
    "SCMP_ARCH_X86",     "SCMP_ARCH_X86_64",   "SCMP_ARCH_X32",         "SCMP_ARCH_ARM",
    "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS",     "SCMP_ARCH_MIPS64",      "SCMP_ARCH_MIPS64N32",
    "SCMP_ARCH_MIPSEL",  "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
    "SCMP_ARCH_PPC64",   "SCMP_ARCH_PPC64LE",  "SCMP_ARCH_S390",        "SCMP_ARCH_S390X",
    "SCMP_ARCH_PARISC",  "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",     "SCMP_ARCH_LOONGARCH64",
    "SCMP_ARCH_M68K",    "SCMP_ARCH_SH",       "SCMP_ARCH_SHEB",        NULL,
};

const char *const oci_seccomp_flags[] = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
    NULL,
};

const char *const oci_seccomp_operators[] = {
    "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",        "SCMP_CMP_EQ",
    "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL,
};

static const field_desc arg_fields[] = {
    /* libseccomp compares one of the six syscall arguments */
    FIELD("index", FK_U32, oci_seccomp_arg, index, .flags = F_REQUIRED, URANGE(0, 5)),
    FIELD("value", FK_U64, oci_seccomp_arg, value, .flags = F_REQUIRED),
    FIELD("valueTwo", FK_U64, oci_seccomp_arg, value_two, .flags = F_OMIT_ZERO),
    FIELD("op", FK_STRING, oci_seccomp_arg, op, .flags = F_REQUIRED,
          ONE_OF(oci_seccomp_operators, "seccomp operator")),
};
static const type_desc arg_desc = DESC(oci_seccomp_arg, arg_fields);

static const field_desc syscall_fields[] = {
    FIELD("names", FK_STRV, oci_seccomp_syscall, names, .flags = F_REQUIRED | F_NONEMPTY),
    FIELD("action", FK_STRING, oci_seccomp_syscall, action, .flags = F_REQUIRED,
          ONE_OF(oci_seccomp_actions, "seccomp action")),
    FIELD("errnoRet", FK_U32, oci_seccomp_syscall, errno_ret,
          .has_off = HAS(oci_seccomp_syscall, has_errno_ret)),
    FIELD("args", FK_OBJ_ARRAY, oci_seccomp_syscall, args, COUNT(oci_seccomp_syscall, n_args),
          .sub = &arg_desc),
};
static const type_desc syscall_desc = DESC(oci_seccomp_syscall, syscall_fields);

static const field_desc seccomp_fields[] = {
    FIELD("defaultAction", FK_STRING, oci_seccomp, default_action, .flags = F_REQUIRED,
          ONE_OF(oci_seccomp_actions, "seccomp action")),
    FIELD("defaultErrnoRet", FK_U32, oci_seccomp, default_errno_ret,
          .has_off = HAS(oci_seccomp, has_default_errno_ret)),
    FIELD("architectures", FK_STRV, oci_seccomp, architectures,
          ONE_OF(oci_seccomp_archs, "seccomp architecture")),
    FIELD("flags", FK_STRV, oci_seccomp, flags, ONE_OF(oci_seccomp_flags, "seccomp flag")),
    FIELD("listenerPath", FK_STRING, oci_seccomp, listener_path),
    FIELD("listenerMetadata", FK_STRING, oci_seccomp, listener_metadata),
    FIELD("syscalls", FK_OBJ_ARRAY, oci_seccomp, syscalls, COUNT(oci_seccomp, n_syscalls),
          .sub = &syscall_desc),
};
const type_desc oci_seccomp_desc = DESC(oci_seccomp, seccomp_fields);

/* a profile file on its own: a misspelt key is refused rather than silently ignored */
static const type_desc seccomp_profile_desc = DESC(oci_seccomp, seccomp_fields, .strict = true);

int oci_seccomp_parse(const char *json, size_t len, const char *what, oci_seccomp **out,
                      char **err) {
  return model_parse(&seccomp_profile_desc, json, len, what ? what : "seccomp profile", true,
                     (void **)out, err);
}

void oci_seccomp_free(oci_seccomp *s) {
  model_free_fields(&oci_seccomp_desc, s);
  free(s);
}
