"""Deterministic inputs for the real programs (tests/real and bench/scenarios.py), written with
the standard library only: the same bytes on every machine, no third-party data."""
import random


def write_ppm(path, width, height, seed=7):
    """A binary PPM (P6) with smooth gradients, rings and hashed noise: blurring it does real
    work on every pixel. ~0.3 s per million pixels."""
    rng = random.Random(seed)
    noise = bytes(rng.randrange(256) for _ in range(4096))
    rows = []
    for y in range(height):
        row = bytearray(width * 3)
        for x in range(width):
            r = (x * x + 3 * y * y) >> 9
            row[3 * x] = (r + noise[(x * 7 + y * 13) & 4095]) & 255
            row[3 * x + 1] = (x + 2 * y + (noise[(x + y * 31) & 4095] >> 2)) & 255
            row[3 * x + 2] = ((x ^ y) + (r >> 3)) & 255
        rows.append(bytes(row))
    with open(path, "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (width, height))
        f.write(b"".join(rows))


ADAPTERS = [("adapter_truseq", "AGATCGGAAGAGCACACGTCTGAACTCCAGTCAC"),
            ("adapter_nextera", "CTGTCTCTTATACACATCTCCGAGCCCACGAGAC")]


def write_fastq(prefix, reads, length=100, seed=42):
    """prefix.fastq: `reads` reads of `length` bases, about half ending in one of ADAPTERS (insert
    shorter than the read), a few with mismatches in the adapter; prefix.fa: the adapters.
    Returns (fastq path, fasta path)."""
    rng = random.Random(seed)
    quals = ["".join(chr(33 + rng.randrange(20, 41)) for _ in range(length)) for _ in range(64)]
    lines = []
    for i in range(reads):
        insert = rng.randrange(20, 2 * length)
        seq = rng.choices("ACGT", k=min(insert, length))
        if insert < length:
            adapter = list(ADAPTERS[i % 2][1] * 3)
            if i % 5 == 0:
                adapter[rng.randrange(10)] = "N"
            seq += adapter[:length - insert]
        lines.append(f"@read{i}\n{''.join(seq)}\n+\n{quals[i % 64]}\n")
    with open(prefix + ".fastq", "w") as f:
        f.write("".join(lines))
    with open(prefix + ".fa", "w") as f:
        f.write("".join(f">{name}\n{seq}\n" for name, seq in ADAPTERS))
    return prefix + ".fastq", prefix + ".fa"


WORDS = ("the of and to in is was for on that with as by at from his her which an have are were this be had "
         "not but they one all their there been has more who will would about out so up what can into than "
         "other some time could these two may then first any like now only its over also new after").split()


def write_page(path, lines=60, seed=5):
    """A page of printed text for OCR: `lines` lines of 12 seeded words in DejaVu Sans 22 pt, drawn
    by GraphicsMagick (`gm`) into a PNG. Unlike the inputs above it depends on gm's and the font's
    versions, so its bytes are the same within one machine, not across machines."""
    import subprocess
    rng = random.Random(seed)
    draws = []
    for i in range(lines):
        draws += ["-draw", f"text 40,{40 + i * 34} '{' '.join(rng.choice(WORDS) for _ in range(12))}'"]
    subprocess.run(["/usr/bin/gm", "convert", "-size", f"1700x{80 + lines * 34}", "xc:white", "-font",
                    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "-pointsize", "22", "-fill", "black"]
                   + draws + [path], check=True)


def write_alignment(path, sequences, length, rate=0.05, seed=4):
    """A FASTA nucleotide alignment of `sequences` rows of `length` bases, each a copy of an
    earlier row (a random one) with a fraction `rate` of its bases redrawn: tree-like, so that a
    phylogenetics program (FastTree) has a tree to find."""
    rng = random.Random(seed)
    rows = [[rng.choice("ACGT") for _ in range(length)]]
    while len(rows) < sequences:
        row = list(rows[rng.randrange(len(rows))])
        for i in range(length):
            if rng.random() < rate:
                row[i] = rng.choice("ACGT")
        rows.append(row)
    with open(path, "w") as f:
        for i, row in enumerate(rows):
            f.write(f">s{i}\n{''.join(row)}\n")
