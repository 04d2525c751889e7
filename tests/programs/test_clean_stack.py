"""Code before main leaves bytes on the stack that main's uninitialised locals then hold.
Preloading the shim changes them (the loader relocates libstdc++, our constructors run); the
shim zeroes the stack below its last constructor, so a program that reads such a local (two of
LLVM's OpenMP tests pass natively only because a flag byte there is 0, tests/peer/RESULTS.md)
sees zeros deeper than the few frames the C library runs after the constructors."""
import sys

from apshim_test import Check, Shim

build, prog = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("shim.clean_stack")
native = shim.run([prog], shim.env(preload=False))
check.expect(native.returncode == 0 and native.stdout.startswith("nonzero_deep="), f"probe runs ({native.stdout.strip()})")
for extra in ({}, {"APSHIM_DISABLE": "1"}):
    r = shim.run([prog], shim.env(P=4, **extra))
    check.expect(r.returncode == 0 and r.stdout.strip() == "nonzero_deep=0",
                 f"under the shim ({extra or 'defaults'}) main's stack deeper than 3 KiB is zero ({r.stdout.strip()}; "
                 f"natively {native.stdout.strip()})")
check.done()
