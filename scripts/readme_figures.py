#!/usr/bin/env python3
"""Regenerates the figures in README.md from the commands that make them.

Each block between <!-- figures:NAME --> and <!-- /figures:NAME --> is
replaced by the command and its output, run from the repository root with
the binary in build/.  Usage: python3 scripts/readme_figures.py [NAME...]
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCKS = {
    "schedule": ["./build/dansched", "schedule", "-o", "out", "--quiet"],
    "mpas": ["./build/dansched", "schedule", "-o", "out/mpas", "--stage",
             "mpas", "--quiet"],
    "bench": ["./build/dansched", "bench", "--quiet"],
    "scale": ["./build/dansched", "bench", "--scale", "--nodes",
              os.environ.get("SCALE_NODES", "1000000")],
}


def main(names):
    path = os.path.join(ROOT, "README.md")
    text = open(path).read()
    for name in names or BLOCKS:
        cmd = BLOCKS[name]
        out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout.rstrip()
        block = ("<!-- figures:%s -->\n```\n$ %s\n%s\n```\n<!-- /figures:%s -->"
                 % (name, " ".join(cmd), out, name))
        text, n = re.subn(r"<!-- figures:%s -->.*?<!-- /figures:%s -->"
                          % (name, name), lambda m: block, text, flags=re.S)
        if n != 1:
            sys.exit("README.md has no block for %s" % name)
    open(path, "w").write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
