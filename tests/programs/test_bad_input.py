"""Bad input never harms the host: every bad option value and every bad table file gives exactly
one clear line on stderr, and the program (a real runtime program) still prints the same answer
and exits 0, running unthrottled or with the option's default.

    test_bad_input.py BUILD_DIR PROGRAM [ARGS...]

Covered: every APSHIM_* option with empty, negative, NaN, huge, garbage and control-character
values; APSHIM_P above the table's limit (gat/layout.hpp kMaxProcessors); table files truncated,
zero-filled, random, of another layout version or geometry, with P or est_cycle out of range,
readable by others, read-only, a directory, a symlink, owned by another user; a table on a full
filesystem (absent: cannot be created; present: still used, no SIGBUS), on a read-only
filesystem (absent and present), beyond RLIMIT_FSIZE; more jobs than table rows (gat_fill).
The filesystem cases mount a private tmpfs in a new mount namespace (`unshare -m`); where that is
impossible the test says so and skips only those cases.
"""
import os
import random
import re
import resource
import shutil
import struct
import subprocess
import sys

from apshim_test import Check, Shim

build, argv = sys.argv[1], sys.argv[2:]
shim = Shim(build)
check = Check("bad_input")
native = shim.native(argv, timeout=120)
check.expect(native.returncode == 0 and native.stdout, "native run prints its answer")
answer = native.stdout.split("time_s=")[0]


def shape(line):
    return re.sub(r"\d+", "N", line)


# What the program itself may print on stderr (numbers aside); anything else that is not one of
# the shim's lines (a continuation of a broken line, a crash message) fails the case.
program_stderr = {shape(l) for l in native.stderr.splitlines()}


def run_with(label, env, expect_lines, must_mention, run_argv=None, **kw):
    r = shim.run(run_argv or argv, env, timeout=120, **kw)
    lines = r.stderr.splitlines()
    ours = [l for l in lines if l.startswith("apshim[")]
    stray = [l for l in lines if not l.startswith("apshim[") and shape(l) not in program_stderr]
    check.expect(r.returncode == 0 and r.stdout.split("time_s=")[0] == answer,
                 f"{label}: same answer, exit 0 (exit {r.returncode})")
    check.expect(len(ours) == expect_lines and all(must_mention in l for l in ours) and not stray,
                 f"{label}: {expect_lines} stderr line(s) mentioning {must_mention!r} (got {ours}, other {stray})")
    return r


# --- options -----------------------------------------------------------------------------------
HUGE = "9" * 300
bad_values = {
    "APSHIM_ETA": ["", "-1", "nan", "inf", "1e999", "2", "0", HUGE, "garbage", "0.5x"],
    "APSHIM_EST_CYCLE_MS": ["", "-5", "nan", "1e999", "0", "0.1", "99999999", HUGE, "garbage"],
    "APSHIM_P": ["", "-3", "nan", "0", "4097", "100000", "99999999999999999999999", "2.5", HUGE, "garbage"],
    "APSHIM_GAT": ["", "relative/path", "nan", "/" + "x" * 300, "/tmp/a\nb"],
    "APSHIM_POLICY": ["", "-1", "nan", HUGE, "fastest", "bad\nsecond line"],
    "APSHIM_TRACE": ["", "/" + "t" * 300, "/tmp/t\n.csv"],
    "APSHIM_LOG": ["", "-1", "nan", HUGE, "loud", "\x1b[31mred"],
    "APSHIM_DISABLE": ["", "-1", "nan", HUGE, "maybe"],
}
for var, values in bad_values.items():
    for k, bad in enumerate(values):
        env = shim.env(P=2, gat=shim.path(f"gat-{var}-{k}"))
        env[var] = bad
        r = run_with(f"{var}={bad[:40]!r}", env, 1, var)
        check.expect("\x1b" not in r.stderr, f"{var}={bad[:40]!r}: no control characters reach stderr")

env = shim.env(P=2)
env["APSHIM_NO_SUCH_OPTION"] = "1"
run_with("unknown option", env, 1, "APSHIM_NO_SUCH_OPTION")
# A trace file that cannot be written: tracing off, the rest runs.
run_with("unwritable trace", shim.env(P=2, gat=shim.path("gat-trace"), trace="/nonexistent-dir/t.csv"), 1,
         "/nonexistent-dir/t.csv")

# --- table files -------------------------------------------------------------------------------
good = shim.path("good")
r = shim.run(argv, shim.env(P=2, gat=good), timeout=120)
image = open(good, "rb").read() if os.path.exists(good) else None
check.expect(image is not None and len(image) > 4096, "a good run creates the table")


def bad_table(name, make, mention="running unthrottled"):
    path = shim.path(name)
    make(path)
    run_with(f"table {name}", shim.env(P=2, gat=path), 1, mention)


def write(path, data, mode=0o600):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def patched(offset, fmt, value):
    return image[:offset] + struct.pack(fmt, value) + image[offset + struct.calcsize(fmt):]


# Header offsets (gat/layout.hpp): version 8, max_rows 28, processors 32, est_cycle_us 36.
bad_table("truncated", lambda p: write(p, image[:100]))
bad_table("empty", lambda p: write(p, b""))
bad_table("zero-filled", lambda p: write(p, bytes(len(image))))
bad_table("random", lambda p: write(p, random.Random(3).randbytes(len(image))))
bad_table("wrong-version", lambda p: write(p, patched(8, "<I", 99)))
bad_table("other-geometry", lambda p: write(p, patched(28, "<I", 1024)))
bad_table("P-beyond-limit", lambda p: write(p, patched(32, "<i", 5000)))
bad_table("P-negative", lambda p: write(p, patched(32, "<i", -2)))
bad_table("est-cycle-zero", lambda p: write(p, patched(36, "<I", 0)))
bad_table("longer", lambda p: write(p, image + bytes(4096)))
bad_table("readable-by-others", lambda p: write(p, image, 0o644))
bad_table("read-only", lambda p: write(p, image, 0o400))
bad_table("directory", lambda p: os.mkdir(p))
bad_table("fifo", lambda p: os.mkfifo(p, 0o600))


