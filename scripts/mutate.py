#!/usr/bin/env python3
"""Mutation check: do the tests notice a small deliberate bug?

Copies the tree (the tracked files, as they are in the working tree) to a
temporary folder beside a link to ../shared, builds it once, then applies
each mutation of MUTATIONS in turn: one textual replacement in one file,
an incremental build, and the tests the mutation names, one at a time and
the likeliest to catch it first, until one fails (the mutation is caught) or all pass (it
survives).  A mutation whose text is not found exactly once, or that does
not build, is reported as such (the code moved: update the list).

Not part of CI (it takes a while).  Runs with DS_CROSSCHECK_QUICK=1 unless
--full.  Usage:
  python3 scripts/mutate.py [--full] [--keep] [--timeout S] [NAME_SUBSTRING...]
Prints one line per mutation and the score; exit 1 if any survives.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the tests of each kind of mutation, the likeliest to catch it first
EVAL = ["test_replay", "test_api", "test_view", "test_crosscheck"]
CLI = ["cli", "golden"]
STAGE = ["golden", "test_pipeline", "test_cpe", "test_mpas", "test_dlr",
         "test_baseline"]

# (name, file, text, replacement, tests)
MUTATIONS = [
    # ---- the evaluator's rules (src/ds_replay.c)
    ("eval: spill nodes skip their pipe's in-order wait", "src/ds_replay.c",
     "if (pp >= 0 && pfree[pp] > s)", "if (pp >= 0 && v < n && pfree[pp] > s)",
     EVAL),
    ("eval: capacity checked against the memory's size only", "src/ds_replay.c",
     "if (off > cap - size)", "if (off > cap)", EVAL),
    ("eval: overlap with a live buffer allowed", "src/ds_replay.c",
     "if (r->occ_end[o] < 0) {", "if (r->occ_end[o] < 0 && !r) {", EVAL),
    ("eval: --q1 one-live rule off", "src/ds_replay.c",
     "} else if (++l0[m] > 1 && q1) {", "} else if (++l0[m] > 1 && q1 && !r) {",
     EVAL),
    ("eval: graph edges not checked for order", "src/ds_replay.c",
     "if (r->pos[g->esrc[k]] > r->pos[g->edst[k]])",
     "if (r->pos[g->esrc[k]] > r->pos[g->edst[k]] + 1)", EVAL),
    ("eval: spill edges not checked for order", "src/ds_replay.c",
     "if (r->pos[r->extra.src[k]] > r->pos[r->extra.dst[k]])",
     "if (r->pos[r->extra.src[k]] > r->pos[r->extra.dst[k]] + 1)", EVAL),
    ("eval: spill node cost 2*size + 100", "src/ds_replay.c",
     "return 2 * g->buf_size[b] + 150;", "return 2 * g->buf_size[b] + 100;",
     EVAL),
    ("eval: SPILL_OUT of a COPY_IN buffer costs cycles", "src/ds_replay.c",
     "if (out && g->buf_copyin[b])", "if (out && g->buf_copyin[b] && !p)",
     EVAL),
    ("eval: no address-reuse edges", "src/ds_replay.c",
     "int rc = add_edge(r, r->occ_end[o], v);",
     "int rc = r ? DS_OK : add_edge(r, r->occ_end[o], v);", EVAL),
    # ---- each stage's key step
    ("cpe: 1 round", "src/ds_cpe.c",
     "#define DEFAULT_ROUNDS 4", "#define DEFAULT_ROUNDS 1", STAGE),
    ("cpe: 1 round and 1 pass", "src/ds_cpe.c",
     "#define FB_PASSES 3", "#define FB_PASSES 1\n#undef DEFAULT_ROUNDS\n"
     "#define DEFAULT_ROUNDS 1", STAGE),
    ("mpas: L0 deadlock guard off", "src/ds_mpas.c",
     "static bool l0_safe(run *r)\n{\n",
     "static bool l0_safe(run *r)\n{\n\tif (r)\n\t\treturn true;\n", STAGE),
    ("dlr: one start (was 16)", "src/ds_pipeline.c",
     "#define DLR_STARTS 16", "#define DLR_STARTS 1", STAGE),
    ("free-first: FREEs not first", "src/ds_order.c",
     "int64_t c = g->kind[v] == DS_FREE ? 0 : g->kind[v] == DS_OP ? 1 : 2;",
     "int64_t c = g->kind[v] == DS_FREE ? 1 : g->kind[v] == DS_OP ? 1 : 2;",
     STAGE),
    # ---- the public API (src/ds_api.c)
    ("api: spill accessor gives the buffer index, not its BufId",
     "src/ds_api.c", "*bufid = g->g->buf_id[p->p.spill[k].buf];",
     "*bufid = p->p.spill[k].buf + 0 * g->g->nbuf;", ["test_api"]),
    ("api: offset accessor ignores the buffer", "src/ds_api.c",
     "return b < 0 || !p->p.offset ? -1 : p->p.offset[b];",
     "return b < 0 || !p->p.offset ? -1 : p->p.offset[0];", ["test_api"]),
    ("api: caller's allocator ignored by builder_new", "src/ds_api.c",
     "\tds_heap h = heap_of(alloc);\n\tdansched_builder *b",
     "\tds_heap h = heap_of(NULL);\n\t(void)alloc;\n\tdansched_builder *b",
     ["test_api"]),
    # ---- each CLI option ignored (src/main.c)
    ("cli: eval --q1 ignored", "src/main.c",
     "rc = dansched_evaluate(g, p, a.q1, &f, &e);",
     "rc = dansched_evaluate(g, p, 0, &f, &e);", CLI),
    ("cli: eval --json ignored", "src/main.c",
     "\tif (a.json)\n\t\treturn print_json(figures_json(NULL, &f, lb_phase));",
     "\tif (a.json && !a.json)\n\t\treturn print_json(figures_json(NULL, &f, lb_phase));",
     CLI),
    ("cli: --cap SPEC ignored", "src/main.c",
     "\t\tcase 3:\n\t\t\tif (dansched_caps_parse(&a->caps, val, &e))",
     "\t\tcase 3:\n\t\t\tif (dansched_caps_parse(&(dansched_caps){{0}}, val, &e))",
     CLI),
    ("cli: --cap=SPEC ignored", "src/main.c",
     "if (dansched_caps_parse(&a->caps, s + 6, &e))",
     "if (dansched_caps_parse(&(dansched_caps){{0}}, s + 6, &e))", CLI),
    ("cli: schedule --effort ignored", "src/main.c",
     "o.effort = a.effort;", "o.effort = 0;", CLI),
    ("cli: schedule --traffic-budget ignored", "src/main.c",
     "o.traffic_budget_pct = a.traffic_budget;", "o.traffic_budget_pct = 5;",
     CLI),
    ("cli: schedule --peak-budget ignored", "src/main.c",
     "o.peak_budget_pct = a.peak_budget;", "o.peak_budget_pct = 0;", CLI),
    ("cli: schedule --stage ignored", "src/main.c",
     "\to.effort = a.effort;", "\to.stage = DANSCHED_CPE;\n\to.effort = a.effort;",
     CLI),
    ("cli: schedule --scheduler forced to dan", "src/main.c",
     "\to.effort = a.effort;",
     "\to.scheduler = DANSCHED_DAN;\n\to.effort = a.effort;", CLI),
    ("cli: schedule --json ignored", "src/main.c",
     "\t\tif (a.json) {\n\t\t\tprint_json(figures_json(j->case_name",
     "\t\tif (a.json && !a.json) {\n\t\t\tprint_json(figures_json(j->case_name",
     CLI),
    ("cli: schedule -v ignored", "src/main.c",
     "\tif (a.verbose)\n\t\to.progress = progress_verbose;",
     "\tif (a.verbose && !a.verbose)\n\t\to.progress = progress_verbose;", CLI),
    ("cli: schedule --quiet ignored", "src/main.c",
     "bool tty = !a.quiet && !a.verbose && isatty(fileno(stderr));",
     "bool tty = !a.verbose && isatty(fileno(stderr));", CLI),
    ("cli: schedule --trace ignored", "src/main.c",
     "write_views(&jobs[i], a.out, a.trace, a.memmap, &e)",
     "write_views(&jobs[i], a.out, false, a.memmap, &e)", CLI),
    ("cli: schedule --memmap ignored", "src/main.c",
     "write_views(&jobs[i], a.out, a.trace, a.memmap, &e)",
     "write_views(&jobs[i], a.out, a.trace, false, &e)", CLI),
    ("cli: schedule without graphs plans one fewer", "src/main.c",
     "\t\tpaths = (const char **)bundled;\n\t}\n\tjob *jobs = calloc((size_t)np, sizeof *jobs);",
     "\t\tpaths = (const char **)bundled;\n\t\tnp -= np > 1;\n\t}\n"
     "\tjob *jobs = calloc((size_t)np, sizeof *jobs);", CLI),
    ("cli: bench --csv ignored", "src/main.c",
     "if (rc == 0 && (a.json || a.csv)) {", "if (rc == 0 && a.json) {", CLI),
    ("cli: bench --json ignored", "src/main.c",
     "if (rc == 0 && (a.json || a.csv)) {", "if (rc == 0 && a.csv) {", CLI),
    ("cli: bench --quiet ignored", "src/main.c",
     "bool tty = !a.quiet && isatty(fileno(stderr));",
     "bool tty = isatty(fileno(stderr));", CLI),
    ("cli: bench 'vs best' leaves free-first out", "src/main.c",
     "if (s != DANSCHED_DAN && v < best)",
     "if (s != DANSCHED_DAN && s != DANSCHED_FREE_FIRST && v < best)", CLI),
    ("cli: bench 'vs orig' against free-first", "src/main.c",
     "metric(&row[DANSCHED_ORIGINAL], m),", "metric(&row[DANSCHED_FREE_FIRST], m),",
     CLI),
    ("cli: bench --scale --kind ignored", "src/main.c",
     "dansched_generate(NULL, a->kind, nodes, 1,",
     "dansched_generate(NULL, \"matmul\", nodes, 1,", CLI),
    ("cli: bench --scale --nodes ignored", "src/main.c",
     "int64_t top = a->nodes > 0 ? a->nodes : 1000000;",
     "int64_t top = a->nodes > 0 ? 20000 : 1000000;", CLI),
    ("cli: gen --kind ignored", "src/main.c",
     "dansched_generate(NULL, a.kind, a.nodes,",
     "dansched_generate(NULL, \"matmul\", a.nodes,", CLI),
    ("cli: gen --nodes ignored", "src/main.c",
     "dansched_generate(NULL, a.kind, a.nodes,",
     "dansched_generate(NULL, a.kind, 1000,", CLI),
    ("cli: gen --seed ignored", "src/main.c",
     "a.nodes, (uint64_t)a.seed,", "a.nodes, (uint64_t)1,", CLI),
    ("cli: gen --cap ignored", "src/main.c",
     "(uint64_t)a.seed,\n\t\t\t\t    &a.caps, &g, &e)))",
     "(uint64_t)a.seed,\n\t\t\t\t    NULL, &g, &e)))", CLI),
    ("cli: convert --cap ignored", "src/main.c",
     "if ((rc = dansched_graph_load(NULL, a.pos[0], &a.caps, &g, &e)))",
     "if ((rc = dansched_graph_load(NULL, a.pos[0], NULL, &g, &e)))", CLI),
    ("cli: trace/memmap -o ignored", "src/main.c",
     "rc = memmap ? dansched_write_memmap(g, p, a.out, &e)\n\t\t    : dansched_write_trace(g, p, a.out, &e);",
     "rc = memmap ? dansched_write_memmap(g, p, \"/tmp/ds_mut.svg\", &e)\n\t\t    : dansched_write_trace(g, p, \"/tmp/ds_mut.json\", &e);",
     CLI),
    ("cli: --help prints the main usage", "src/main.c",
     "\tif (rc == 0 && a->help) {\n\t\tfputs(usage, stdout);",
     "\tif (rc == 0 && a->help) {\n\t\tfputs(usage_main, stdout);", CLI),
]


def run(cmd, cwd, timeout=None, env=None):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                           timeout=timeout, env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def copy_tree(dest):
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        src = os.path.join(ROOT, f.decode())
        dst = os.path.join(dest, f.decode())
        if not os.path.isfile(src):
            continue  # deleted in the working tree
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def build(tree):
    return run(["cmake", "--build", "build", "-j2"], tree)


def main(argv):
    full = "--full" in argv
    keep = "--keep" in argv
    timeout = 900
    if "--timeout" in argv:
        timeout = int(argv[argv.index("--timeout") + 1])
    picks = [a for a in argv if a not in ("--full", "--keep", "--timeout")
             and not a.isdigit()]
    chosen = [m for m in MUTATIONS
              if not picks or any(p in m[0] for p in picks)]
    top = tempfile.mkdtemp(prefix="ds_mutate_")
    tree = os.path.join(top, "tree")
    os.symlink(os.path.join(os.path.dirname(ROOT), "shared"),
               os.path.join(top, "shared"))
    copy_tree(tree)
    env = dict(os.environ)
    if not full:
        env["DS_CROSSCHECK_QUICK"] = "1"
    env["DS_REQUIRE_REFEREE"] = "1"
    print("copy in %s; building" % tree, flush=True)
    rc, out = run(["cmake", "-S", ".", "-B", "build",
                   "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], tree)
    rc2, out2 = build(tree) if rc == 0 else (rc, out)
    if rc2 != 0:
        print(out2[-3000:])
        sys.exit("the unmutated tree does not build")
    caught, survived, broken = [], [], []
    for name, path, text, repl, tests in chosen:
        t0 = time.time()
        full_path = os.path.join(tree, path)
        orig = open(full_path).read()
        if orig.count(text) != 1:
            broken.append(name)
            print("NOT APPLIED  %-60s (text found %d times in %s)"
                  % (name, orig.count(text), path), flush=True)
            continue
        open(full_path, "w").write(orig.replace(text, repl))
        try:
            rc, out = build(tree)
            if rc != 0:
                broken.append(name)
                print("NO BUILD     %-60s %s" % (name, out[-400:]), flush=True)
                continue
            by = None
            for t in tests:
                rc, out = run(["ctest", "--test-dir", "build", "-R",
                               "^%s$" % t, "--timeout", str(timeout)],
                              tree, timeout=timeout + 60, env=env)
                if rc != 0:
                    by = t + (" (timeout)" if rc == "timeout" else "")
                    break
            secs = time.time() - t0
            if by:
                caught.append(name)
                print("caught       %-60s by %s (%.0f s)" % (name, by, secs),
                      flush=True)
            else:
                survived.append(name)
                print("SURVIVED     %-60s ran %s (%.0f s)"
                      % (name, ", ".join(tests), secs), flush=True)
        finally:
            open(full_path, "w").write(orig)
            # the restored file must be newer than the mutated build
            os.utime(full_path, None)
    n = len(caught) + len(survived)
    print("\nscore: %d of %d mutations caught; %d survived; %d not applied "
          "or not built" % (len(caught), n, len(survived), len(broken)))
    for s in survived:
        print("  survivor: " + s)
    if keep:
        print("tree kept in " + tree)
    else:
        shutil.rmtree(top, ignore_errors=True)
    return 1 if survived or broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
