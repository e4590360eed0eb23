#!/usr/bin/env python3
"""Regenerates the figures in README.md from the commands that make them,
and checks that the program still prints them (the golden-figures test).

Each block between <!-- figures:NAME --> and <!-- /figures:NAME --> is
replaced by the command and its output, run from the repository root with
the binary in build/.  The README blocks are the one place the expected
figures live: `--check` (ctest's `golden`) runs the same commands and
compares every figure of the `schedule`, `mpas` and `bench` blocks with
the README's, except run times (the `seconds` column and the bench's run
time table), so a change of figures is one reviewed commit of README.md
made by this script.

Usage:
  python3 scripts/readme_figures.py [NAME...]            regenerate
  python3 scripts/readme_figures.py --check BINARY [NAME...]
      exit 0 when every figure matches, 1 with one line per figure that
      differs (block, table, graph, column, README and now).  With
      DS_TEST_QUICK=1 only the graphs under 10,000 nodes are run (named
      on the command line) and the bench's averages are not compared.
      NAME: schedule, mpas or bench (scale holds only run times).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCKS = {
    "schedule": ["./build/dansched", "schedule", "-o", "out", "--quiet"],
    "mpas": ["./build/dansched", "schedule", "-o", "out/mpas", "--stage",
             "mpas", "--quiet"],
    "bench": ["./build/dansched", "bench", "--quiet"],
    "scale": ["./build/dansched", "bench", "--scale", "--nodes",
              os.environ.get("SCALE_NODES", "1000000"), "--repeat", "3"],
}
CHECKED = ["schedule", "mpas", "bench"]  # scale is all run times
QUICK_NODES = 10000  # as the quick tests (test_quick(), tests/test_quick.h) skip
# the graphs over 10,000 nodes (tests/test_pipeline.c)


def block_re(name):
    return r"<!-- figures:%s -->.*?<!-- /figures:%s -->" % (name, name)


def regenerate(names):
    path = os.path.join(ROOT, "README.md")
    text = open(path).read()
    for name in names or BLOCKS:
        cmd = BLOCKS[name]
        out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout.rstrip()
        block = ("<!-- figures:%s -->\n```\n$ %s\n%s\n```\n<!-- /figures:%s -->"
                 % (name, " ".join(cmd), out, name))
        text, n = re.subn(block_re(name), lambda m: block, text, flags=re.S)
        if n != 1:
            sys.exit("README.md has no block for %s" % name)
    open(path, "w").write(text)


def split_header(line):
    """Column names of a table header; "vs orig" and "vs best" are one."""
    words, cols = line.split(), []
    for w in words:
        if cols and cols[-1] == "vs":
            cols[-1] = "vs " + w
        else:
            cols.append(w)
    return cols


def parse_tables(text):
    """{(table, graph, column): value} from a command's output: a table is
    a header line starting with `case` and the rows under it, up to a blank
    line; its name is the title line above it (or "" for the first)."""
    figures, lines = {}, text.splitlines()
    title, i = "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("case "):
            cols = split_header(line)
            i += 1
            while i < len(lines) and lines[i].strip():
                cells = lines[i].split()
                # the averages row leaves the schedulers' columns empty
                named = cols if len(cells) == len(cols) else \
                    [cols[0]] + cols[len(cols) - len(cells) + 1:]
                for col, cell in zip(named[1:], cells[1:]):
                    figures[(title, cells[0], col)] = cell
                i += 1
            continue
        if line.strip() and not line.startswith("$"):
            title = line.strip()
        i += 1
    return figures


def is_run_time(key):
    table, _, col = key
    return col == "seconds" or table.startswith("run time")


def readme_block(text, name):
    """The output quoted in block name: the lines after its `$ command`
    line, up to the closing fence."""
    m = re.search(r"<!-- figures:%s -->\n```\n\$ [^\n]*\n(.*?)\n```"
                  % name, text, flags=re.S)
    if not m:
        sys.exit("README.md has no block for %s" % name)
    return m.group(1)


def small_graphs():
    """The bundled graphs under QUICK_NODES nodes, and their case names."""
    data = os.path.join(ROOT, "data")
    paths = sorted(os.path.join(data, f) for f in os.listdir(data)
                   if f.endswith(".json"))
    keep = [p for p in paths if len(json.load(open(p))["Nodes"]) < QUICK_NODES]
    return keep, {os.path.basename(p)[:-5] for p in keep}


def check_block(name, binary, text, tmp, quick):
    cmd = [binary] + BLOCKS[name][1:]
    if "-o" in cmd:
        cmd[cmd.index("-o") + 1] = os.path.join(tmp, name)
    cases = None
    if quick:
        paths, cases = small_graphs()
        cmd += paths
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        return ["%s: '%s' exited %d: %s" % (name, " ".join(cmd),
                                           run.returncode, run.stderr.strip())]
    want = parse_tables(readme_block(text, name))
    got = parse_tables(run.stdout)
    errors = []
    for key in sorted(set(want) | set(got)):
        table, graph, col = key
        if is_run_time(key):
            continue
        if cases is not None and graph not in cases:
            continue  # quick: not run, or an average over all graphs
        if want.get(key) != got.get(key):
            errors.append("%s%s: %s %s: README %s, now %s" % (
                name, " [%s]" % table if table else "", graph, col,
                want.get(key, "(none)"), got.get(key, "(none)")))
    if not want:
        errors.append("%s: the README block has no table" % name)
    return errors


def check(binary, names):
    text = open(os.path.join(ROOT, "README.md")).read()
    q = os.environ.get("DS_TEST_QUICK", "")
    quick = q not in ("", "0")
    tmp = tempfile.mkdtemp(prefix="ds_golden_")
    errors, compared = [], 0
    try:
        for name in names or CHECKED:
            errors += check_block(name, os.path.abspath(binary), text, tmp,
                                  quick)
            compared += 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for e in errors:
        print("FIGURE CHANGED: " + e)
    if errors:
        print("%d figure(s) differ from README.md; if the change is meant, "
              "run python3 scripts/readme_figures.py and commit README.md"
              % len(errors))
        return 1
    print("%d README block(s): every figure as published%s" % (
        compared, " (quick: graphs under %d nodes)" % QUICK_NODES
        if quick else ""))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0)
    unknown = [a for a in args if a not in BLOCKS and a != "--check"]
    if args and args[0] == "--check":
        unknown = [a for a in args[2:] if a not in BLOCKS]
    if unknown:
        sys.exit("readme_figures.py: no README block %s (the blocks: %s)"
                 % (", ".join(unknown), ", ".join(sorted(BLOCKS))))
    if args and args[0] == "--check":
        if len(args) < 2:
            sys.exit(__doc__)
        times = [a for a in args[2:] if a not in CHECKED]
        if times:
            sys.exit("readme_figures.py: --check compares the figures of %s;"
                     " %s holds only run times" % (", ".join(CHECKED),
                                                   ", ".join(times)))
        sys.exit(check(args[1], args[2:]))
    regenerate(args)
