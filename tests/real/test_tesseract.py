"""tesseract (Debian's tesseract-ocr, libgomp): OCR of a printed page (inputs.write_page). Its LSTM
runs a team of num_threads(4) for every step, tens of thousands of tiny regions a second, which
makes it several times slower than with one thread (users set OMP_THREAD_LIMIT=1); OpenMP promises
it those 4 threads all the same. The text must be the same as the native run's, alone, throttled to
allotment 1 by a co-runner, and at APSHIM_P=8 (realprog.py). Alone its desire is 1, and it runs
on its own processor and the idle one: the width check (shim/width_check.hpp) may keep it on one of
them, which it decided is printed, not judged (it is a measurement of this machine). The idle
check (shim/idle_check.hpp) asks the same question there (its own processor or both), and stands
aside for the width check, which tries either processor (shim/controller.cpp: same_question):
judged from the trace on 2 CPUs, the idle check never probes (it probed and declined the idle
processor until the forty-fifth session)."""
import hashlib
import os
from collections import Counter

from realprog import RealProgram, build_dir, require, trace_rows
import inputs

TESSERACT = "/usr/bin/tesseract"

t = None


def argv(tag):
    return [TESSERACT, t.shim.path("page.png"), t.shim.path(f"out-{tag}")]


def output_of(tag, m):
    try:
        with open(t.shim.path(f"out-{tag}.txt"), "rb") as f:
            text = f.read()
    except OSError:
        return None
    return hashlib.sha256(text).hexdigest() if text.strip() else None  # no text read: a failure too


t = RealProgram("real.tesseract", build_dir(), argv, output_of)
require(t.check, TESSERACT, "/usr/bin/gm", "/usr/share/tesseract-ocr/5/tessdata/eng.traineddata",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
inputs.write_page(t.shim.path("page.png"), lines=24)  # about 4 s natively on 2 cores
t.native()
t.alone()
rows = trace_rows(t.shim.path("trace-alone.%p"))
phases = Counter(r.get("idle_check", "?") for r in rows)
widths = Counter(r.get("width_check", "?") for r in rows)
print("alone: idle check per cycle: " + ", ".join(f"{k} {v}" for k, v in sorted(phases.items())) +
      "; width check per cycle: " + ", ".join(f"{k} {v}" for k, v in sorted(widths.items())), flush=True)
if len(os.sched_getaffinity(0)) == 2:  # on more CPUs the idle ones outnumber its own: another question
    t.check.expect(rows and not {"probe", "declined"} & set(phases),
                   f"alone: the idle check stood aside for the width check ({dict(phases)} in {len(rows)} cycles)")
t.throttled()
t.p8()
t.done()
