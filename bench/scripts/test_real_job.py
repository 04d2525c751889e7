#!/usr/bin/env python3
"""bench/real_job.py's GROMACS checksum (gmx_checksum) on md.log and md.gro files laid out as
GROMACS 2022 writes them: runs that differ only in their trajectory (another thread count) hash
the same; a run cut short, one whose average temperature strays from the thermostat's 300 K, or
one with other atoms hashes otherwise. A parser check, no GROMACS needed.
Usage: test_real_job.py"""
import importlib.util
import os
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("real_job", os.path.join(here, "..", "real_job.py"))
real_job = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real_job)
failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failed += not ok


def row(cells, fmt):
    return "".join(fmt % c for c in cells)


def log(last_step, temperature, conserved):
    """md.log's last step block and its averages, GROMACS's layout (15-character columns)."""
    step = f"           Step           Time\n{last_step:15d}{last_step * 0.002:15.5f}\n\n"
    return ("Started mdrun\n" + step.replace(str(last_step), "0", 1) + "   Energies (kJ/mol)\n" + step +
            "\t<====  A V E R A G E S  ====>\n\t<==  ###############  ======>\n\n"
            "\tStatistics over 1501 steps using 16 frames\n\n   Energies (kJ/mol)\n" +
            row(["LJ (SR)", "Coulomb (SR)", "Coul. recip.", "Potential", "Kinetic En."], "%15s") + "\n" +
            row([8.06461e+03, -4.96029e+04, 2.02168e+02, -4.13361e+04, 6.40618e+03], "%15.5e") + "\n" +
            row(["Total Energy", "Conserved En.", "Temperature", "Pressure (bar)"], "%15s") + "\n" +
            row([-3.49299e+04, conserved, temperature, -5.54569e+02], "%15.5e") + "\n\n   Total Virial (kJ/mol)\n")


def checksum(last_step=1500, temperature=290.695, conserved=-4.10260e+04, atoms=2652, first_atom="0.299   0.410"):
    with tempfile.TemporaryDirectory(prefix="apshim-real-job-") as tmp:
        with open(os.path.join(tmp, "md.log"), "w") as f:
            f.write(log(last_step, temperature, conserved))
        with open(os.path.join(tmp, "md.gro"), "w") as f:
            f.write(f"water\n {atoms}\n    1SOL     OW    1   {first_atom}   2.957 -0.2202 -0.0007  0.8600\n")
        return real_job.gmx_checksum(tmp)


base = checksum()
check(checksum(temperature=291.108, conserved=-4.10257e+04, first_atom="0.134   0.593") == base,
      "another trajectory of the same run (another thread count) hashes the same")
check(checksum(last_step=1200) != base, "a run that stopped at step 1200 hashes otherwise")
check(checksum(temperature=412.0) != base, "an average temperature 112 K off 300 K hashes otherwise")
check(checksum(atoms=2649) != base, "other atoms hash otherwise")
sys.exit(1 if failed else 0)
