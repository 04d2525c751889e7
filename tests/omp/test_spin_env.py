"""The shim's short spin-waits reach the runtime itself, read back from the runtime's own report
(OMP_DISPLAY_ENV=verbose), for one compiler's build of omp_inline:
  - libgomp (gcc): GOMP_SPINCOUNT 1000. libgomp linked by the program reads its environment in
    its own constructor, which the loader runs before the preloaded shim's: the default the shim
    put into the environment there came too late, and libgomp spun 300 000 rounds (LLVM's
    omp_for_collapse, ordered handoffs between two threads on one CPU, ran over 120 s at
    allotment 1 against 0.3 s). The shim's getenv answers it (adapters/omp/omp_env.cpp);
  - libomp (clang): KMP_BLOCKTIME 1;
  - a value the user set, a wait policy the user chose and APSHIM_DISABLE=1 leave the runtime's
    own answer.
Usage: test_spin_env.py BUILD OMP_INLINE"""
import re
import sys

from apshim_test import Check, Shim, require_two_cpus

require_two_cpus("teams of one never spin")
build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("omp.spin_env")
gcc = prog.endswith("_gcc")
name = "GOMP_SPINCOUNT" if gcc else "KMP_BLOCKTIME"
pattern = re.compile(r"GOMP_SPINCOUNT = '(\d+)'" if gcc else r"KMP_BLOCKTIME='(\w+)'")


def shown(preload=True, **extra):
    env = shim.env(preload=preload, OMP_DISPLAY_ENV="verbose", **extra)
    for k in ("GOMP_SPINCOUNT", "KMP_BLOCKTIME", "OMP_WAIT_POLICY"):
        if k not in extra:
            env.pop(k, None)
    r = shim.run([prog, "2", "0"], env, timeout=30)
    m = pattern.search(r.stdout + r.stderr)
    return m.group(1) if m else None


native = shown(preload=False)
check.expect(native is not None, f"the runtime reports {name} natively ({native})")
want = "1000" if gcc else "1"
got = shown()
check.expect(got == want, f"under the shim the runtime uses {name}={want} (it reports {got}; natively {native})")
check.expect(shown(**{name: "7"}) == "7", f"a {name} the user set is kept")
check.expect(shown(OMP_WAIT_POLICY="active") not in (want, None), "a wait policy the user chose leaves the runtime's own value")
check.expect(shown(APSHIM_DISABLE="1") == native, "APSHIM_DISABLE=1 leaves the runtime's own value")
check.done()
