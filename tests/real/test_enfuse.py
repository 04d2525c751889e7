"""enfuse (Debian's enblend-enfuse 4.2, libgomp): exposure fusion of three 3000x2000 images, the
shape that fooled the confinement check (docs/enforcement.md, twenty-seventh session): marks in
bursts between long regions of static loops, which a comparison of two windows one after the
other read as hand-overs, so that the job was held unconfined and used 1.23 CPUs at allotment 1.
Throttled it must stay confined (no `handover` in its trace) within the CPU bound of realprog.py.

enfuse's own runs differ natively by one level in about 16% of the pixels (with one thread too),
so the output must be within one level of the native run's everywhere, not identical."""
import sys

import numpy as np

import inputs
from realprog import RealProgram, build_dir, require, trace_rows

ENFUSE = "/usr/bin/enfuse"
EXPOSURES = (0.5, 0.7, 0.9)


def read_ppm(path):
    """A binary PPM (P6) of 8-bit values as an array (height, width, 3), None when unreadable;
    enfuse (VIGRA) writes a comment into the header, and its largest value as the maximum."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields, i = [], 0
    while len(fields) < 4 and i < len(data):
        if data[i:i + 1].isspace():
            i += 1
        elif data[i:i + 1] == b"#":
            i = data.index(b"\n", i) + 1
        else:
            j = i
            while j < len(data) and not data[j:j + 1].isspace():
                j += 1
            fields.append(data[i:j])
            i = j
    if len(fields) < 4 or fields[0] != b"P6" or not 0 < int(fields[3]) < 256:
        return None
    w, h = int(fields[1]), int(fields[2])
    pixels = np.frombuffer(data, np.uint8, count=w * h * 3, offset=i + 1)
    return pixels.reshape(h, w, 3).astype(np.int16)


def within_one_level(out, ref):
    if out is None or ref is None or out.shape != ref.shape:
        return False, f"shapes {None if out is None else out.shape} vs {None if ref is None else ref.shape}"
    diff = np.abs(out - ref)
    return int(diff.max()) <= 1, f"largest difference {int(diff.max())} level(s), {np.mean(diff > 0):.1%} of the values differ"


t = None


def argv(tag):
    return [ENFUSE, "-o", t.shim.path(f"out-{tag}.ppm")] + [t.shim.path(f"e{i}.ppm") for i in range(len(EXPOSURES))]


t = RealProgram("real.enfuse", build_dir(), argv, lambda tag, m: read_ppm(t.shim.path(f"out-{tag}.ppm")),
                same=within_one_level)
require(t.check, ENFUSE)
inputs.write_ppm(t.shim.path("in.ppm"), 3000, 2000)
base = read_ppm(t.shim.path("in.ppm"))
for i, f in enumerate(EXPOSURES):
    with open(t.shim.path(f"e{i}.ppm"), "wb") as out:
        out.write(b"P6\n3000 2000\n255\n" + (base.astype(np.float32) * f).astype(np.uint8).tobytes())
t.native()
t.check.expect(t.reference is not None, "native: the output is a readable PPM")
t.alone()
if t.throttled() is not None:
    phases = sorted({r["confine_check"] for r in trace_rows(t.shim.path("trace-throttled.%p"))})
    t.check.expect("handover" not in phases, f"throttled: kept confined, never held as hand-over bound (phases {phases})")
t.p8()
t.done()
