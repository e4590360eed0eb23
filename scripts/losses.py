#!/usr/bin/env python3
"""losses.py: where dan loses to a baseline on generated graphs (issue 17).

Generates `dansched gen` graphs (kinds, sizes, seeds), runs `dansched bench
--json` on each at each capacity setting, and prints one row per figure
where dan is worse than the best baseline (a graph with a node that
needs more of a memory than a capacity setting holds is left out of that
setting, and counted):

    kind size seed caps figure dan best (baseline)

Figures: extra_ddr, makespan (best over all baselines) and peak_vstay
(dan's MPAS order against the best baseline whose order keeps the one-live
rule: free-first, lpmf, vpux).  Then the totals: losses per figure and
dan's mean extra_ddr over the best baseline's (graphs where the best is 0
are left out of the mean, a loss there is in the table).

usage: scripts/losses.py [--dansched build/dansched] [--kinds random,attention]
                         [--sizes 5000,20000] [--seeds 1-8]
                         [--caps default,L1=2048:UB=768] [--dir /tmp/losses]
(caps separate memories with ':' since ',' separates settings.)
"""
import argparse
import json
import os
import subprocess
import sys

ONE_LIVE = ("free-first", "lpmf", "vpux")
FIGURES = ("extra_ddr", "makespan", "peak_vstay")


def seeds_arg(text):
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def graph_path(args, kind, size, seed):
    path = os.path.join(args.dir, f"{kind}_{size}_{seed}.json")
    if not os.path.exists(path):
        subprocess.run([args.dansched, "gen", "--nodes", str(size), "--kind",
                        kind, "--seed", str(seed), "-o", path], check=True)
    return path


def bench(args, path, caps):
    cmd = [args.dansched, "bench", "--json", path]
    if caps != "default":
        cmd += ["--cap", caps.replace(":", ",")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode == 2 and "more than its capacity" in out.stderr:
        return None  # a node alone does not fit these capacities
    if out.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr}")
    return {r["scheduler"]: r for r in json.loads(out.stdout)["results"]}


def best_of(rows, figure, names):
    best = min((rows[s][figure], s) for s in names)
    return best


def losses(rows):
    """[(figure, dan, best, baseline)] where dan is worse; and the ratio."""
    base = [s for s in rows if s != "dan"]
    dan = rows["dan"]
    out = []
    for fig in FIGURES:
        names = ONE_LIVE if fig == "peak_vstay" else base
        best, who = best_of(rows, fig, names)
        if dan[fig] > best:
            out.append((fig, dan[fig], best, who))
    best_ddr = best_of(rows, "extra_ddr", base)[0]
    # graphs where the best baseline moves nothing are left out of the mean
    ratio = dan["extra_ddr"] / best_ddr if best_ddr else None
    return out, ratio, dan["extra_ddr"], best_ddr, dan["seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dansched", default="build/dansched")
    ap.add_argument("--kinds", default="random,attention")
    ap.add_argument("--sizes", default="5000,20000")
    ap.add_argument("--seeds", default="1-8", type=seeds_arg)
    ap.add_argument("--caps", default="default,L1=2048:UB=768")
    ap.add_argument("--dir", default="/tmp/losses")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    count = {f: 0 for f in FIGURES}
    ratios, graphs, secs, sum_dan, sum_best = [], 0, 0.0, 0, 0
    unfit = 0
    print(f"{'kind':10} {'size':>6} {'seed':>4} {'caps':17} {'figure':10} "
          f"{'dan':>9} {'best':>9}  baseline")
    for kind in args.kinds.split(","):
        for size in [int(s) for s in args.sizes.split(",")]:
            for seed in args.seeds:
                path = graph_path(args, kind, size, seed)
                for caps in args.caps.split(","):
                    rows = bench(args, path, caps)
                    if rows is None:
                        unfit += 1
                        continue
                    lost, ratio, d, b, s = losses(rows)
                    sum_dan += d
                    sum_best += b
                    graphs += 1
                    if ratio is not None:
                        ratios.append(ratio)
                    secs += s
                    for fig, dan, best, who in lost:
                        count[fig] += 1
                        print(f"{kind:10} {size:6} {seed:4} {caps:17} "
                              f"{fig:10} {dan:9} {best:9}  {who}",
                              flush=True)
    print(f"\n{graphs} graph runs; losses: " +
          ", ".join(f"{f} {count[f]}" for f in FIGURES))
    if unfit:
        print(f"{unfit} graph runs left out: a node needs more of a memory "
              "than those capacities hold (every scheduler refuses them)")
    print(f"mean dan extra_ddr / best baseline's: "
          f"{sum(ratios) / len(ratios):.3f} (mean over the {len(ratios)} "
          f"graph runs where it is not 0), "
          f"{sum_dan / max(sum_best, 1):.3f} (sums {sum_dan} / {sum_best}); "
          f"dan seconds in all {secs:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
