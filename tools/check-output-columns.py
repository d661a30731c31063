#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Every file and column name userspace/output/columns.h defines is in
memattr-bpf-output(5) (docs/man/memattr-bpf-output.5), the one description
of the output files: a column added to the code without its description
fails `make man-check`.

Usage: check-output-columns.py [SRCDIR]   (exit 1 on a name not described)
"""
import os
import re
import sys


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    hdr = os.path.join(top, "userspace", "output", "columns.h")
    page = os.path.join(top, "docs", "man", "memattr-bpf-output.5")
    # String literals of the #defines; comments may quote examples, not names.
    code = re.sub(r"/\*.*?\*/", "", open(hdr).read(), flags=re.S)
    names = set()
    for lit in re.findall(r'"([^"]*)"', code):
        names.update(n for n in lit.split(",") if n)
    # The page as read: roff's escaped hyphens and font changes removed.
    text = open(page).read().replace("\\-", "-")
    text = re.sub(r"\\f[BIRP]", "", text)
    missing = sorted(n for n in names if not re.search(r"(?<![A-Za-z0-9_])" + re.escape(n), text))
    for n in missing:
        print(f"check-output-columns: '{n}' (columns.h) is not described in {os.path.relpath(page, top)}",
              file=sys.stderr)
    if missing:
        return 1
    print(f"check-output-columns: {len(names)} file and column names of columns.h, each in memattr-bpf-output(5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
