#!/usr/bin/env python3
"""model/maptable.py - keep docs/design.md's model-to-code table honest.

The table in section 18 names, for each step of model/grb.pml, the C
function and its line range.  With --check (used by model/check.sh) this
fails when a range no longer matches the code; with --fix it rewrites the
ranges.  Function bodies are found as a definition line followed by a
brace at column 0 and the next closing brace at column 0 (kernel style).
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "design.md"
ROW = re.compile(r"`(?:(?P<file>[\w/.]+):)?(?P<func>\w+)` \((?:lines )?(?P<a>\d+)-(?P<b>\d+)\)")


def body_range(path, func):
    lines = (ROOT / path).read_text().split("\n")
    # At column 0 and starting with a letter: a comment line (" * f()")
    # naming the function is not its definition.
    head = re.compile(r"^[A-Za-z_][\w\s\*]*\b" + func + r"\(")
    for i, line in enumerate(lines):
        if head.match(line) and not line.rstrip().endswith(";"):
            j = i
            while not lines[j].startswith("{"):
                j += 1
            k = j
            while not lines[k].startswith("}"):
                k += 1
            return i + 1, k + 1
    return None


def main():
    fix = "--fix" in sys.argv
    text = DOC.read_text()
    bad = []
    out = []
    for line in text.split("\n"):
        if line.startswith("| ") and "`" in line and ROW.search(line):
            last_file = None

            def sub(m):
                nonlocal last_file
                path = m.group("file") or last_file
                last_file = path
                if path is None:
                    bad.append(f"no file for {m.group('func')}")
                    return m.group(0)
                got = body_range(path, m.group("func"))
                want = (int(m.group("a")), int(m.group("b")))
                if got is None:
                    bad.append(f"{path}:{m.group('func')} not found")
                    return m.group(0)
                if got != want:
                    bad.append(f"{path}:{m.group('func')} is at {got[0]}-{got[1]}, "
                               f"the table says {want[0]}-{want[1]}")
                    return m.group(0).replace(f"{want[0]}-{want[1]}", f"{got[0]}-{got[1]}")
                return m.group(0)

            line = ROW.sub(sub, line)
        out.append(line)
    if fix:
        DOC.write_text("\n".join(out))
        return 0
    for b in bad:
        print("model map:", b)
    if bad:
        print("model map: run model/maptable.py --fix and check the model still matches")
        return 1
    print("model map: every line range in docs/design.md matches the code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
