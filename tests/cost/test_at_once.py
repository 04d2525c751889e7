"""At allotment 1, libgomp tasks made inside tasks run at once with no wrapper (gomp_hooks.cpp,
run_at_once): BOTS fib with final or if clauses took 1.0 s throttled against 0.2 s with one
thread while each such task paid for a wrapper. Counted, not timed: callgrind counts the calls
of the shim's task wrapper in a throttled fib (two threads, allotment 1 beside a stand-in
co-runner). Only a few may be wrapped: those an implicit task makes (two a region here), and
those made before the first allotment, while the hooks time a team from its first fork on but no
task runs at once yet (omp_adapter.cpp: note_fork; 48-60 in all when written, before the start
was timed; 491-2301 since the eighty-second session: callgrind runs one thread at a time, and the
controller's join waits for the program's thread to let it run, about a millisecond natively);
with the at-once path gone every task made while timed is (checked by hand: 101 124 of 103 040).
The bar is 10% of the tasks.
The trace's progress marks show that the hooks timed the run (two marks a task run at once), so
that a run that never throttled cannot pass.
Usage: test_at_once.py BUILD PROGRAM (tests/omp/omp_work_gcc)"""
import os
import re
import shutil
import sys

from apshim_test import Check, CoRunner, Shim

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("cost.at_once")
if not shutil.which("valgrind"):
    print("SKIP: valgrind is not installed (scripts/install-deps.sh installs it)")
    check.done()


def calls(n, cutoff=2):
    """Calls of fib above the cutoff: each makes two tasks."""
    return 0 if n <= cutoff else 1 + calls(n - 1, cutoff) + calls(n - 2, cutoff)


N, REGIONS = 18, 20
tasks = 2 * calls(N) * REGIONS
out = shim.path("cg.out")
env = shim.env(P=2, trace=shim.path("trace-%p.csv"), OMP_NUM_THREADS=2)
native = shim.run([prog, "fib", str(N), "2", str(REGIONS)], shim.env(preload=False, OMP_NUM_THREADS=2))
with CoRunner(shim, env, P=2):
    r = shim.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", prog, "fib", str(N), "2",
                  str(REGIONS)], env, timeout=300)
answer = lambda text: text.split(" time_s=")[0]
check.expect(r.returncode == 0 and answer(r.stdout) == answer(native.stdout),
             f"throttled fib under callgrind: same answer as natively ({r.returncode}: {r.stdout.strip()})")

# callgrind names a function once, "fn=(id) name", and refers to it by id after; every call
# site of it reads "cfn=(id)" followed by "calls=N ...".
names, wrapped, callee = {}, 0, None
for line in open(out).read().splitlines() if os.path.exists(out) else []:
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        callee = m.group(2) if m.group(1) == "cfn" else None
        continue
    m = re.match(r"^calls=(\d+)", line)
    if m and callee and "wrapped_task" in names.get(callee, ""):
        wrapped += int(m.group(1))
marks = sum(row["marks"] for row in shim.trace_rows("trace-"))
print(f"     {tasks} tasks, {wrapped} wrapped, {marks} progress marks", flush=True)
check.expect(marks >= tasks, f"the hooks timed the run: {marks} progress marks for {tasks} tasks (at least one a task)")
check.expect(wrapped <= tasks // 10, f"{wrapped} of {tasks} tasks wrapped (at most 10%: tasks made inside tasks run "
             "at once, unwrapped)")
check.done()
