/* Reads main's uninitialised stack (what code before main left there, as LLVM's
 * bug_nested_proxy_task does by accident) and prints how many bytes are not zero deeper than
 * 3 KiB below main's frame. Built without optimisation so the reads stay. No runtime used. */
#include <stdio.h>

#define PROBE_BYTES 24576
#define NEAR_MAIN 3072

__attribute__((noinline)) static int nonzero_deep(void) {
    volatile unsigned char buf[PROBE_BYTES]; /* buf[0] is the deepest byte */
    int n = 0;
    for (int i = 0; i < PROBE_BYTES - NEAR_MAIN; i++) n += buf[i] != 0;
    return n;
}

int main(void) {
    printf("nonzero_deep=%d\n", nonzero_deep());
    return 0;
}
