"""rename_soname.py IN OUT OLD NEW: a copy of shared library IN whose soname OLD is NEW (same
length), as auditwheel renames the runtimes a wheel vendors (libgomp-<hash>.so.1), without
patchelf: the soname is a string in .dynstr, replaced in place. Only its first occurrence:
.dynstr comes before .rodata, where libomp names itself again (a string it must keep)."""
import sys

src, dst, old, new = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
if len(old) != len(new):
    sys.exit("rename_soname.py: OLD and NEW must have the same length")
data = open(src, "rb").read()
if old + b"\0" not in data:
    sys.exit(f"rename_soname.py: {old!r} is not in {src}")
with open(dst, "wb") as f:
    f.write(data.replace(old + b"\0", new + b"\0", 1))
