/* fsrun's entry point in the static PIE build (x86-64), before the C library's _start.
 *
 * First, a command that starts processes in a container re-executes itself from the protected
 * image of the binary (sealed-image.c, docs/process-model.md "The binary") right here: the first
 * image then pays no C library start-up (relocation, IFUNCs, tunables, libcap's probe), only the
 * kernel's exec. sealed_exe_early returns when there is nothing to do or it failed (main's
 * sealed_exe_ensure then tries again and reports).
 *
 * First of all, the time (CLOCK_REALTIME, into fsrun_entry_realtime): `fsrun sandbox`'s run
 * begins there (fsrun.c), ~0.4 ms before main, whose C library start-up the coarse clock then has
 * longer to pass (tests/bench/README.md, session 24).
 *
 * Then, a static PIE relocates itself before main: some 3000 pointers over about 20 pages of its
 * writable data, each page a copy-on-write fault, and on a virtual machine that shadows page
 * tables such a fault costs tens of microseconds. One madvise(MADV_POPULATE_WRITE) over those
 * pages first costs a few microseconds per page (see prefault.h).
 *
 * Nothing here may need a relocation: the symbols are reached relative to the instruction
 * pointer, and %rsp (argc, argv, envp, auxv: the call uses the stack below them) and %rdx (the
 * exit hook the kernel passes, kept in %r12, which the callee preserves) reach _start as they
 * came. A failed madvise (Linux < 5.14) changes nothing. */
	.text
	.globl fsrun_entry
	.hidden fsrun_entry
	.type fsrun_entry, @function
fsrun_entry:
	mov %rdx, %r12
	xor %edi, %edi                     /* CLOCK_REALTIME */
	lea fsrun_entry_realtime(%rip), %rsi
	mov $228, %eax                     /* SYS_clock_gettime: the sandbox's start, before libc's */
	syscall
	mov %rsp, %rdi                     /* argc, argv, envp */
	call sealed_exe_early              /* returns unless it re-executes us from the protected image */
	lea __init_array_start(%rip), %rdi /* the first page of the read-only-after-relocation data */
	and $-4096, %rdi
	lea _edata(%rip), %rsi             /* through the end of the initialised data */
	sub %rdi, %rsi
	mov $23, %edx                      /* MADV_POPULATE_WRITE */
	mov $28, %eax                      /* SYS_madvise */
	syscall
	mov %r12, %rdx
	jmp _start
	.size fsrun_entry, .-fsrun_entry

	.section .note.GNU-stack,"",@progbits
