/* sandbox.c: the policy -> OCI config mapping, checked on the model (no container is run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "sandbox.h"
#include "scratch.h"
#include "tap.h"

static oci_policy *parse(const char *json) {
  oci_policy *p = NULL;
  char *err = NULL;
  if (oci_policy_parse(json, strlen(json), "policy", &p, &err) < 0) {
    tap_diag("parse: %s", err);
    free(err);
    return NULL;
  }
  return p;
}

static const oci_mount *find_mount(const oci_config *c, const char *dest) {
  const oci_mount *found = NULL;
  for (size_t i = 0; i < c->n_mounts; i++)
    if (strcmp(c->mounts[i].destination, dest) == 0)
      found = &c->mounts[i]; /* the last one is what the process sees */
  return found;
}

static bool has_option(const oci_mount *m, const char *opt) {
  for (size_t i = 0; m != NULL && i < m->options.len; i++)
    if (strcmp(m->options.items[i], opt) == 0)
      return true;
  return false;
}

static size_t mount_index(const oci_config *c, const char *dest) {
  for (size_t i = 0; i < c->n_mounts; i++)
    if (strcmp(c->mounts[i].destination, dest) == 0)
      return i;
  return (size_t)-1;
}

static bool has_env(const oci_config *c, const char *entry) {
  for (size_t i = 0; i < c->process->env.len; i++)
    if (strcmp(c->process->env.items[i], entry) == 0)
      return true;
  return false;
}

static bool has_namespace(const oci_config *c, const char *type) {
  for (size_t i = 0; i < c->linux_->n_namespaces; i++)
    if (strcmp(c->linux_->namespaces[i].type, type) == 0)
      return true;
  return false;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f != NULL) {
    fputs(text, f);
    fclose(f);
  }
}

