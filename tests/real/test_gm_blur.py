"""GraphicsMagick (libgomp OpenMP): `gm convert in.ppm -blur 0x24 -blur 0x24 out.ppm` on a
1600x1200 deterministic image (inputs.write_ppm); the output file must hash the same as the
native run's; alone, throttled to allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py)."""
from realprog import RealProgram, build_dir, file_sha256, require
import inputs

GM = "/usr/bin/gm"
BLUR = ["-blur", "0x24"] * 2

t = None


def argv(tag):
    return [GM, "convert", t.shim.path("in.ppm")] + BLUR + [t.shim.path(f"out-{tag}.ppm")]


t = RealProgram("real.gm_blur", build_dir(), argv, lambda tag, m: file_sha256(t.shim.path(f"out-{tag}.ppm")))
require(t.check, GM)
inputs.write_ppm(t.shim.path("in.ppm"), 1600, 1200)
t.all_modes()
