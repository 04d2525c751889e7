"""Eigen's own parallel matrix products (Debian's libeigen3-dev 3.4: Eigen::internal::
parallelize_gemm, whose threads wait for each other's packed blocks in spin loops) in a program
built from source: an executable that exports none of its functions, so that dladdr names none,
and is not stripped. The shim tells its products by the file's full symbol table
(adapters/common/elf_symtab.hpp, adapters/omp/whole_team.cpp) and leaves them unconfined while
they run, as a shared object's (omp.*.spinning_team's stand-in): throttled (a stand-in co-runner
holds the rest of a P = 2 table: allotment 1), the trace's confine_check column must read
`spinning` in most of its rows (with the symbol table not read: none). The native answer alone,
throttled, at APSHIM_P=8, and throttled with OMP_DYNAMIC=true (Eigen splits its product over the
team it gets: the shim's team of one). With APSHIM_CONFINE_CHECK=0, the user's choice of the
allotment whatever it costs, the products are confined: no `spinning` row (with the option not
heeded, every row)."""
import sys

from apshim_test import Check, CoRunner, Shim, require_two_cpus, stdout_words

require_two_cpus("a team of two on one CPU is what the rule is about")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.eigen")
# 24 products of 600 x 600: natively about 0.3 s on 2 CPUs (each product about 12 ms).
args = [prog, "600", "24"]


def words(r):
    return stdout_words(r.stdout) if r.returncode == 0 and r.stdout.startswith("omp_eigen") else {}


native = words(shim.native(args, timeout=60))
check.expect(bool(native) and int(native.get("max_threads", 0)) >= 2, f"natively a team per CPU ({native})")


def run(tag, env):
    r = shim.run(args, env, timeout=60)
    w = words(r)
    check.expect(bool(w) and w["checksum"] == native.get("checksum"),
                 f"{tag}: the native answer ({r.stdout.strip() or r.stderr.strip()[-300:]})")


run("alone", shim.env(P=2, gat=shim.path("gat-alone")))
env = shim.env(P=2, gat=shim.path("gat-throttled"), trace=shim.path("trace-throttled-%p.csv"))
with CoRunner(shim, env, 2):
    run("throttled", env)
rows = shim.trace_rows("trace-throttled-")
spinning = sum(1 for r in rows if r.get("confine_check") == "spinning")
check.expect(rows and spinning >= len(rows) // 2,
             f"throttled: Eigen's products ran unconfined, the trace says so ({spinning} of {len(rows)} rows "
             f"`spinning`; at least half)")
run("P=8", shim.env(P=8, gat=shim.path("gat-p8")))
env = shim.env(P=2, gat=shim.path("gat-strict"), trace=shim.path("trace-strict-%p.csv"), APSHIM_CONFINE_CHECK="0")
with CoRunner(shim, env, 2):
    run("APSHIM_CONFINE_CHECK=0, throttled", env)
rows = shim.trace_rows("trace-strict-")
phases = {r.get("confine_check") for r in rows}
on_one = sum(1 for r in rows if float(r.get("cpus", 0)) == 1)
check.expect(rows and "spinning" not in phases and on_one >= len(rows) // 2,
             f"APSHIM_CONFINE_CHECK=0, throttled: the products confined to one CPU (confine_check {sorted(phases)}, "
             f"{on_one} of {len(rows)} rows on 1 CPU)")
env = shim.env(P=2, gat=shim.path("gat-dynamic"), OMP_DYNAMIC="true")
with CoRunner(shim, env, 2):
    run("OMP_DYNAMIC=true, throttled", env)
check.done()
