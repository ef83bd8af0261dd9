#!/usr/bin/env python3
# embed-text.py IN OUT NAME - write OUT, a C file that defines
# "const char NAME[]": the text of IN as a NUL-terminated string, so that
# the build needs nothing but a C compiler to carry a text file into the
# program.  The bytes are listed one by one: C17 promises no string
# literal longer than 4095 characters.
import sys

src, out, name = sys.argv[1:4]
with open(src, "rb") as f:
    data = f.read() + b"\0"
rows = [", ".join(str(b) for b in data[i:i + 16]) for i in range(0, len(data), 16)]
with open(out, "w", encoding="ascii") as f:
    f.write(f"/* Generated from {src.split('/')[-1]} by scripts/embed-text.py: do not edit. */\n")
    f.write(f"extern const char {name}[];\n")
    f.write(f"const char {name}[] = {{\n")
    f.write(",\n".join("\t" + r for r in rows))
    f.write("\n};\n")
