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
# a usage error: its line first, then the synopsis and where the help is,
# not the whole help (which would bury the line)
for bad in "schedule -o $T/x --effort 0" "schedule -o $T/x --stage foo" \
	"eval $G" "gen --nodes 10" "trace $G" "bench --bogus" \
	"schedule -o $T/x --cap L1=-3"; do
	expect 2 "$B" $bad && {
		c=${bad%% *}
		head -n 1 "$T/err" | grep -q "^dansched: " &&
			sed -n 2p "$T/err" | grep -q "^usage: dansched $c" &&
			tail -n 1 "$T/err" | grep -qx "see 'dansched $c --help'" &&
			[ "$(wc -l <"$T/err")" -le 5 ] ||
			fail "$bad: usage error printed: $(cat "$T/err")"
	}
done
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

# ==== every option does something: each check fails if its option is
# ignored (scripts/mutate.py ignores each in turn)

# figures of the one row of a `schedule` table: "peak extra spills makespan"
row_figures() {
	awk -v c="$2" '$1 == c { print $3, $4, $5, $6 }' "$1"
}

# ---- help: each command its own usage
for c in schedule eval bench trace memmap convert gen; do
	expect 0 "$B" "$c" --help && { grep -q "^usage: dansched $c" "$T/out" ||
		fail "$c --help: $(head -n 1 "$T/out")"; }
done
expect 0 "$B" schedule -h && { grep -q "^usage: dansched schedule" "$T/out" || fail "schedule -h"; }

# ---- schedule: the default run and -v
expect 0 "$B" schedule "$G" -o "$T/def" --quiet && cp "$T/out" "$T/def.txt"
DEF=$(row_figures "$T/def.txt" "$C")
[ -n "$DEF" ] || fail "schedule printed no row for $C: $(cat "$T/def.txt")"
expect 0 "$B" schedule "$G" -o "$T/verb" -v && {
	for st in mpas dlr cpe; do
		grep -q "^  $C *$st " "$T/err" || fail "-v printed no $st line: $(cat "$T/err")"
	done
	cp "$T/err" "$T/verbose.txt"
}
expect 0 "$B" schedule "$G" -o "$T/verb2" --verbose && {
	grep -q " cpe " "$T/err" || fail "--verbose printed no stage line"
}
[ ! -s "$T/def.txt" ] || ! grep -q " cpe " "$T/def.txt" || fail "stage lines without -v"
# a stage's figures as -v prints them: "peak extra spills makespan"
stage_figures() {
	sed -n "s/^  $C *$1 .*peak_vstay=\([0-9]*\) extra_ddr=\([0-9]*\) spills=\([0-9]*\) makespan=\([0-9]*\)$/\1 \2 \3 \4/p" "$T/verbose.txt"
}
[ "$(stage_figures cpe)" = "$DEF" ] ||
	fail "-v's cpe line '$(stage_figures cpe)' is not the table's '$DEF'"

# ---- --stage: each stage's plan is the one -v reports
expect 0 "$B" schedule "$G" -o "$T/dlr" --stage dlr --quiet && {
	[ "$(row_figures "$T/out" "$C")" = "$(stage_figures dlr)" ] ||
		fail "--stage dlr: '$(row_figures "$T/out" "$C")', -v's dlr: '$(stage_figures dlr)'"
	[ -f "$T/dlr/${C}_memory.txt" ] || fail "--stage dlr wrote no memory file"
}
expect 0 "$B" schedule "$G" -o "$T/cpe" --stage cpe --quiet && {
	[ "$(row_figures "$T/out" "$C")" = "$DEF" ] || fail "--stage cpe is not the default"
}
expect 0 "$B" schedule "$G" -o "$T/mp" --stage mpas --quiet && {
	[ "$(row_figures "$T/out" "$C" | cut -d' ' -f1)" = "$(stage_figures mpas | cut -d' ' -f1)" ] ||
		fail "--stage mpas: peak is not -v's mpas peak"
}
[ "$(stage_figures dlr)" != "$DEF" ] || fail "the dlr and cpe plans have the same figures: --stage untested"

