#!/usr/bin/env bash
# cli.sh: the command line's exit codes, messages and files.
# usage: cli.sh path/to/dansched SOURCE_DIR
set -uo pipefail

B=$1
SRC=$2
DATA=$SRC/data
T=$(mktemp -d /tmp/ds_cli_XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# expect STATUS CMD...: runs CMD, stdout to $T/out, stderr to $T/err
expect() {
	local want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	local got=$?
	if [ "$got" -ne "$want" ]; then
		fail "'$*' exited $got, expected $want; stderr: $(head -c 300 "$T/err")"
		return 1
	fi
	return 0
}

# the smallest bundled graph, found rather than named
G=$(ls -S "$DATA"/*.json | tail -n 1)
N=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["Nodes"]))' "$G")
[ "$N" -gt 0 ] || fail "cannot count the nodes of $G"

# ---- help, version, usage errors
expect 0 "$B" --help && { grep -q "eval" "$T/out" || fail "--help does not list eval"; }
expect 0 "$B" --version && { grep -qx "dansched [0-9.]*" "$T/out" || fail "--version printed '$(cat "$T/out")'"; }
expect 0 "$B" eval --help
expect 2 "$B"
expect 2 "$B" frobnicate && { grep -q "frobnicate" "$T/err" || fail "unknown command not named"; }
expect 2 "$B" eval "$G"
expect 2 "$B" eval "$G" "$T/none.txt" --bogus
# each command takes only its own options (getopt_long, one table each)
for bad in "eval $G $T/none.txt --scale" "eval $G $T/none.txt -o x" \
	"gen --nodes 10 -o $T/g.json --stage dlr" "convert $G $T/c.json --json" \
	"bench --traffic-budget 5" "schedule -o $T/x --q1"; do
	expect 2 "$B" $bad && { grep -q "unknown option" "$T/err" || fail "$bad: $(cat "$T/err")"; }
done
expect 2 "$B" schedule -o && { grep -q -- "-o needs a value" "$T/err" || fail "-o without a value: $(cat "$T/err")"; }
# --opt=value is the same as --opt value
expect 0 "$B" gen --nodes=40 --kind=random --seed=3 -o "$T/geq.json"
expect 0 "$B" gen --nodes 40 --kind random --seed 3 -o "$T/gsp.json" &&
	{ cmp -s "$T/geq.json" "$T/gsp.json" || fail "--opt=value differs from --opt value"; }

# ---- eval: the Id order is a valid schedule
seq 0 $((N - 1)) >"$T/id.txt"
expect 0 "$B" eval "$G" "$T/id.txt" && {
	grep -q "valid=1" "$T/out" || fail "eval output lacks valid=1: $(cat "$T/out")"
}
expect 0 "$B" eval "$G" "$T/id.txt" --json && {
	python3 - "$T/out" "$N" <<'PY' || fail "eval --json output: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["peak_vstay", "extra_ddr", "spills", "makespan",
        "lb_critical_path", "lb_pipe_load", "lb_phase", "lb_any"]
missing = [k for k in keys if not isinstance(d.get(k), int)]
assert not missing, missing
assert d["lb_any_exact"] is True
assert d["makespan"] >= d["lb_any"] >= max(d["lb_phase"], d["lb_pipe_load"])
lb = max(d["lb_any"], d["lb_critical_path"], d["lb_pipe_load"])
assert abs(d["ratio_any"] - d["makespan"] / lb) < 1e-9
assert d["valid"] == 1 and d["nodes"] == int(sys.argv[2])
assert d["spills"] == 0 and d["extra_ddr"] == 0
assert d["makespan"] >= max(d["lb_critical_path"], d["lb_pipe_load"]) > 0
assert d["makespan"] >= d["lb_phase"] >= d["lb_critical_path"]
PY
}

# ---- eval: broken schedules exit 1 with one line naming the rule
head -n $((N - 1)) "$T/id.txt" >"$T/short.txt"
expect 1 "$B" eval "$G" "$T/short.txt" && {
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "broken schedule: not one line on stderr"
	grep -q "schedule" "$T/err" || fail "broken schedule: rule not named: $(cat "$T/err")"
}
tac "$T/id.txt" >"$T/rev.txt"
expect 1 "$B" eval "$G" "$T/rev.txt" && {
	grep -q "order" "$T/err" || fail "reversed schedule: $(cat "$T/err")"
}
expect 1 "$B" eval "$G" "$T/rev.txt" --json && {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["valid"]==0 and "order" in d["error"]' "$T/out" ||
		fail "eval --json of a broken plan: $(cat "$T/out")"
}

# ---- eval: a malformed graph exits 2 with one line naming the file
head -c 2000 "$G" >"$T/broken.json"
expect 2 "$B" eval "$T/broken.json" "$T/id.txt" && {
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "malformed graph: $(wc -l <"$T/err") lines on stderr"
	grep -q "broken.json" "$T/err" || fail "malformed graph: file not named: $(cat "$T/err")"
}
expect 2 "$B" eval "$T/missing.json" "$T/id.txt" && {
	grep -q "missing.json" "$T/err" || fail "missing graph not named"
}
expect 2 "$B" eval "$G" "$T/missing.txt" && {
	grep -q "missing.txt" "$T/err" || fail "missing schedule not named"
}

# ---- schedule: one bad graph among good ones writes nothing
cp "$G" "$T/good.json"
expect 2 "$B" schedule "$T/good.json" "$T/broken.json" -o "$T/outdir" && {
	grep -q "broken.json" "$T/err" || fail "schedule: bad graph not named: $(cat "$T/err")"
	if [ -e "$T/outdir" ] && [ -n "$(ls -A "$T/outdir")" ]; then
		fail "schedule with a bad graph wrote $(ls "$T/outdir")"
	fi
}
expect 2 "$B" schedule "$T/good.json"
# and the good ones alone: files written, and each is a valid plan
expect 0 "$B" schedule "$T/good.json" -o "$T/outdir" && {
	s="$T/outdir/good_schedule.txt"
	if [ -f "$s" ]; then
		m=()
		[ -f "$T/outdir/good_memory.txt" ] && m=("$T/outdir/good_memory.txt")
		[ -f "$T/outdir/good_spill.txt" ] && m+=("$T/outdir/good_spill.txt")
		expect 0 "$B" eval "$T/good.json" "$s" "${m[@]}"
	else
		fail "schedule wrote $(ls "$T/outdir"), not good_schedule.txt"
	fi
}

# ---- convert: JSON -> CSV -> JSON gives the same graph, for every bundled
# graph; ds_json.c promises the bundled layout byte for byte, so cmp too
pairs=()
for g in "$DATA"/*.json; do
	c=$(basename "$g" .json)
	expect 0 "$B" convert "$g" "$T/${c}_nodes.csv" || continue
	[ -f "$T/${c}_edges.csv" ] || { fail "convert wrote no ${c}_edges.csv"; continue; }
	head -n 1 "$T/${c}_nodes.csv" | grep -q "^Id,Op,BufId,Size,Type,Pipe,Cycles,Bufs" ||
		fail "$c: nodes table header: $(head -n 1 "$T/${c}_nodes.csv")"
	expect 0 "$B" convert "$T/${c}_nodes.csv" "$T/$c.back.json" || continue
	cmp -s "$g" "$T/$c.back.json" || fail "$c: round trip is not byte for byte"
	pairs+=("$g" "$T/$c.back.json")
done
[ ${#pairs[@]} -gt 0 ] || fail "no graph converted"
python3 - "${pairs[@]}" <<'PY' || fail "convert round trip changed a graph"
import json, sys
for a_path, b_path in zip(sys.argv[1::2], sys.argv[2::2]):
    a = json.load(open(a_path))
    b = json.load(open(b_path))
    assert a["Nodes"] == b["Nodes"], f"{a_path}: Nodes differ"
    assert [list(e) for e in a["Edges"]] == [list(e) for e in b["Edges"]], \
        f"{a_path}: Edges differ"
PY
expect 2 "$B" convert "$T/broken.json" "$T/x_nodes.csv" && {
	[ ! -e "$T/x_nodes.csv" ] || fail "convert of a bad graph wrote a file"
}


# ---- the full pipeline, pictures, bench, gen
C=$(basename "$G" .json)
expect 0 "$B" schedule "$G" -o "$T/full" --trace --memmap --quiet && {
	for f in schedule.txt memory.txt spill.txt trace.json memmap.svg; do
		[ -s "$T/full/${C}_$f" ] || [ "$f" = spill.txt ] ||
			fail "schedule --trace --memmap did not write ${C}_$f"
	done
	grep -q "lower_bnd" "$T/out" || fail "schedule printed no lower bound"
	grep -q "lb_any  *ratio_any" "$T/out" || fail "schedule printed no lb_any"
}
expect 0 "$B" schedule "$G" -o "$T/full" --json -v && {
	grep -q "bound .*lb_any=[0-9]* .*(exact)" "$T/err" ||
		fail "schedule -v: no bound line: $(cat "$T/err")"
	python3 - "$T/out" <<'PY' || fail "schedule --json: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["makespan"] >= d["lb_any"] >= d["lb_phase"] > 0
assert d["lb_any_exact"] is True and d["ratio_any"] >= 1
PY
}
expect 0 "$B" eval "$G" "$T/full/${C}_schedule.txt" "$T/full/${C}_memory.txt" \
	"$T/full/${C}_spill.txt"
# ---- spill lines in the order the spills happen (issue 20): the final
# plan's are; numbered backwards (a pure relabelling), eval refuses the
# plan naming the first line out of order, as the referee does, and
# --any-spill-order accepts it with the same figures
S="$T/full/${C}"
expect 0 "$B" eval "$G" "${S}_schedule.txt" "${S}_memory.txt" "${S}_spill.txt" --json &&
	cp "$T/out" "$T/inorder.json"
[ "$(wc -l <"${S}_spill.txt")" -ge 2 ] || fail "$C's plan has under 2 spills: no order to test"
python3 - "$N" "$S" "$T/back" <<'PY' || fail "cannot renumber the spills"
import sys
n, src, dst = int(sys.argv[1]), sys.argv[2], sys.argv[3]
sched = [int(x) for x in open(src + "_schedule.txt").read().split()]
spill = open(src + "_spill.txt").read().split()
k = len(spill)
back = lambda v: v if v < n else n + 2 * (k - 1 - (v - n) // 2) + (v - n) % 2
open(dst + "_schedule.txt", "w").write("".join(f"{back(v)}\n" for v in sched))
open(dst + "_spill.txt", "w").write("".join(f"{x}\n" for x in reversed(spill)))
PY
expect 1 "$B" eval "$G" "$T/back_schedule.txt" "${S}_memory.txt" "$T/back_spill.txt" && {
	grep -q "spill line 2" "$T/err" || fail "eval does not name spill line 2: $(cat "$T/err")"
}
expect 0 "$B" eval "$G" "$T/back_schedule.txt" "${S}_memory.txt" "$T/back_spill.txt" \
	--any-spill-order --json && {
	cmp -s "$T/out" "$T/inorder.json" || fail "--any-spill-order: other figures: $(cat "$T/out")"
}
REF="$SRC/../shared/referee/npu_referee.py"
if [ -r "$REF" ]; then
	python3 "$REF" "$G" "${S}_schedule.txt" "${S}_memory.txt" "${S}_spill.txt" >/dev/null ||
		fail "the referee refuses the final plan"
	python3 "$REF" "$G" "$T/back_schedule.txt" "${S}_memory.txt" "$T/back_spill.txt" >/dev/null
	[ $? -eq 1 ] || fail "the referee accepts spills out of order: eval and it disagree"
	python3 "$REF" "$G" "$T/back_schedule.txt" "${S}_memory.txt" "$T/back_spill.txt" \
		--any-spill-order >/dev/null || fail "the referee refuses --any-spill-order"
else
	echo "note: no referee at $REF: eval not compared with it" >&2
fi

# ---- Ids not in a topological order (issue 18): the original schedule
# is the Id order repaired; bench runs every scheduler on it
cat >"$T/reversed4.json" <<'JSON'
{"Nodes": [{"Id": 0, "Op": "FREE", "BufId": 0, "Size": 64, "Type": "UB"},
  {"Id": 1, "Op": "VADD", "Pipe": "VECTOR", "Cycles": 5, "Bufs": [0]},
  {"Id": 2, "Op": "COPY_IN", "Pipe": "MTE2", "Cycles": 10, "Bufs": [0]},
  {"Id": 3, "Op": "ALLOC", "BufId": 0, "Size": 64, "Type": "UB"}],
 "Edges": [[3, 2], [2, 1], [1, 0]]}
JSON
expect 0 "$B" schedule "$T/reversed4.json" -o "$T/rev4" --scheduler original --quiet && {
	[ "$(tr '\n' ' ' <"$T/rev4/reversed4_schedule.txt")" = "3 2 1 0 " ] ||
		fail "original on reversed4: $(cat "$T/rev4/reversed4_schedule.txt")"
}
expect 0 "$B" bench "$T/reversed4.json" --csv --quiet && {
	[ "$(grep -c "^reversed4," "$T/out")" -eq 6 ] || fail "bench on reversed4: not 6 rows"
}
expect 0 "$B" schedule "$G" -o "$T/mpas" --stage mpas --quiet && {
	[ ! -e "$T/mpas/${C}_memory.txt" ] || fail "--stage mpas wrote offsets"
	expect 0 "$B" eval "$G" "$T/mpas/${C}_schedule.txt" --q1 ||
		fail "the MPAS order breaks the one-live rule"
}
expect 2 "$B" schedule "$G" -o "$T/x" --stage nope
expect 2 "$B" schedule "$G" -o "$T/x" --scheduler nope
expect 2 "$B" schedule "$G" "$G" -o "$T/dup" && {
	[ ! -e "$T/dup" ] || fail "two graphs with one case name wrote files"
}
expect 0 "$B" trace "$G" "$T/full/${C}_schedule.txt" "$T/full/${C}_memory.txt" \
	"$T/full/${C}_spill.txt" -o "$T/t.json" &&
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' \
		"$T/t.json" || fail "trace is not a trace"
expect 2 "$B" memmap "$G" "$T/full/${C}_schedule.txt" -o "$T/m.svg"
expect 0 "$B" memmap "$G" "$T/full/${C}_schedule.txt" "$T/full/${C}_memory.txt" \
	"$T/full/${C}_spill.txt" -o "$T/m.svg" &&
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' \
		"$T/m.svg" || fail "memmap is not XML"
expect 0 "$B" bench "$G" --csv --quiet && {
	[ "$(grep -c "^$C," "$T/out")" -eq 6 ] || fail "bench --csv: not 6 rows"
}
expect 0 "$B" gen --nodes 500 --kind attention --seed 3 -o "$T/gen.json" &&
	expect 0 "$B" schedule "$T/gen.json" -o "$T/gen" --quiet
expect 2 "$B" gen --nodes 500 --kind nope -o "$T/nope.json"

# ---- tradeoff: budgets, the chart, the published points
expect 0 "$B" tradeoff --help && { grep -q "published" "$T/out" || fail "tradeoff --help"; }
expect 2 "$B" tradeoff "$G"
expect 2 "$B" tradeoff -o "$T/tr"
# a published table of our own: columns in another order, an extra column,
# a row with an empty figure (skipped), a row of another case
printf 'note,makespan,source,extra_ddr,case\nx,999999,Someone & co,4096,%s\ny,,Empty,100,%s\nz,5,Other,5,Other_Case\n' \
	"$C" "$C" >"$T/pub.csv"
expect 0 "$B" tradeoff "$G" -o "$T/tr" --json --published "$T/pub.csv" --quiet --cap L1=4096 && {
	python3 - "$T/out" "$C" <<'PY' || fail "tradeoff --json: $(cat "$T/out")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1
d = json.loads(lines[0])
assert d["case"] == sys.argv[2]
assert [p["budget"] for p in d["points"]] == [0, 5, 25, 100, 400]
m = [p["makespan"] for p in d["points"]]
assert all(a >= b > 0 for a, b in zip(m, m[1:])), m
assert all(isinstance(p["extra_ddr"], int) for p in d["points"])
PY
	svg="$T/tr/${C}_tradeoff.svg"
	python3 - "$svg" <<'PY' || fail "tradeoff chart: $(head -c 300 "$svg")"
import sys, xml.etree.ElementTree as E
t = E.parse(sys.argv[1])
text = open(sys.argv[1]).read()
assert "Someone &amp; co" in text and "Other" not in text and "Empty" not in text
for name in ["original", "free-first", "lpmf", "cp-list", "vpux", "dansched", "lb_any"]:
    assert name in text, name
assert "href" not in text and "<script" not in text and "@import" not in text
PY
	if command -v xmllint >/dev/null; then
		xmllint --noout "$svg" || fail "tradeoff chart: xmllint"
	fi
}
# the table, and a missing published table: a note, not an error
expect 0 "$B" tradeoff "$G" -o "$T/tr2" --published "$T/none.csv" && {
	grep -q "note: .*none.csv" "$T/err" || fail "tradeoff: no note for a missing published table: $(cat "$T/err")"
	[ "$(grep -c "^$C " "$T/out")" -eq 5 ] || fail "tradeoff table: $(cat "$T/out")"
	[ -s "$T/tr2/${C}_tradeoff.svg" ] || fail "tradeoff wrote no chart without published points"
}
# a malformed published table: exit 2 naming the file, no chart
printf 'case,source,extra_ddr,makespan\n%s,x,many,5\n' "$C" >"$T/badpub.csv"
expect 2 "$B" tradeoff "$G" -o "$T/tr3" --published "$T/badpub.csv" && {
	grep -q "badpub.csv:2" "$T/err" || fail "tradeoff: bad published table not named: $(cat "$T/err")"
	[ ! -e "$T/tr3/${C}_tradeoff.svg" ] || fail "tradeoff wrote a chart with a bad published table"
}

if [ "$fails" -ne 0 ]; then
	echo "$fails CLI check(s) failed" >&2
	exit 1
fi
echo "all CLI checks passed"
