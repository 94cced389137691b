/* rtnetlink: bring links up, and move host network devices into the container's network namespace
 * (linux.netDevices). The messages are our own (netlink.c), with no netlink library.
 *
 * Where the calls go:
 *  - runtime, before clone: netlink_validate_net_devices(config->linux_): names, a `network`
 *    namespace, each host device exists. Errors name `linux.netDevices["eth1"]`.
 *  - runtime, after clone: once the init exists in its new network namespace (and, with a user
 *    namespace, its id maps are written), before the createRuntime hooks and before the init is let
 *    past its first sync:
 *        int fd = netlink_open_netns_of(init_pid, init_pidfd, &err);
 *        netlink_move_net_devices(config->linux_, fd, &err);
 *    Nothing has to happen in the init for this.
 *  - in a new network namespace that should have a working loopback (the Fusion sandbox, or a
 *    container with a new netns if the lifecycle wants it): netlink_loopback_up(), called by a
 *    process inside that namespace: the init, any time before execve, while it still has
 *    CAP_NET_ADMIN there (before user+caps).
 *
 * Moving keeps what the spec asks for: the device's permanent global-scope addresses (which the
 * kernel drops when a device changes namespace) are re-added inside, and the device is set up.
 * Nothing is moved back on delete: when the namespace dies the kernel returns physical devices to
 * the host and destroys virtual ones (veth, macvlan, ...). */
#ifndef FSRUN_NETLINK_H
#define FSRUN_NETLINK_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci.h"

/* Sets IFF_UP on ifname in the calling thread's network namespace. */
int netlink_link_up(const char *ifname, fsrun_error_t *err);
/* netlink_link_up("lo"). */
int netlink_loopback_up(fsrun_error_t *err);

/* An annotation that asks for `unreachable` routes in the container's new network namespace:
 * prefixes separated by spaces ("169.254.0.0/16 fe80::/10"). `fsrun sandbox` sets it for the
 * egress profile (docs/sandbox.md, "Network"); the init adds them with lo. */
#define NETLINK_UNREACHABLE_ANNOTATION "run.fsrun.network.unreachable"
/* Adds an `unreachable` route to the main table of the calling thread's network namespace for each
 * prefix of text; errors name the annotation and the prefix. */
int netlink_add_unreachable_routes(const char *text, fsrun_error_t *err);

/* An annotation that keeps the container's new network namespace to TCP (IPv4) and one UDP
 * destination, "ADDRESS:PORT" (the egress profile's DNS forwarder): `fsrun sandbox` sets it with
 * allowedTcpPorts, whose Landlock rules cover TCP only (review22 F13). Everything else (UDP,
 * ICMP, raw) meets an `unreachable` policy rule: EHOSTUNREACH or ENETUNREACH, no packet sent. The
 * namespace's own addresses (the local table) answer first. */
#define NETLINK_TCP_ONLY_ANNOTATION "run.fsrun.network.tcp-only"
/* Adds those rules to the calling thread's network namespace; errors name the annotation. */
int netlink_tcp_only(const char *udp_allowed, fsrun_error_t *err);

/* Opens /proc/PID/ns/net (O_RDONLY|O_CLOEXEC). With pidfd >= 0 the process is checked to be still
 * alive after the open, so a recycled pid is never used. Returns the fd or a negative code. */
int netlink_open_netns_of(pid_t pid, int pidfd, fsrun_error_t *err);

/* Before clone: every linux.netDevices entry has a valid host name and new name (at most 15 bytes,
 * no
 * `/`, `:` or white space; the new name may be a `%d` template), the host device exists in the
 * runtime's namespace and is not a loopback, no two entries want the same name inside, and
 * linux.namespaces has a `network` entry. l may be NULL. */
int netlink_validate_net_devices(const oci_linux *l, fsrun_error_t *err);

/* Moves host_name from the calling thread's network namespace into the namespace netns_fd, renaming
 * it to new_name (NULL or equal = keep the name; "%d" templates are completed by the kernel),
 * re-adds its permanent global addresses and sets it up. `what` prefixes errors (e.g.
 * `linux.netDevices["eth1"]`; NULL for a default). The name is checked to be free inside first, and
 * a failure after the move moves the device back. */
int netlink_move_device(const char *host_name, const char *new_name, int netns_fd, const char *what,
                        fsrun_error_t *err);

/* netlink_move_device for each linux.netDevices entry, in order; if one fails, the ones already
 * moved are moved back (best effort, logged) before the error is returned. l may be NULL. */
int netlink_move_net_devices(const oci_linux *l, int netns_fd, fsrun_error_t *err);

#endif
