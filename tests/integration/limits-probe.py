#!/usr/bin/env python3
# What sandbox-limits*.bats runs inside the sandbox to push against a limit; each mode prints one
# line saying how far it got.
#   touch-memory MB   allocate and touch MB MiB: "touched MB MB" or "MemoryError after N MB"
#   fork-loop N       fork up to N children that wait; "forked K" (K < N: a fork failed)
#   burn-cpu MS       spin until this process has used MS ms of CPU time
import os
import sys
import time


def touch_memory(mb):
    chunks = []
    try:
        for _ in range(mb):
            chunks.append(bytearray(1024 * 1024))  # zero-filled: every page is touched
    except MemoryError:
        print("MemoryError after %d MB" % len(chunks), flush=True)
        return
    print("touched %d MB" % len(chunks), flush=True)


def fork_loop(n):
    read_end, write_end = os.pipe()
    children = []
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.close(write_end)
            os.read(read_end, 1)  # until the parent closes the pipe
            os._exit(0)
        children.append(pid)
    print("forked %d" % len(children), flush=True)
    os.close(write_end)
    for pid in children:
        os.waitpid(pid, 0)


def burn_cpu(ms):
    while time.process_time() * 1000 < ms:
        pass


def main():
    mode, arg = sys.argv[1], int(sys.argv[2])
    {"touch-memory": touch_memory, "fork-loop": fork_loop, "burn-cpu": burn_cpu}[mode](arg)


main()
