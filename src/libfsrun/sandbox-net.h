/* The sandbox's network profiles (policy `allowNetwork` + `network`), and the user-mode network
 * helper of the "egress" profile: slirp4netns, attached to the sandbox's own network namespace
 * while the container init waits, gone when the sandbox ends. */
#ifndef FSRUN_SANDBOX_NET_H
#define FSRUN_SANDBOX_NET_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"

enum sandbox_network {
  SANDBOX_NET_NONE,   /* a network namespace with only lo */
  SANDBOX_NET_EGRESS, /* a network namespace of its own, slirp4netns to the outside */
  SANDBOX_NET_HOST,   /* the host's network namespace */
};

/* slirp4netns's DNS forwarder (to the host's resolver), which the sandbox's resolv.conf names */
#define SANDBOX_DNS_FORWARD "10.0.2.3"
#define SANDBOX_TAP_NAME    "tap0"
/* in the bundle: the resolv.conf bound over /etc/resolv.conf in the egress profile */
#define SANDBOX_RESOLV_CONF "resolv.conf"
#define SANDBOX_RESOLV_CONF_TEXT                                                                   \
  "# fsrun sandbox: slirp4netns forwards this address to the host's resolver\n"                    \
  "nameserver " SANDBOX_DNS_FORWARD "\n"

enum sandbox_network sandbox_network_profile(const oci_policy *p);
/* The prefixes the egress profile makes unreachable inside (netlink.h's annotation): link-local
 * and the cloud services outside it unless allowLinkLocal, RFC 1918, 100.64.0.0/10 and
 * 198.18.0.0/15 with blockPrivateNetworks; NULL
 * for none (another profile). */
const char *sandbox_net_unreachable(const oci_policy *p);
/* With allowedTcpPorts in the egress profile, the one UDP destination the namespace keeps
 * (netlink.h's tcp-only annotation): the DNS forwarder, "10.0.2.3:53"; NULL otherwise. */
const char *sandbox_net_tcp_only(const oci_policy *p);
/* "none" | "egress" | "host" (the result's limits.network) */
const char *sandbox_network_name(enum sandbox_network n);

/* The helper of one sandbox. */
struct sandbox_net {
  bool userns; /* the sandbox has a user namespace of its own (not root): the helper joins it */
  pid_t pid;   /* slirp4netns, our child; 0 when not started or reaped */
  bool killed; /* SIGKILLed, not yet reaped */
  int pidfd;
  int exit_fd;      /* our end of its --exit-fd pipe: when it closes, slirp4netns quits */
  int ready_fd;     /* our end of its --ready-fd pipe until the byte came, else -1 */
  int stderr_fd;    /* its stderr (a memfd) until then: the last line says what failed */
  const char *path; /* the helper that runs (the debug log names it) */
  int64_t started;  /* when it was started (CLOCK_MONOTONIC ms) */
  int64_t deadline; /* --timeout-ms (CLOCK_MONOTONIC ms): the wait for it ends there too; 0: none */
};
#define SANDBOX_NET_INIT(user_ns)                                                                  \
  ((struct sandbox_net){                                                                           \
      .userns = (user_ns), .pid = 0, .pidfd = -1, .exit_fd = -1, .ready_fd = -1, .stderr_fd = -1})

/* container_create_opts.on_namespaces for the egress profile (data: a struct sandbox_net): starts
 * slirp4netns on the namespaces of the init (still waiting for GO) and returns without waiting
 * for it: it configures the network while the init mounts. */
int sandbox_net_attach(pid_t init_pid, void *data, fsrun_error_t *err);
/* container_create_opts.on_mounts_done for the egress profile: waits until slirp4netns has
 * configured the network (its ready byte), before the init goes on to its command. */
int sandbox_net_wait_ready(void *data, fsrun_error_t *err);
/* SIGKILLs the helper (once) without waiting for its death; nothing when it was not started. */
void sandbox_net_kill(struct sandbox_net *net);
/* Kills it if that was not done, and reaps it: the last thing before fsrun exits. */
void sandbox_net_reap(struct sandbox_net *net);

#endif
