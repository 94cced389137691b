# Shared by the exec-git files and security-exec-git.bats (git in a task container of `fsrun
# bundle`): the sandbox-git files' helpers and routes (sandbox-git-helpers.bash: make_repo,
# as_owner, hgit; each sandbox-git*.bats's route_* and the like, its @test blocks left out), an
# ordinary user made for the file, and setup/teardown around sandbox-git's own.
# The file sets EXEC_GIT_USER_PREFIX before loading this (the user is PREFIX<pid>).

load sandbox-git-helpers
for _sandbox_git_file in "$BATS_TEST_DIRNAME"/sandbox-git*.bats; do
  eval "$(sed '/^@test/,/^}/d; /^load /d' "$_sandbox_git_file")"
done
unset _sandbox_git_file

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