# ---- --scheduler: each baseline's plan has the figures bench gives it
expect 0 "$B" bench "$G" --csv --quiet && cp "$T/out" "$T/bench.csv"
for s in original free-first lpmf cp-list vpux; do
	want=$(awk -F, -v c="$C" -v s="$s" '$1 == c && $2 == s { print $3, $4, $5, $6 }' "$T/bench.csv")
	expect 0 "$B" schedule "$G" -o "$T/s_$s" --scheduler "$s" --quiet || continue
	got=$(row_figures "$T/out" "$C")
	[ -n "$want" ] && [ "$got" = "$want" ] ||
		fail "--scheduler $s: schedule gives '$got', bench '$want'"
	[ "$got" != "$DEF" ] || fail "--scheduler $s gives dan's figures"
	expect 0 "$B" eval "$G" "$T/s_$s/${C}_schedule.txt" "$T/s_$s/${C}_memory.txt" "$T/s_$s/${C}_spill.txt"
done
expect 0 "$B" schedule "$G" -o "$T/s_dan" --scheduler dan --quiet && {
	[ "$(row_figures "$T/out" "$C")" = "$DEF" ] || fail "--scheduler dan is not the default"
}

# ---- --effort N: N times every stage's default search; 1 is the default
expect 0 "$B" schedule "$G" -o "$T/eff" --effort 1 --quiet && {
	for f in schedule memory spill; do
		cmp -s "$T/eff/${C}_$f.txt" "$T/def/${C}_$f.txt" || fail "--effort 1: another $f than the default"
	done
}
# a graph where twice the search finds a shorter plan (measured: 44,867
# cycles against 44,988; more effort never keeps a longer one, so a graph
# where it only found less traffic at more cycles no longer shows it;
# `--seed 2`, 29,578 against 29,754, until the grouped plan of its parts
# came to 28,995 at both)
expect 0 "$B" gen --kind matmul --nodes 1000 --seed 3 -o "$T/eff.json" &&
for e in 1 2; do
	expect 0 "$B" schedule "$T/eff.json" --effort $e -o "$T/eff$e" --quiet || break
	row_figures "$T/out" eff >"$T/eff$e.txt"
done
[ -s "$T/eff1.txt" ] && ! cmp -s "$T/eff1.txt" "$T/eff2.txt" || fail "--effort 2 changes nothing: $(cat "$T/eff2.txt")"
[ "$(cut -d' ' -f4 "$T/eff2.txt")" -le "$(cut -d' ' -f4 "$T/eff1.txt")" ] || fail "--effort 2 longer: $(cat "$T/eff2.txt") against $(cat "$T/eff1.txt")"
for bad in "--effort 1001" "--effort -1" "--traffic-budget 2e6" "--peak-budget inf"; do
	expect 2 "$B" schedule "$G" -o "$T/effbad" $bad && {
		grep -q -- "${bad%% *} needs a number from [01] to" "$T/err" || fail "$bad: $(cat "$T/err")"
		[ ! -e "$T/effbad" ] || fail "$bad: output written"
	}
done

# ---- --peak-budget: CPE may raise the peak by that much, and uses it;
# with 0 the peak stays within DLR's, and a budget never lengthens the plan
expect 0 "$B" schedule "$G" -o "$T/pb0" --peak-budget 0 --quiet && {
	read -r zpk _ _ zmk <<<"$(row_figures "$T/out" "$C")"
	read -r lpk _ _ _ <<<"$(stage_figures dlr)"
	[ "$zpk" -le "$lpk" ] || fail "--peak-budget 0: peak $zpk above DLR's $lpk"
}
expect 0 "$B" schedule "$G" -o "$T/pb" --peak-budget 50 --quiet && {
	read -r pk _ _ mk <<<"$(row_figures "$T/out" "$C")"
	read -r dpk _ _ dmk <<<"$DEF"
	[ "$pk" -gt "$zpk" ] || fail "--peak-budget 50: peak $pk, not above budget 0's $zpk"
	[ $((pk * 100)) -le $((lpk * 150)) ] || fail "--peak-budget 50: peak $pk over 150% of DLR's $lpk"
	[ $((dpk * 100)) -le $((lpk * 105)) ] || fail "default peak budget: peak $dpk over 105% of DLR's $lpk"
	[ "$mk" -le "$zmk" ] || fail "--peak-budget 50: makespan $mk above budget 0's $zmk"
	[ "$dmk" -le "$zmk" ] || fail "default peak budget: makespan $dmk above budget 0's $zmk"
}

