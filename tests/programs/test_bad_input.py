"""Bad input never harms the host: every bad option value and every bad table file gives one
clear line on stderr, and the program (a real runtime program) still prints the same answer.

    test_bad_input.py BUILD_DIR PROGRAM [ARGS...]
"""
import os
import random
import struct
import sys

from apshim_test import Check, Shim

build, argv = sys.argv[1], sys.argv[2:]
shim = Shim(build)
check = Check("bad_input")
native = shim.run(argv, shim.env(preload=False), timeout=120)
check.expect(native.returncode == 0 and native.stdout, "native run prints its answer")
answer = native.stdout.split("time_s=")[0]


def run_with(label, env, expect_lines, must_mention):
    r = shim.run(argv, env, timeout=120)
    ours = [l for l in r.stderr.splitlines() if l.startswith("apshim[")]
    check.expect(r.returncode == 0 and r.stdout.split("time_s=")[0] == answer, f"{label}: same answer, exit 0")
    check.expect(len(ours) == expect_lines and all(must_mention in l for l in ours),
                 f"{label}: {expect_lines} stderr line(s) mentioning {must_mention!r} (got {ours})")


for var, bad in [("APSHIM_ETA", ""), ("APSHIM_ETA", "-1"), ("APSHIM_ETA", "nan"), ("APSHIM_ETA", "1e999"),
                 ("APSHIM_EST_CYCLE_MS", "0"), ("APSHIM_EST_CYCLE_MS", "garbage"), ("APSHIM_P", "0"),
                 ("APSHIM_P", "100000"), ("APSHIM_P", "-3"), ("APSHIM_POLICY", "fastest"), ("APSHIM_LOG", "loud"),
                 ("APSHIM_DISABLE", "maybe"), ("APSHIM_GAT", "relative/path")]:
    env = shim.env(P=2, gat=shim.path(f"gat-{var}-{len(bad)}"))
    env[var] = bad
    run_with(f"{var}={bad!r}", env, 1, var)

good = shim.path("good")
r = shim.run(argv, shim.env(P=2, gat=good), timeout=120)
image = open(good, "rb").read() if os.path.exists(good) else None
check.expect(image is not None and len(image) > 4096, "a good run creates the table")


def bad_table(name, make):
    path = shim.path(name)
    make(path)
    run_with(f"table {name}", shim.env(P=2, gat=path), 1, "running unthrottled")


def write(path, data, mode=0o600):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


bad_table("truncated", lambda p: write(p, image[:100]))
bad_table("zero-filled", lambda p: write(p, bytes(len(image))))
bad_table("random", lambda p: write(p, random.Random(3).randbytes(len(image))))
bad_table("wrong-version", lambda p: write(p, image[:8] + struct.pack("<I", 99) + image[12:]))
bad_table("readable-by-others", lambda p: write(p, image, 0o644))
bad_table("read-only", lambda p: write(p, image, 0o400))
bad_table("directory", lambda p: os.mkdir(p))


def symlink(p):
    write(p + ".target", image)
    os.symlink(p + ".target", p)


bad_table("symlink", symlink)
if os.geteuid() == 0:
    def foreign(p):
        write(p, image)
        os.chown(p, 65534, 65534)
    bad_table("other-user", foreign)
check.done()
