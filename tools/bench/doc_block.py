# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A benchmark script's generated block in a document (BENCHMARKS.md): the
lines between its begin and end markers are replaced by a run's; a first
run puts the block, under its heading, after an anchor line."""
import os
import sys


def put(path, begin, end, lines, anchor, heading, who):
    """Write lines into path's block; False (and a line on stderr) if it has neither block nor anchor."""
    with open(path) as f:
        text = f.read()
    block = begin + "\n" + "\n".join(lines) + "\n" + end
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    elif anchor in text:
        text = text.replace(anchor, anchor + "\n\n" + heading + "\n\n" + block, 1)
    else:
        print(f"{who}: {path} has neither this block nor '{anchor}'", file=sys.stderr)
        return False
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return True
