# Shared by exec-git.bats and security-exec-git.bats (git in a task container of `fsrun bundle`):
# sandbox-git.bats's helpers and routes (make_repo, as_owner, hgit, route_*; its @test blocks left
# out), an ordinary user made for the file, and setup/teardown around sandbox-git.bats's own.
# The file sets EXEC_GIT_USER_PREFIX before loading this (the user is PREFIX<pid>).

eval "$(sed '/^@test/,/^}/d; /^load helpers/d' "$BATS_TEST_DIRNAME/sandbox-git.bats")"

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export TEST_USER=$EXEC_GIT_USER_PREFIX$$
  useradd -M -d /nonexistent -s /bin/sh "$TEST_USER"
}

teardown_file() {
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    pkill -KILL -u "$TEST_USER" 2>/dev/null || true
    userdel "$TEST_USER" >/dev/null 2>&1 || true
  fi
}

eval "sandbox_git_setup() $(declare -f setup | tail -n +2)"
eval "sandbox_git_teardown() $(declare -f teardown | tail -n +2)"

setup() {
  requires_fsrun_command bundle
  sandbox_git_setup
}