int main(void) {
  char tmpl[] = "/tmp/fsrun-test-sandbox-XXXXXX";
  char *base = mkdtemp(tmpl);
  char *real_base, *wt, *common, *wt_gitdir, *dotgit, *home;
  char *const args[] = {"make", "test", NULL};
  char *const env[] = {"PATH=/usr/bin", "CI=1", "SECRET=x", "HOME=/elsewhere", "TERM=dumb", NULL};
  fsrun_error_t err = NULL;
  oci_config *c = NULL;
  oci_policy *p;

  if (base == NULL) {
    tap_ok(false, "mkdtemp");
    return tap_done();
  }
  real_base = realpath(base, NULL);
  /* a worktree of $base/repo: .git is a file naming repo/.git/worktrees/wt */
  if (asprintf(&wt, "%s/wt", real_base) < 0 || asprintf(&common, "%s/repo/.git", real_base) < 0 ||
      asprintf(&wt_gitdir, "%s/worktrees/wt", common) < 0 || asprintf(&dotgit, "%s/.git", wt) < 0 ||
      asprintf(&home, "%s/home", real_base) < 0)
    return 1;
  mkdir(wt, 0755);
  mkdir(home, 0755);
  {
    char *repo = NULL, *wts = NULL, *line = NULL, *cd = NULL, *back = NULL, *back_line = NULL;
    char *head = NULL, *objects = NULL, *refs = NULL;
    if (asprintf(&repo, "%s/repo", real_base) < 0 || asprintf(&wts, "%s/worktrees", common) < 0 ||
        asprintf(&line, "gitdir: %s\n", wt_gitdir) < 0 ||
        asprintf(&cd, "%s/commondir", wt_gitdir) < 0 ||
        asprintf(&back, "%s/gitdir", wt_gitdir) < 0 || asprintf(&back_line, "%s\n", dotgit) < 0 ||
        asprintf(&head, "%s/HEAD", common) < 0 || asprintf(&objects, "%s/objects", common) < 0 ||
        asprintf(&refs, "%s/refs", common) < 0)
      return 1;
    mkdir(repo, 0755);
    mkdir(common, 0755);
    mkdir(objects, 0755);
    mkdir(refs, 0755);
    mkdir(wts, 0755);
    mkdir(wt_gitdir, 0755);
    /* git's linked-worktree layout: the only `.git` file the sandbox trusts */
    write_text(head, "ref: refs/heads/main\n");
    write_text(dotgit, line);
    write_text(cd, "../..\n");
    write_text(back, back_line);
    free(repo), free(wts), free(line), free(cd), free(back), free(back_line);
    free(head), free(objects), free(refs);
  }

  p = parse("{\"allowNetwork\": false, \"envAllowlist\": [\"CI\"], \"memoryLimitMb\": 100,"
            " \"cpuLimit\": {\"maxCores\": 1.5, \"maxMs\": 1500},"
            " \"allowedPaths\": [\"/nonexistent-fsrun-test\"]}");
  if (p != NULL) {
    struct sandbox_mapping_opts o = {.policy = p,
                                     .worktree = wt,
                                     .args = args,
                                     .n_args = 2,
                                     .environ = env,
                                     .uid = 0,
                                     .gid = 0,
                                     .home = home,
                                     .root_path = "rootfs"};
    tap_ok(sandbox_config_from_policy(&o, &c, &err) == 0, "a policy maps to a config");
  }
  if (c != NULL) {
    const oci_mount *m;
    tap_ok(strcmp(c->process->cwd, wt) == 0, "cwd is the worktree");
    tap_ok(c->process->args.len == 2 && strcmp(c->process->args.items[0], "make") == 0,
           "args are the command");
    m = find_mount(c, wt);
    tap_ok(m != NULL && has_option(m, "rw") && has_option(m, "bind"), "the worktree is bound rw");
    m = find_mount(c, common);
    tap_ok(m != NULL && has_option(m, "rw"), "the git common dir is bound rw");
    tap_ok(find_mount(c, "/nonexistent-fsrun-test") == NULL, "a missing allowedPath is skipped");
    m = find_mount(c, "/usr");
    tap_ok(m != NULL && has_option(m, "ro"), "/usr is bound read-only");
    m = find_mount(c, home);
    tap_ok(m != NULL && strcmp(m->type, "tmpfs") == 0, "$HOME is a tmpfs");
    tap_ok(mount_index(c, "/tmp") < mount_index(c, wt),
           "/tmp is mounted before the worktree in it");
    tap_ok(find_mount(c, "/proc") != NULL && find_mount(c, "/dev") != NULL, "/proc and /dev");
    tap_ok(c->root_readonly, "the root is read-only");
    tap_ok(has_env(c, "CI=1") && has_env(c, "PATH=/usr/bin") && has_env(c, "TERM=dumb"),
           "allowed variables and PATH/TERM pass");
    tap_ok(!has_env(c, "SECRET=x"), "a variable outside the allowlist is dropped");
    tap_ok(has_env(c, "HOME=/elsewhere") == false, "HOME is the sandbox's, not passed through");
    tap_ok(c->process->n_rlimits == 1 && strcmp(c->process->rlimits[0].type, "RLIMIT_CPU") == 0 &&
               c->process->rlimits[0].hard == 2 && c->process->rlimits[0].soft == 2,
           "cpuLimit.maxMs 1500 is RLIMIT_CPU 2 s (rounded up)");
    tap_ok(c->linux_->resources->memory != NULL &&
               c->linux_->resources->memory->limit == 100 * 1024 * 1024,
           "memoryLimitMb is the memory limit in bytes");
    tap_ok(c->linux_->resources->cpu != NULL && c->linux_->resources->cpu->quota == 150000 &&
               c->linux_->resources->cpu->period == 100000,
           "maxCores 1.5 is a 150000/100000 quota");
    tap_ok(c->linux_->resources->pids != NULL && c->linux_->resources->pids->limit == 4096,
           "the default pids limit is 4096");
    tap_ok(has_namespace(c, "network") && has_namespace(c, "pid") && !has_namespace(c, "user"),
           "allowNetwork false: a network namespace (and a pid one, no user one as root)");
    tap_ok(c->process->no_new_privileges && c->process->capabilities != NULL &&
               c->process->capabilities->has_bounding &&
               c->process->capabilities->bounding.len == 0,
           "no capabilities, no_new_privs");
    tap_ok(c->linux_->seccomp != NULL &&
               strcmp(c->linux_->seccomp->default_action, "SCMP_ACT_ALLOW") == 0 &&
               c->linux_->seccomp->n_syscalls == 3,
           "the default seccomp profile");
    oci_config_free(c);
    c = NULL;
  }
  /* a task container (no one_shot) keeps the freezer and the device allow-list; a one-shot run
   * has no freezer, and no allow-list where its caller found no device on its stdio */
  if (p != NULL) {
    static const struct sandbox_one_shot with_rules = {.no_device_rules = false};
    static const struct sandbox_one_shot without_rules = {.no_device_rules = true};
    static const struct {
      const struct sandbox_one_shot *one_shot;
      const char *v1;
      const char *what;
    } shapes[] = {
        {NULL, "memory,pids,freezer,devices,cpu,cpuacct", "a task container"},
        {&with_rules, "memory,pids,devices,cpu,cpuacct", "a one-shot run with device rules"},
        {&without_rules, "memory,pids,cpu,cpuacct", "a one-shot run without device rules"},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
      struct sandbox_mapping_opts o = {.policy = p,
                                       .worktree = wt,
                                       .args = args,
                                       .n_args = 2,
                                       .environ = env,
                                       .home = home,
                                       .root_path = "rootfs",
                                       .one_shot = shapes[i].one_shot};
      const char *v1;
      bool deny_all;
      c = NULL;
      if (sandbox_config_from_policy(&o, &c, &err) < 0) {
        tap_ok(false, "%s maps", shapes[i].what);
        fsrun_error_release(&err);
        continue;
      }
      v1 = oci_map_get(&c->annotations, CGROUP_V1_ANNOTATION);
      deny_all = c->linux_->resources->n_devices == 1 && !c->linux_->resources->devices[0].allow;
      tap_ok(v1 != NULL && strcmp(v1, shapes[i].v1) == 0, "%s: v1 hierarchies %s", shapes[i].what,
             shapes[i].v1);
      tap_ok(deny_all == (i < 2), "%s: %s", shapes[i].what,
             i < 2 ? "every device denied but the defaults" : "no device rule");
      oci_config_free(c);
      c = NULL;
    }
  }
  oci_policy_free(p);

  /* network on; $HOME inside the worktree is left alone (a tmpfs would hide part of it) */
  p = parse("{\"allowNetwork\": true, \"pidsLimit\": 10}");
  if (p != NULL) {
    char *inner = NULL;
    if (asprintf(&inner, "%s/sub", wt) < 0)
      return 1;
    struct sandbox_mapping_opts o = {
        .policy = p, .worktree = wt, .environ = env, .home = inner, .root_path = "rootfs"};
    tap_ok(sandbox_config_from_policy(&o, &c, &err) == 0, "a second policy maps");
    if (c != NULL) {
      const oci_mount *rc = find_mount(c, "/etc/resolv.conf");
      tap_ok(has_namespace(c, "network"),
             "allowNetwork true: a network namespace of its own (egress, not the host's)");
      tap_ok(rc != NULL && strcmp(rc->source, "resolv.conf") == 0,
             "egress: the bundle's resolv.conf (slirp4netns's forwarder) over /etc/resolv.conf");
      tap_ok(find_mount(c, inner) == NULL, "no tmpfs over a $HOME inside the worktree");
      tap_ok(c->linux_->resources->pids->limit == 10, "pidsLimit");
      tap_ok(strcmp(c->process->args.items[0], "/bin/sh") == 0, "no command: /bin/sh");
      oci_config_free(c);
      c = NULL;
    }
    free(inner);
    oci_policy_free(p);
  }

  /* "network": "host" is today's shared network; with the network off it means nothing */
  p = parse("{\"allowNetwork\": true, \"network\": \"host\"}");
  if (p != NULL) {
    struct sandbox_mapping_opts o = {
        .policy = p, .worktree = wt, .environ = env, .root_path = "rootfs"};
    tap_ok(sandbox_config_from_policy(&o, &c, &err) == 0, "network host maps");
    if (c != NULL) {
      tap_ok(!has_namespace(c, "network"), "network host: the host's network namespace");
      const oci_mount *rc = find_mount(c, "/etc/resolv.conf");
      tap_ok(rc == NULL || strcmp(rc->source, "/etc/resolv.conf") == 0,
             "network host: the host's resolv.conf");
      oci_config_free(c);
      c = NULL;
    }
    oci_policy_free(p);
  }
  /* a `.git` file whose git dir does not point back at it is refused, naming it: an empty dir,
   * and another worktree's admin dir (a real layout whose back-pointer names wt/.git) */
  {
    char *fake = NULL, *plain = NULL, *plain_git = NULL, *to_fake = NULL, *to_other = NULL;
    if (asprintf(&fake, "%s/fake", real_base) < 0 || asprintf(&plain, "%s/plain", real_base) < 0 ||
        asprintf(&plain_git, "%s/.git", plain) < 0 ||
        asprintf(&to_fake, "gitdir: %s\n", fake) < 0 ||
        asprintf(&to_other, "gitdir: %s\n", wt_gitdir) < 0)
      return 1;
    mkdir(fake, 0755);
    mkdir(plain, 0755);
    p = parse("{}");
    for (int i = 0; p != NULL && i < 2; i++) {
      struct sandbox_mapping_opts o = {
          .policy = p, .worktree = plain, .environ = env, .root_path = "rootfs"};
      write_text(plain_git, i == 0 ? to_fake : to_other);
      tap_ok(sandbox_config_from_policy(&o, &c, &err) < 0 && c == NULL && err != NULL &&
                 strstr(err->msg, i == 0 ? fake : wt_gitdir) != NULL &&
                 strstr(err->msg, "linked-worktree layout") != NULL,
             i == 0 ? "a .git file naming an empty dir is refused, naming it"
                    : "a .git file naming another worktree's git dir is refused, naming it");
      if (err != NULL)
        printf("# %s\n", err->msg);
      fsrun_error_release(&err);
    }
    oci_policy_free(p);
    free(fake), free(plain), free(plain_git), free(to_fake), free(to_other);
  }
  {
    oci_policy *bad = NULL;
    char *msg = NULL;
    const char *off = "{\"allowNetwork\": false, \"network\": \"host\"}";
    const char *typo = "{\"allowNetwork\": true, \"network\": \"hosts\"}";
    tap_ok(oci_policy_parse(off, strlen(off), "p", &bad, &msg) < 0 && msg != NULL &&
               strstr(msg, "network") != NULL,
           "network without allowNetwork is refused, naming the key");
    free(msg), msg = NULL;
    tap_ok(oci_policy_parse(typo, strlen(typo), "p", &bad, &msg) < 0 && msg != NULL &&
               strstr(msg, "network") != NULL,
           "an unknown network profile is refused, naming the key");
    free(msg);
  }

  /* the caller's paths: a link the command could plant in a tree it writes is refused; every
   * caller bind carries the identity of what was checked, and each bind of /etc its covers */
  {
    char *dangling = NULL, *etclink = NULL, *sub = NULL, *outside = NULL, *json = NULL;
    struct stat shadow;
    bool host_shadow = lstat("/etc/shadow", &shadow) == 0 && S_ISREG(shadow.st_mode);
    if (asprintf(&dangling, "%s/dangling", wt) < 0 || asprintf(&etclink, "%s/etclink", wt) < 0 ||
        asprintf(&sub, "%s/sub", wt) < 0 || asprintf(&outside, "%s/outside", real_base) < 0)
      return 1;
    tap_ok(symlink("/nonexistent-fsrun-test", dangling) == 0 && symlink("/etc", etclink) == 0 &&
               symlink("/nonexistent-fsrun-test", outside) == 0 && mkdir(sub, 0755) == 0,
           "links in the worktree");
    const char *const refused[][2] = {{"allowedPaths", dangling}, {"writablePaths", etclink}};
    for (size_t i = 0; i < 2; i++) {
      free(json);
      if (asprintf(&json, "{\"%s\": [\"%s/\"]}", refused[i][0], refused[i][1]) < 0)
        return 1;
      p = parse(json);
      struct sandbox_mapping_opts o = {
          .policy = p, .worktree = wt, .environ = env, .root_path = "rootfs"};
      fsrun_error_release(&err);
      tap_ok(p != NULL && sandbox_config_from_policy(&o, &c, &err) < 0 && c == NULL &&
                 strstr(err->msg, refused[i][0]) != NULL && strstr(err->msg, refused[i][1]) != NULL,
             "%s: a link in the worktree is refused, naming the field and the path", refused[i][0]);
      oci_policy_free(p);
    }
    free(json);
    if (asprintf(&json,
                 "{\"allowedPaths\": [\"/etc\", \"%s\", \"%s\"], \"writablePaths\": [\"/etc\"]}",
                 sub, outside) < 0)
      return 1;
    p = parse(json);
    struct sandbox_mapping_opts o = {
        .policy = p, .worktree = wt, .environ = env, .root_path = "rootfs"};
    fsrun_error_release(&err);
    tap_ok(p != NULL && sandbox_config_from_policy(&o, &c, &err) == 0,
           "a dangling link outside the trees is skipped");
    if (c != NULL) {
      size_t caller = 0, ided = 0, etc_binds = 0, covered = 0, git_binds = 0;
      const oci_mount *dotgit_bind = find_mount(c, dotgit);
      for (size_t i = 0; i < c->n_mounts; i++) {
        const oci_mount *m = &c->mounts[i];
        if (!m->needs_source_id)
          continue;
        ided += m->has_source_id;
        /* the git protection binds (.git, the common dir's config, ...) are pinned as well */
        if (strcmp(m->source, dotgit) == 0 ||
            (strncmp(m->source, common, strlen(common)) == 0 && m->source[strlen(common)] == '/')) {
          git_binds++;
          continue;
        }
        caller++;
        if (strncmp(m->source, "/etc", 4) == 0) {
          etc_binds++;
          covered += m->covers[0] != NULL;
        }
      }
      tap_ok(caller == 5 && ided == caller + git_binds,
             "each caller bind (2 of /etc, sub, worktree, git dir) has the identity checked");
      tap_ok(dotgit_bind != NULL && dotgit_bind->has_source_id && git_binds >= 1,
             "the git protection binds (%zu: the worktree's .git, ...) have the identity too",
             git_binds);
      tap_ok(etc_binds == 2 && covered == (host_shadow ? 2u : 0u),
             "both binds of /etc have their covers, though one is at the other's destination");
      tap_ok(find_mount(c, outside) == NULL, "the dangling link is not bound");
      tap_ok(find_mount(c, sub)->dest_no_symlinks && !find_mount(c, "/etc")->dest_no_symlinks,
             "a path in the worktree is mounted through no link in the container; /etc as it is");
      oci_config_free(c);
      c = NULL;
    }
    oci_policy_free(p);
    free(json), free(dangling), free(etclink), free(sub), free(outside);
  }

  /* the hash ignores the settings wrapper and the spelling */
  {
    oci_policy *a = parse("{\"memoryLimitMb\": 64, \"allowNetwork\": false}");
    oci_policy *b = parse("{\"sandbox\": {\"backend\": \"fsrun\", \"failureMode\": \"fail-hard\","
                          " \"policy\": {\"allowNetwork\": false, \"memoryLimitMb\": 64}}}");
    char ha[65] = "", hb[65] = "";
    if (a && b && sandbox_policy_hash(a, ha, &err) == 0 && sandbox_policy_hash(b, hb, &err) == 0)
      tap_ok(strcmp(ha, hb) == 0 &&
                 strcmp(ha, "2ccf1d930ef9008ad11ea3228a6f25544ec9e900f1a24fb5f83ceab160f76468") ==
                     0,
             "policyHash: sha256 of {\"allowNetwork\":false,\"memoryLimitMb\":64}, wrapper or not");
    else
      tap_ok(false, "policyHash");
    oci_policy_free(a);
    oci_policy_free(b);
  }
  fsrun_error_release(&err);
  scratch_remove(real_base);
  free(real_base), free(wt), free(common), free(wt_gitdir), free(dotgit), free(home);
  return tap_done();
}
