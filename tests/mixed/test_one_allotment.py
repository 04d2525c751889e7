"""OpenMP loops started from several threads at once share the process's allotment.

tbb: a TBB parallel_for whose body runs an OpenMP loop is one job (one table row), gets the same
answer as without the shim, and has at most the allotment plus one master (the second
runtime's) busy in the loop body at once (teams sized at forks: APSHIM_SHRINK_TEAMS=1).
threads: four program threads each forking default OpenMP teams share the allotment: at most
allotment - 1 extra threads over all teams, plus the four masters (without the shim's
accounting each would take a full team: up to 4 x P threads on libomp)."""
import sys

from apshim_test import Check, Shim, job_of, wait_for

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("mixed.one_allotment")
P = 8


def one_run(mode, bound, what):
    args = [prog, mode, "30", "12", "8", "600000"]  # about 2 s each natively
    native = shim.native(args, timeout=120)
    check.expect(native.returncode == 0, f"{mode}: runs without the shim")
    native_peak = int(native.stderr.split("peak")[1])
    # Sharing the allotment among concurrent teams sizes teams at forks, which OpenMP allows only
    # with dynamic adjustment: the user's opt-in, APSHIM_SHRINK_TEAMS=1 (without it every team has
    # omp_get_max_threads() threads and confinement alone enforces the allotment).
    env = shim.env(P=P, gat=shim.path(f"gat-{mode}"), APSHIM_SHRINK_TEAMS=1, OMP_NUM_THREADS=P)
    p = shim.spawn(args, env)
    rows_seen = []

    def registered_and_grown():
        status = shim.status(env)
        if status:
            rows_seen.append(len([j for j in status["jobs"] if j["pid"] == p.pid]))
            job = job_of(status, p.pid)
            return job and job["allotment"] > 1
        return False

    check.expect(wait_for(registered_and_grown, 30), f"{mode}: the job registered and got more than one processor")
    wait_for(lambda: registered_and_grown() and False, 1.0, interval=0.1)  # a few more looks at the table
    out, err = p.communicate(timeout=120)
    check.expect(p.returncode == 0, f"{mode}: exit 0 (exit {p.returncode}, stderr: {err.strip()[:200]})")
    check.expect(out == native.stdout, f"{mode}: same checksum as without the shim")
    check.expect(rows_seen and max(rows_seen) == 1, f"{mode}: one table row for the process ({sorted(set(rows_seen))})")
    peak = int(err.split("peak")[1])
    check.expect(2 <= peak <= bound, f"{mode}: {what}: peak {peak} <= {bound} (native {native_peak}), P={P}")
    check.expect(shim.status(env)["jobs"] == [], f"{mode}: the row is gone after exit")


one_run("tbb", P + 1, "at most allotment + 1 master busy at once")
one_run("threads", P - 1 + 4, "at most allotment - 1 extras + 4 masters busy at once")
check.done()
