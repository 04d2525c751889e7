"""README.md's options table is `apshim options --markdown`, row for row: one table, no drift."""
import subprocess
import sys

from apshim_test import Check, Shim

build, readme = sys.argv[1], sys.argv[2]
shim = Shim(build)
check = Check("readme_options")
rows = subprocess.run([shim.cli, "options", "--markdown"], capture_output=True, text=True).stdout.splitlines()
text = open(readme).read()
check.expect(len(rows) >= 8, "the options table has rows")
for row in rows:
    check.expect(row in text, f"README carries: {row[:60]}")
check.done()
