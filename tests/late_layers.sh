#!/bin/sh
# The figures of the README's paragraph on Conv_Case0's late layers:
# scripts/late_layers.c's least spans with 25 spills, one chain at a time
# (accumulators free to move, and kept at one address), its plan's layout,
# and the full plan scripts/late_layers_plan.py builds from it after the
# first layers of dansched's plan before its tail was planned again
# (tests/data: 405,466 cycles; dansched's own tail planning, ds_replan.c,
# now gives 398,410), replayed by `dansched eval`; outside the quick pass
# (DS_TEST_QUICK, the sanitizer build) also the wider model's spans with
# 25 and 26 spills within the default peak budget (up to three chains at
# once, accumulators spilled: about two minutes; the span at 26 is the one
# the README's bound on the first layers' finish rests on).
# usage: late_layers.sh LATE_LAYERS DANSCHED SOURCE_DIR
set -eu
tool=$1 dansched=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "late_layers: $*" >&2; exit 1; }
expect() { grep -qx "$2" "$1" || fail "expected '$2' in $1: $(cat "$1")"; }

"$tool" 25 216000 --start 2 --one-chain --trace > "$tmp/trace.txt"
expect "$tmp/trace.txt" "spills 25 span 205168"
expect "$tmp/trace.txt" "a layout with accumulators on adjacent units: exists"
"$tool" 25 216000 --start 2 --reserve > "$tmp/reserve.txt"
expect "$tmp/reserve.txt" "spills 25 span 211728"

if [ -z "${DS_TEST_QUICK:-}" ]; then
	"$tool" 26 205169 --start 2 --peak 9 --inflight 3 > "$tmp/peak9.txt"
	expect "$tmp/peak9.txt" "spills 25 span 205168"
	expect "$tmp/peak9.txt" "spills 26 span 200110"
fi

graph="$src/data/Conv_Case0.json"
mkdir "$tmp/out"
for f in schedule memory spill; do
	cp "$src/tests/data/Conv_Case0_405466_$f.txt" "$tmp/out/Conv_Case0_$f.txt"
done
python3 "$src/scripts/late_layers_plan.py" "$tmp/out" "$tmp/trace.txt" \
	"$tmp/built" > /dev/null
b="$tmp/built/Conv_Case0"
"$dansched" eval "$graph" "${b}_schedule.txt" "${b}_memory.txt" \
	"${b}_spill.txt" > "$tmp/eval.txt"
grep -q "^valid=1 .* extra_ddr=43008 spills=31 makespan=398474 " \
	"$tmp/eval.txt" || fail "the built plan: $(cat "$tmp/eval.txt")"