def symlink(p):
    write(p + ".target", image)
    os.symlink(p + ".target", p)


bad_table("symlink", symlink)
if os.geteuid() == 0:
    def foreign(p):
        write(p, image)
        os.chown(p, 65534, 65534)
    bad_table("other-user", foreign)


# A file size limit below the table's size: creating it fails with EFBIG (and must not kill the
# host with SIGXFSZ).
def small_fsize():
    resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))


run_with("RLIMIT_FSIZE 8 KiB", shim.env(P=2, gat=shim.path("gat-fsize")), 1, "running unthrottled",
         preexec_fn=small_fsize)

# --- full and read-only filesystems ------------------------------------------------------------
# Each case runs in its own mount namespace with a private tmpfs at DIR; SETUP prepares it, then
# the program runs there under the shim (only the program is preloaded).
WRAP = ('d=$1; lib=$2; shift 2; mount -t tmpfs -o size=1m,mode=0700 apshim-test "$d" || exit 97; '
        '{setup}; exec env LD_PRELOAD="$lib" "$@"')
FILL = ('dd if=/dev/zero of="$d/filler" bs=4096 2>/dev/null; '
        'if printf x > "$d/probe" 2>/dev/null; then echo "filesystem not full" >&2; fi')
RO = 'mount -o remount,ro "$d" || echo "remount read-only failed" >&2'
COPY = f'cp {good!r} "$d/gat" && chmod 600 "$d/gat"'
probe_dir = shim.path("mount-probe")
os.mkdir(probe_dir)
unshare = shutil.which("unshare")
probe = subprocess.run([unshare or "unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs -o size=8k apshim-probe "$0"', probe_dir],
                       capture_output=True, text=True, timeout=30) if unshare else None
if probe is None or probe.returncode != 0:
    why = probe.stderr.strip() if probe else "no unshare(1)"
    print(f"SKIP full and read-only filesystem cases: cannot mount a private tmpfs here ({why}). "
          "No substitute for root: root ignores directory permissions, so only a real read-only "
          "or full mount shows the behaviour; RLIMIT_FSIZE above covers the failed reservation.")
else:
    for name, setup, with_table, lines, mention in [
            ("full filesystem, no table", FILL, False, 1, "No space left on device"),
            ("full filesystem, table present", COPY + "; " + FILL, True, 0, ""),
            ("read-only filesystem, no table", RO, False, 1, "Read-only file system"),
            ("read-only filesystem, table present", COPY + "; " + RO, True, 1, "Read-only file system")]:
        d = shim.path("fs-" + re.sub(r"\W+", "-", name))
        os.mkdir(d)
        env = shim.env(P=2, gat=os.path.join(d, "gat"), preload=False)
        wrapped = [unshare, "-m", "--propagation", "private", "sh", "-c", WRAP.format(setup=setup), "sh", d,
                   shim.preload] + argv
        run_with(name, env, lines, mention, run_argv=wrapped)

# --- more jobs than table rows -----------------------------------------------------------------
gat_fill = os.path.join(build, "tests", "fault", "gat_fill")
ROWS = 512  # gat/layout.hpp kMaxRows
full_gat = shim.path("gat-rows")
fill_env = shim.env(P=2, gat=full_gat, preload=False)
fills = []


def fill(n):
    p = subprocess.Popen([gat_fill, str(n)], env=fill_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    fills.append(p)
    return p.stdout.readline().split()


try:
    got = fill(ROWS - 1)
    check.expect(got == ["ready", str(ROWS - 1), "0"], f"{ROWS - 1} stand-in jobs hold rows (got {got})")
    run_with(f"table with {ROWS - 1} jobs (one row left)", shim.env(P=2, gat=full_gat), 0, "")
    got = fill(1)
    check.expect(got == ["ready", "1", "0"], f"the last row taken (got {got})")
    run_with(f"table full ({ROWS} jobs)", shim.env(P=2, gat=full_gat), 1, "table full")
    got = fill(1)
    check.expect(got == ["ready", "0", "1"], f"a stand-in job beyond {ROWS} rows is refused (got {got})")
finally:
    for p in fills:
        p.stdin.close()
    for p in fills:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            check.expect(False, "gat_fill leaves when told")
if os.environ.get("TEST_PRELOAD_FIRST"):
    # Sanitized stand-ins are slow to leave all at once (hundreds of forked children fault in
    # their copies of the sanitizer's shadow memory while holding the lock): leave() gives up
    # after 20 cycles, by design, and the next scan reclaims the row. Here that scan is gc.
    subprocess.run([shim.cli, "gc"], env=shim.env(gat=full_gat), capture_output=True, timeout=30)
# Their rows are gone or dead now (512 leaving at once may time out on the lock and leave the row
# to the next job's scan): the next job joins again, and afterwards the table is empty.
run_with("table after the stand-in jobs exited", shim.env(P=2, gat=full_gat), 0, "")
status = shim.status(shim.env(gat=full_gat))
check.expect(status is not None and len(status["jobs"]) == 0,
             f"no rows left behind (got {len(status['jobs']) if status else None})")
check.done()
