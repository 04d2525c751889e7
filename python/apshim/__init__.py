"""apshim from Python: the shim and the `apshim` command that this package carries, and the table.

    import apshim
    apshim.status()        # {"P": 16, "est_cycle_ms": 5.0, "jobs": [{"pid": ..., "allotment": ...}, ...]}
    apshim.run(["python", "train.py"])   # runs a program under the shim, returns its exit status

`python -m apshim run -- python train.py` and the `apshim` command on PATH do the same as the
command-line tool (README.md)."""
import json
import os
import subprocess

_HERE = os.path.dirname(os.path.abspath(__file__))


def cli_path():
    """The `apshim` executable inside this package."""
    return os.path.join(_HERE, "bin", "apshim")


def lib_path():
    """libapshim.so inside this package (what LD_PRELOAD must name)."""
    return os.path.join(_HERE, "lib", "libapshim.so")


def status(gat=None):
    """The table as a dict: P, est_cycle_ms and one dict per job ({"P": ..., "jobs": []} before
    any job created it). `gat` names another table than APSHIM_GAT / the default."""
    argv = [cli_path()] + (["--gat", gat] if gat else []) + ["status", "--json"]
    r = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def run(argv, **options):
    """Runs argv under the shim; options are `apshim run` flags without the dashes
    (eta=0.7, est_cycle=10, policy="wsap", trace="t.%p.csv"). Returns the exit status."""
    flags = []
    for key, value in options.items():
        flags += ["--" + key.replace("_", "-"), str(value)]
    return subprocess.call([cli_path(), "run"] + flags + ["--"] + list(argv))
