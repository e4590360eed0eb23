#!/usr/bin/env python3
"""notebook.py: plan graphs from Python and print the table that
`dansched schedule` prints (same columns, same figures; `seconds` is the
CPU time of load + plan).

    PYTHONPATH=python DANSCHED_LIB=build/libdansched.so \\
        python3 examples/notebook.py                 # every data/*.json
    python3 examples/notebook.py data/Matmul_Case0.json --scheduler lpmf

The cells of a notebook would be the body of main(): load, schedule, read
plan.figures.
"""

import argparse
import glob
import os
import time

import dansched

HEADER = ("%-22s %9s %10s %10s %7s %10s %10s %6s %10s %10s %9s %8s"
          % ("case", "nodes", "peak_vstay", "extra_ddr", "spills",
             "makespan", "lower_bnd", "ratio", "lb_phase", "lb_any",
             "ratio_any", "seconds"))


def row(name, f, seconds):
    """One line of the table: the figures of a plan."""
    lb = max(f["lb_critical_path"], f["lb_pipe_load"])
    ratio = f["makespan"] / lb if lb else 0.0
    return ("%-22s %9d %10d %10d %7d %10d %10d %6.3f %10d %10d%s %8.3f %8.3f"
            % (name, f["nodes"], f["peak_vstay"], f["extra_ddr"],
               f["spills"], f["makespan"], lb, ratio, f["lb_phase"],
               f["lb_any"], " " if f["lb_any_exact"] else "~",
               f["ratio_any"], seconds))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = sorted(glob.glob(os.path.join(here, "..", "data", "*.json")))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="*", default=bundled,
                    help="graph files (default: the bundled data/*.json)")
    ap.add_argument("--scheduler", default="dan",
                    choices=dansched.SCHEDULERS)
    ap.add_argument("--stage", default="cpe", choices=dansched.STAGES)
    ap.add_argument("-o", metavar="DIR",
                    help="also write the result files into DIR")
    args = ap.parse_args()

    print(HEADER)
    for path in args.graphs:
        t0 = time.process_time()
        with dansched.load(path) as g:
            plan = g.schedule(scheduler=args.scheduler, stage=args.stage)
            seconds = time.process_time() - t0
            print(row(g.name, plan.figures, seconds))
            if args.o:
                plan.write(args.o)


if __name__ == "__main__":
    try:
        main()
    except dansched.Error as exc:  # the library's one-line message
        raise SystemExit("notebook.py: %s" % exc)
