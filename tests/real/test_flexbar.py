"""flexbar (oneTBB pipeline): adapter removal on 30,000 deterministic 100-base reads
(inputs.write_fastq) with `-n 2` (flexbar's default is one thread); the trimmed FASTQ must hash
the same as the native run's; alone, throttled to allotment 1 by a co-runner, and at
APSHIM_P=8 (realprog.py)."""
from realprog import RealProgram, build_dir, file_sha256, require
import inputs

FLEXBAR = "/usr/bin/flexbar"
READS = 30000

t = None


def argv(tag):
    return [FLEXBAR, "-r", t.shim.path("reads.fastq"), "-a", t.shim.path("reads.fa"), "-n", "2",
            "-t", t.shim.path(f"out-{tag}")]


def output_of(tag, m):
    return file_sha256(t.shim.path(f"out-{tag}.fastq"))


# -n 2: flexbar's main thread and one TBB worker. (The shim's controller thread, started from a
# hook that libtbb's pipeline called, once counted as a third: its creation had libtbb on the stack.)
t = RealProgram("real.flexbar", build_dir(), argv, output_of, threads=2)
require(t.check, FLEXBAR)
inputs.write_fastq(t.shim.path("reads"), READS)
t.all_modes()
