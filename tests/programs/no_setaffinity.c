/* no_setaffinity ACTION PROGRAM [ARGS...]: runs PROGRAM under a seccomp filter that answers
 * sched_setaffinity with ACTION, as a sandbox or a systemd unit's SystemCallFilter= does:
 *   errno  the call fails with EPERM (SystemCallErrorNumber=EPERM, most sandboxes)
 *   kill   the process is killed (SIGSYS; systemd's default action)
 * Every other call is allowed. Exit status 126 when the filter cannot be installed. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc < 3 || (strcmp(argv[1], "errno") != 0 && strcmp(argv[1], "kill") != 0)) {
        fprintf(stderr, "usage: no_setaffinity errno|kill PROGRAM [ARGS...]\n");
        return 2;
    }
    unsigned action = strcmp(argv[1], "kill") == 0 ? SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ERRNO | EPERM;
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), /* another ABI: not ours to judge */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_sched_setaffinity, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        fprintf(stderr, "no_setaffinity: cannot install the filter: %s\n", strerror(errno));
        return 126;
    }
    execvp(argv[2], argv + 2);
    fprintf(stderr, "no_setaffinity: %s: %s\n", argv[2], strerror(errno));
    return 127;
}
