"""ImageMagick 6 (libgomp OpenMP, Debian's imagemagick-6.q16): `convert in.ppm -median 3 out.ppm`
on a 400x8200 deterministic image (inputs.write_ppm); the output file must hash the same as the
native run's; alone, throttled to allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py).

Another shape than GraphicsMagick's blur: each of MagickCore's loops asks for its own team size
with `num_threads(...)` by a rule of its own, so the teams are explicit requests, not the default
size. Which images get two threads was measured, not derived: -median 3 ran on one thread at
800x4200, 1000x4200 and 600x5000, on two at 400x8200 (62nd session), hence the tall image. The
binary is called by its package path, not as `convert`, which may be another program's name on
the PATH."""
from realprog import RealProgram, build_dir, file_sha256, require
import inputs

CONVERT = "/usr/bin/convert-im6.q16"

t = None


def argv(tag):
    return [CONVERT, t.shim.path("in.ppm"), "-median", "3", "-depth", "8", "ppm:" + t.shim.path(f"out-{tag}.ppm")]


t = RealProgram("real.imagemagick", build_dir(), argv, lambda tag, m: file_sha256(t.shim.path(f"out-{tag}.ppm")))
require(t.check, CONVERT)
inputs.write_ppm(t.shim.path("in.ppm"), 400, 8200)
t.all_modes()
