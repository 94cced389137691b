/* fsrun's entry point in the static PIE build (x86-64), before the C library's _start.
 *
 * A static PIE relocates itself before main: some 3000 pointers over about 20 pages of its
 * writable data, each page a copy-on-write fault, and on a virtual machine that shadows page
 * tables such a fault costs tens of microseconds. One madvise(MADV_POPULATE_WRITE) over those
 * pages first costs a few microseconds per page (see prefault.h).
 *
 * Nothing here may need a relocation or touch the stack: the symbols are reached relative to the
 * instruction pointer, and %rsp (argc, argv, envp, auxv) and %rdx (the exit hook the kernel
 * passes) reach _start as they came. A failed madvise (Linux < 5.14) changes nothing. */
	.text
	.globl fsrun_entry
	.hidden fsrun_entry
	.type fsrun_entry, @function
fsrun_entry:
	mov %rdx, %r12
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
