/* The calling thread's CPU mask as the kernel holds it, read and set by the system call itself:
 * the shim answers sched_getaffinity, pthread_getaffinity_np and libc's syscall() with the mask
 * the program would see without it, and sees the set calls (shim/cpu_hooks.cpp). A test that
 * checks where the shim runs a thread, or binds one by a route no interposer sees, needs the
 * instruction. Define _GNU_SOURCE before any include. */
#ifndef APSHIM_TESTS_OMP_KERNEL_MASK_H
#define APSHIM_TESTS_OMP_KERNEL_MASK_H
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* sched_getaffinity(tid, ...) / sched_setaffinity(tid, ...) as the raw call returns them (tid 0:
 * the calling thread): the bytes written (get), 0 (set), or -errno. */
static inline long kernel_mask_call_for(long number, long tid, cpu_set_t* m) {
#if defined(__x86_64__)
    long rc;
    __asm__ volatile("syscall" : "=a"(rc) : "0"(number), "D"(tid), "S"(sizeof *m), "d"(m) : "rcx", "r11", "memory");
    return rc;
#else
#error "kernel_mask.h: add this architecture's system call instruction"
#endif
}

static inline long kernel_mask_call(long number, cpu_set_t* m) { return kernel_mask_call_for(number, 0, m); }

/* Thread tid's mask (0: the calling thread's) into *m; 0 when it cannot be read. */
static inline int kernel_mask_of(long tid, cpu_set_t* m) {
    CPU_ZERO(m);
    return kernel_mask_call_for(SYS_sched_getaffinity, tid, m) > 0;
}

/* The calling thread's mask into *m; 0 when it cannot be read. */
static inline int kernel_mask(cpu_set_t* m) { return kernel_mask_of(0, m); }

/* How many CPUs the calling thread may run on, 0 when its mask cannot be read. */
static inline int kernel_mask_cpus(void) {
    cpu_set_t m;
    return kernel_mask(&m) ? CPU_COUNT(&m) : 0;
}

/* Binds the calling thread to the CPUs of *m; 0 on success. */
static inline int kernel_bind(const cpu_set_t* m) {
    cpu_set_t copy = *m;
    return kernel_mask_call(SYS_sched_setaffinity, &copy) == 0 ? 0 : 1;
}
#endif