# ---- --traffic-budget: with 0, CPE may not add traffic over DLR's.  On
# the second smallest graph (H): on the smallest, retiming's extra
# eviction no longer pays since the aged backbone placed at two
# tolerances (every budget gives the same plan there)
H=$(ls -S "$DATA"/*.json | tail -n 2 | head -n 1)
HC=$(basename "$H" .json)
expect 0 "$B" schedule "$H" -o "$T/hdlr" --stage dlr --quiet &&
	read -r _ hlx _ _ <<<"$(row_figures "$T/out" "$HC")"
expect 0 "$B" schedule "$H" -o "$T/tb0" --traffic-budget 0 --quiet && {
	cp "$T/out" "$T/tb0.txt"
	read -r _ x _ _ <<<"$(row_figures "$T/out" "$HC")"
	[ "$x" -le "$hlx" ] || fail "--traffic-budget 0: extra_ddr $x above DLR's $hlx"
}
# with 50, the aged placement and retiming may spend up to half DLR's
# traffic again where that shortens the makespan: on this graph they do
# (an eviction that buys time), so the plans differ, the traffic stays
# under the cap and the makespan is no longer than with 0
expect 0 "$B" schedule "$H" -o "$T/tb50" --traffic-budget 50 --quiet && {
	read -r _ x50 _ m50 <<<"$(row_figures "$T/out" "$HC")"
	read -r _ _ _ m0 <<<"$(row_figures "$T/tb0.txt" "$HC")"
	[ $((x50 * 100)) -le $((hlx * 150)) ] || fail "--traffic-budget 50: extra_ddr $x50 over 150% of DLR's $hlx"
	[ "$m50" -le "$m0" ] || fail "--traffic-budget 50: makespan $m50 above budget 0's $m0"
	if cmp -s "$T/tb0/${HC}_schedule.txt" "$T/tb50/${HC}_schedule.txt" &&
		cmp -s "$T/tb0/${HC}_memory.txt" "$T/tb50/${HC}_memory.txt"; then
		fail "--traffic-budget 0 and 50 give byte-identical plans on $HC"
	fi
}

# ---- --json: one object per graph, the table's figures
expect 0 "$B" schedule "$G" -o "$T/js" --json --quiet && {
	python3 - "$T/out" "$C" "$DEF" <<'PY' || fail "schedule --json: $(cat "$T/out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [r["case"] for r in rows] == [sys.argv[2]], rows
r = rows[0]
assert " ".join(str(r[k]) for k in ("peak_vstay", "extra_ddr", "spills", "makespan")) == sys.argv[3]
assert r["lb_phase"] > 0 and r["valid"] == 1
PY
}

# ---- --trace / --memmap: written only when asked
[ ! -e "$T/def/${C}_trace.json" ] && [ ! -e "$T/def/${C}_memmap.svg" ] ||
	fail "pictures written without --trace/--memmap"
expect 0 "$B" schedule "$G" -o "$T/tr" --trace --quiet && {
	[ -s "$T/tr/${C}_trace.json" ] && [ ! -e "$T/tr/${C}_memmap.svg" ] ||
		fail "--trace alone wrote $(ls "$T/tr")"
}
expect 0 "$B" schedule "$G" -o "$T/mm" --memmap --quiet && {
	[ -s "$T/mm/${C}_memmap.svg" ] && [ ! -e "$T/mm/${C}_trace.json" ] ||
		fail "--memmap alone wrote $(ls "$T/mm")"
}

# ---- --quiet: the progress line (on a terminal only; script(1) makes one)
if command -v script >/dev/null; then
	script -qec "'$B' schedule '$G' -o '$T/q1'" /dev/null >"$T/tty.txt" 2>&1
	grep -q "planning 1/1" "$T/tty.txt" || fail "no progress line on a terminal"
	script -qec "'$B' schedule '$G' -o '$T/q2' --quiet" /dev/null >"$T/tty.txt" 2>&1
	grep -q "planning" "$T/tty.txt" && fail "schedule --quiet printed the progress line"
	script -qec "'$B' bench '$G'" /dev/null >"$T/tty.txt" 2>&1
	grep -q "bench .*: dan" "$T/tty.txt" || fail "bench: no progress line on a terminal"
	script -qec "'$B' bench '$G' --quiet" /dev/null >"$T/tty.txt" 2>&1
	grep -q "bench .*: dan" "$T/tty.txt" && fail "bench --quiet printed the progress line"
else
	echo "SKIPPED: script(1) missing: --quiet is not checked" >&2
fi

# ---- --cap, on every command that loads or makes a graph
expect 2 "$B" schedule "$G" -o "$T/cap" --cap L0A=16 --quiet && {
	grep -q "L0A capacity 16" "$T/err" || fail "schedule --cap: $(cat "$T/err")"
	[ ! -e "$T/cap" ] || fail "schedule --cap: wrote files"
}
expect 2 "$B" schedule "$G" -o "$T/cap" --cap=L0A=16 --quiet
expect 0 "$B" schedule "$G" -o "$T/capbig" --cap L1=8192,UB=2048 --quiet && {
	[ "$(row_figures "$T/out" "$C")" != "$DEF" ] || fail "schedule --cap L1=8192,UB=2048 changes nothing"
}
expect 2 "$B" schedule "$G" -o "$T/cap" --cap L9=1
expect 2 "$B" eval "$G" "$T/id.txt" --cap L0A=16 && {
	grep -q "L0A capacity 16" "$T/err" || fail "eval --cap: $(cat "$T/err")"
}
expect 2 "$B" convert "$G" "$T/capc_nodes.csv" --cap L0A=16 && {
	[ ! -e "$T/capc_nodes.csv" ] || fail "convert --cap: wrote a file"
}
expect 2 "$B" trace "$G" "$T/id.txt" -o "$T/capt.json" --cap L0A=16
expect 2 "$B" memmap "$G" "$T/full/${C}_schedule.txt" "$T/full/${C}_memory.txt" \
	"$T/full/${C}_spill.txt" -o "$T/capm.svg" --cap L0A=16
expect 0 "$B" bench "$G" --csv --quiet --cap L1=8192,UB=2048 && {
	cmp -s "$T/out" "$T/bench.csv" && fail "bench --cap changes nothing"
	[ "$(grep -c "^$C," "$T/out")" -eq 6 ] || fail "bench --cap: not 6 rows"
}
expect 0 "$B" gen --nodes 300 --kind attention -o "$T/gcap.json" --cap L0A=16 && {
	python3 -c 'import json,sys; s=[n["Size"] for n in json.load(open(sys.argv[1]))["Nodes"] if n.get("Type")=="L0A"]; assert s and max(s)<=16, s[:5]' \
		"$T/gcap.json" || fail "gen --cap L0A=16: an L0A buffer over 16 bytes"
}

# ---- eval --q1: the Id order keeps two L0 buffers live at once
expect 1 "$B" eval "$G" "$T/id.txt" --q1 && {
	grep -q "one-live" "$T/err" || fail "eval --q1: $(cat "$T/err")"
}

# ---- trace / memmap -o, with and without the memory files
expect 0 "$B" trace "$G" "$T/id.txt" -o "$T/t_order.json" && {
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' \
		"$T/t_order.json" || fail "trace of an order is not a trace"
}
expect 2 "$B" trace "$G" "$T/id.txt"
expect 2 "$B" memmap "$G" "$T/full/${C}_schedule.txt" "$T/full/${C}_memory.txt" \
	"$T/full/${C}_spill.txt"

# ---- bench: --json and --csv the same rows; "vs best" against every
# baseline; the run's figures are each scheduler's plan's
expect 0 "$B" bench "$G" --json --quiet && {
	python3 - "$T/out" "$T/bench.csv" <<'PY' || fail "bench --json differs from --csv"
import csv, json, sys
j = json.load(open(sys.argv[1]))["results"]
c = list(csv.DictReader(open(sys.argv[2])))
keys = ["case", "scheduler", "peak_vstay", "extra_ddr", "spills", "makespan"]
assert len(j) == len(c) == 6
for a, b in zip(j, c):
    assert [str(a[k]) for k in keys] == [b[k] for k in keys], (a, b)
PY
}
expect 0 "$B" bench "$G" --quiet && {
	python3 - "$T/out" "$T/bench.csv" <<'PY' || fail "bench table"
import csv, sys
rows = {r["scheduler"]: r for r in csv.DictReader(open(sys.argv[2]))}
lines = open(sys.argv[1]).read().split("\n\n")
metrics = ["peak_vstay", "plan_peak_vstay", "extra_ddr", "spills", "makespan"]
tables = [t for t in lines if t.startswith("case ")]
assert len(tables) >= 5, lines
names = ["original", "free-first", "lpmf", "cp-list", "vpux", "dan"]
for m, t in zip(metrics, tables):
    row = t.splitlines()[1].split()
    vals = [int(x) for x in row[1:7]]
    assert vals == [int(rows[n][m]) for n in names], (m, vals)
    def red(ref, x):
        return 0.0 if ref == 0 and x == 0 else -100.0 if ref == 0 else 100.0 * (ref - x) / ref
    best = min(vals[:5])
    want = ["%.1f%%" % red(vals[0], vals[5]), "%.1f%%" % red(best, vals[5])]
    assert row[7:9] == want, (m, row[7:9], want)
PY
}

# ---- bench --scale --kind --nodes: each size is the graph gen makes
expect 0 "$B" bench --scale --nodes 2000 --kind attention && {
	cp "$T/out" "$T/scale.txt"
	expect 0 "$B" gen --nodes 2000 --kind attention --seed 1 -o "$T/sc.json" &&
		expect 0 "$B" schedule "$T/sc.json" -o "$T/sc" --quiet &&
		python3 - "$T/scale.txt" "$T/out" <<'PY' || fail "bench --scale: $(cat "$T/scale.txt")"
import sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
sched = [l.split() for l in open(sys.argv[2]).read().splitlines()[1:]]
assert len(rows) == 5 and all(r[0] == "attention" for r in rows), rows
sizes = [int(r[1]) for r in rows]
assert sizes == sorted(sizes) and 1800 <= sizes[-1] <= 2200 and sizes[0] < 200, sizes
assert rows[-1][1] == sched[0][1] and rows[-1][6] == sched[0][5], (rows[-1], sched[0])
PY
}

# schedule refuses what its run would not use: the dan pipeline's options
# with a baseline, CPE's budgets before CPE, a memory map of an order
for bad in "--scheduler lpmf --effort 2" "--scheduler vpux --stage dlr" \
	"--scheduler original --traffic-budget 5" "--scheduler cp-list --peak-budget 5" \
	"--stage mpas --traffic-budget 10" "--stage dlr --peak-budget 1" \
	"--stage mpas --memmap" "--effort 0" "--scheduler lpmf --stage mpas"; do
	expect 2 "$B" schedule "$G" -o "$T/refused" $bad &&
		{ grep -q -- "is for --\|needs a memory plan\|from 1 to" "$T/err" || fail "schedule $bad: $(cat "$T/err")"; }
	[ ! -e "$T/refused" ] || fail "schedule $bad wrote $T/refused"
done
expect 0 "$B" schedule "$G" -o "$T/base_cpe" --scheduler vpux --stage cpe --quiet
expect 0 "$B" schedule "$G" -o "$T/kept" --stage dlr --memmap --effort 2 --quiet &&
	{ [ -s "$T/kept/$(basename "$G" .json)_memmap.svg" ] || fail "--stage dlr --memmap wrote no map"; }

# bench and bench --scale refuse each other's options: none does nothing
for bad in "bench --kind conv" "bench --nodes 100" "bench --repeat 2" \
	"bench --scale $G" "bench --scale --json" "bench --scale --csv" \
	"bench --scale --quiet" "bench --scale --repeat 0" \
	"bench --scale --nodes 99"; do
	expect 2 "$B" $bad && { grep -q -- "--scale\|--repeat" "$T/err" || fail "$bad: $(cat "$T/err")"; }
	[ -s "$T/out" ] && fail "$bad: printed $(cat "$T/out")"
done
# --nodes 0 is out of range (it was taken as "not given")
expect 2 "$B" gen --nodes 0 -o "$T/g0.json" && { grep -q "from 1" "$T/err" || fail "gen --nodes 0: $(cat "$T/err")"; }
# --repeat R: every size run R times, the same plans (the same makespans)
expect 0 "$B" bench --scale --nodes 1000 --kind conv && {
	cp "$T/out" "$T/scale1.txt"
	expect 0 "$B" bench --scale --nodes 1000 --kind conv --repeat 2 &&
		python3 - "$T/scale1.txt" "$T/out" <<'PY' || fail "bench --scale --repeat: $(cat "$T/out")"
import sys
one, two = ([l.split() for l in open(p).read().splitlines()[1:]] for p in sys.argv[1:])
assert len(one) == len(two) == 5, (one, two)
assert [(r[1], r[6]) for r in one] == [(r[1], r[6]) for r in two], (one, two)
assert [r[8] for r in one] == ["1"] * 5 and [r[8] for r in two] == ["2"] * 5, (one, two)
PY
}

# ---- gen: --nodes, --kind, --seed each change the graph
gen_nodes() {
	python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["Nodes"]))' "$1"
}
expect 0 "$B" gen --nodes 500 -o "$T/g_def.json"
expect 0 "$B" gen --nodes 500 --kind matmul --seed 1 -o "$T/g_same.json" &&
	{ cmp -s "$T/g_def.json" "$T/g_same.json" || fail "gen: the defaults are not matmul, seed 1"; }
expect 0 "$B" gen --nodes 500 --seed 1 -o "$T/g_again.json" &&
	{ cmp -s "$T/g_def.json" "$T/g_again.json" || fail "gen: the same seed gave another graph"; }
expect 0 "$B" gen --nodes 500 --seed 2 -o "$T/g_s2.json" &&
	{ cmp -s "$T/g_def.json" "$T/g_s2.json" && fail "gen --seed 2 changes nothing"; }
for k in attention conv random; do
	expect 0 "$B" gen --nodes 500 --kind "$k" -o "$T/g_$k.json" && {
		cmp -s "$T/g_def.json" "$T/g_$k.json" && fail "gen --kind $k changes nothing"
		n=$(gen_nodes "$T/g_$k.json")
		[ "$n" -ge 400 ] && [ "$n" -le 600 ] || fail "gen --kind $k --nodes 500: $n nodes"
	}
done
expect 0 "$B" gen --nodes 3000 -o "$T/g_3000.json" && {
	n=$(gen_nodes "$T/g_3000.json")
	[ "$n" -ge 2700 ] && [ "$n" -le 3300 ] || fail "gen --nodes 3000: $n nodes"
}
expect 2 "$B" gen -o "$T/g_none.json"
expect 2 "$B" gen --nodes 500

# ---- schedule with no graph: every bundled graph (the order stage only,
# to keep it short)
expect 0 "$B" schedule -o "$T/all" --stage mpas --quiet && {
	want=$(cd "$DATA" && ls *.json | sed 's/\.json$//' | sort)
	got=$(awk 'NR > 1 { print $1 }' "$T/out" | sort)
	[ "$got" = "$want" ] || fail "schedule without graphs planned '$got'"
	for c in $want; do
		[ -s "$T/all/${c}_schedule.txt" ] || fail "schedule without graphs: no ${c}_schedule.txt"
	done
}

if [ "$fails" -ne 0 ]; then
	echo "$fails CLI check(s) failed" >&2
	exit 1
fi
echo "all CLI checks passed"
