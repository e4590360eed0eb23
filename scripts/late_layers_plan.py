#!/usr/bin/env python3
"""late_layers_plan.py: a full Conv_Case0 plan whose last three layers follow
a plan of scripts/late_layers.c (issue 14; an analysis tool, not part of
dansched): evidence that the model's plans can be run, checked by the
evaluator and the referee.

    cc -O2 -o late_layers scripts/late_layers.c
    ./late_layers 25 216000 --start 2 --one-chain --trace > late25.txt
    build/dansched schedule data/Conv_Case0.json -o today
    scripts/late_layers_plan.py today late25.txt built
    build/dansched eval data/Conv_Case0.json built/Conv_Case0_schedule.txt \
        built/Conv_Case0_memory.txt built/Conv_Case0_spill.txt

The plan: the input plan's lines before the first late accumulator's ALLOC
(less the weight loads of late CONVs: ALLOC, COPY_IN, MOVE, FREE of their
144-byte L1 buffer and ALLOC, FREE of their 72-byte L0B one), then every
other node in the order a list scheduler gives them, each at the time the
model's plan has for it: CONVs, spill nodes and COPY_OUTs at their own,
a CONV's weight loads during the CONV before it, FREEs as soon as they
may, the other nodes left after the cut in the input plan's order.  The
input plan's spill lines whose SPILL_OUT stands before the cut are kept
(their SPILL_INs after it move to the model's), the model's evictions are
new lines.  Addresses: the model's occupancies (768-byte units, an
accumulator two adjacent ones) placed on five 768-byte positions from 0
by backtracking, the first-layer inputs resident at the cut kept where
they are; weights' L1 buffers at 3,840, their L0B ones round robin at 0,
72, 144.

Measured 2026-12-04: from `schedule`'s plan (405,466 cycles, 43,008 bytes,
31 spills) and the model's plan with 25 spills from the same start (two
inputs resident): 398,474 cycles, 43,008 bytes, 31 spills, valid under
`dansched eval` and the referee; its late CONVs start exactly when the
model has them, 263 cycles after the input plan's first late CONV (six
small CONVs, 177 cycles in all, that the cut left behind, and the loads
they wait for).
"""
import collections
import heapq
import json
import os
import sys

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "Conv_Case0.json")
BUF = [671, 673, 675, 677, 711, 713, 715, 717, 751, 753, 755, 757,
       791, 793, 795, 797]
UNIT = 768
XFER = 2 * UNIT + 150  # a spill transfer's cycles (SPEC.md)
START = -10 ** 9  # resident before the cut
END = 10 ** 9


def acc(layer, chain):
    return [712, 752, 792][layer] + 2 * chain


def conv(layer, chain, k):
    return [1523, 1611, 1699][layer] + 12 * chain + 3 * k


class Graph:
    def __init__(self, path):
        g = json.load(open(path))
        self.nodes = {v["Id"]: v for v in g["Nodes"]}
        self.n = len(self.nodes)
        self.pred = collections.defaultdict(set)
        for a, b in g["Edges"]:
            self.pred[b].add(a)
        self.alloc, self.free, self.type = {}, {}, {}
        self.users = collections.defaultdict(list)
        for v in self.nodes.values():
            if v["Op"] == "ALLOC":
                self.alloc[v["BufId"]] = v["Id"]
                self.type[v["BufId"]] = v["Type"]
            elif v["Op"] == "FREE":
                self.free[v["BufId"]] = v["Id"]
            else:
                for b in v["Bufs"]:
                    self.users[b].append(v["Id"])


def read_plan(d):
    sched = [int(x) for x in open(f"{d}/Conv_Case0_schedule.txt").read().split()]
    mem = {}
    for line in open(f"{d}/Conv_Case0_memory.txt"):
        if line.strip():
            b, o = line.split(":")
            mem[int(b)] = int(o)
    spills = []
    for line in open(f"{d}/Conv_Case0_spill.txt"):
        if line.strip():
            b, o = line.split(":")
            spills.append([int(b), int(o)])
    return sched, mem, spills


def read_model(path):
    """The model's events: ('C', start, fin, (layer, chain, k)) or
    (kind, start, fin, BufId); and the start's resident inputs (a mask)."""
    events, mask = [], None
    for line in open(path):
        w = line.split()
        if w and w[0] == "start:":
            mask = int(w[3], 16)
        elif "accumulator" in w:
            sys.exit(f"{path}: an accumulator spilled; this script builds "
                     "the plans of late_layers --one-chain")
        elif len(w) >= 9 and w[2] == "CONV":
            events.append(("C", int(w[0]), int(w[1]),
                           (int(w[4]), int(w[6]), int(w[8]))))
        elif len(w) == 5 and w[2] in ("SPILL_IN", "SPILL_OUT", "COPY_OUT"):
            events.append((w[2], int(w[0]), int(w[1]), BUF[int(w[4])]))
    if mask is None or sum(e[0] == "C" for e in events) != 48:
        sys.exit(f"{path}: not a late_layers --trace plan")
    return events, mask


def weights(g, seq):
    """Per late CONV its weight's L1 and L0B buffers; the nodes loading them."""
    wl1, wl0, nodes = {}, {}, set()
    for v in seq:
        for b in g.nodes[v]["Bufs"]:
            if g.type[b] != "L0B":
                continue
            wl0[v] = b
            nodes |= {g.alloc[b], g.free[b]}
            for u in g.users[b]:
                if g.nodes[u]["Op"] != "MOVE":
                    continue
                for b2 in g.nodes[u]["Bufs"]:
                    if g.type[b2] == "L1":
                        wl1[v] = b2
                        nodes |= {g.alloc[b2], g.free[b2]} | set(g.users[b2])
    return wl1, wl0, nodes


def occupancies(events, mask):
    """[start, end, units, buffer] per occupancy of the model's plan (an
    accumulator as ('acc', layer, chain))."""
    occ, open_, uses = [], {}, collections.Counter()
    for i, b in enumerate(BUF[:4]):
        if mask >> i & 1:
            open_[b] = START
    for kind, s, f, x in events:
        if kind == "C":
            layer, chain, k = x
            b = BUF[4 * layer + k]
            uses[b] += 1
            if k == 0:
                open_[("acc", layer, chain)] = s
            if uses[b] == 4 and b in open_:
                occ.append([open_.pop(b), f, 1, b])
            if k == 3:
                occ.append([open_.pop(("acc", layer, chain)), f, 2,
                            ("acc", layer, chain)])
                open_[BUF[4 * (layer + 1) + chain]] = s
        elif kind == "SPILL_IN":
            open_[x] = s
        else:
            occ.append([open_.pop(x), f, 1, x])
    occ += [[s, END, 1, b] for b, s in open_.items()]
    occ.sort(key=lambda o: (o[0], o[1]))
    return occ


def layout(occ, fixed):
    """A position (0..4) per occupancy, an accumulator's two adjacent."""
    pos = [None] * len(occ)

    def free(i, p):
        s, e, w, _ = occ[i]
        return all(not (occ[j][0] < e and s < occ[j][1] and
                        pos[j] < p + w and p < pos[j] + occ[j][2])
                   for j in range(i))

    def place(i):
        if i == len(occ):
            return True
        s, _, w, b = occ[i]
        for p in ([fixed[b]] if s == START else range(6 - w)):
            if free(i, p):
                pos[i] = p
                if place(i + 1):
                    return True
        return False

    if not place(0):
        sys.exit("no layout of the model's plan")
    return pos


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: late_layers_plan.py PLAN_DIR MODEL_TRACE OUT_DIR")
    g = Graph(DATA)
    n = g.n
    sched, mem, spills = read_plan(sys.argv[1])
    events, mask = read_model(sys.argv[2])
    convs = [e for e in events if e[0] == "C"]
    seq = [conv(*e[3]) for e in convs]
    wl1, wl0, wnodes = weights(g, seq)

    # the cut: the first late accumulator's ALLOC in the input plan
    cut = min(sched.index(g.alloc[acc(0, c)]) for c in range(4))
    prefix = [v for v in sched[:cut] if v not in wnodes]
    inpre = set(prefix)
    nkeep = max((k + 1 for k in range(len(spills)) if n + 2 * k in inpre),
                default=0)
    lines = [list(x) for x in spills[:nkeep]]
    lines += [[e[3], None] for e in events if e[0] == "SPILL_OUT"]

    occ = occupancies(events, mask)
    fixed = {b: mem[b] // UNIT for b in BUF[:4]}
    pos = layout(occ, fixed)
    at_pos = {(o[3], o[0]): UNIT * p for o, p in zip(occ, pos)}

    # the time each node of the rest is wanted at
    want = {v: -1.0 for v in g.nodes if v not in inpre}
    for k in range(len(lines)):
        for v in (n + 2 * k, n + 2 * k + 1):
            if v not in inpre:
                want[v] = None
    for i, (_, s, _, (layer, chain, k)) in enumerate(convs):
        want[seq[i]] = s
        if k == 0:
            want[g.alloc[acc(layer, chain)]] = s - 0.5
        if k == 3:
            want[g.alloc[BUF[4 * (layer + 1) + chain]]] = s - 0.5
        early = convs[i - 1][1] + 1 if i else -5
        b1, b0 = wl1[seq[i]], wl0[seq[i]]
        for x in [g.alloc[b1], g.alloc[b0]] + g.users[b1]:
            want[x] = early + 0.1
    k_out = nkeep
    pending = collections.defaultdict(list)
    for k in range(len(lines)):
        if n + 2 * k + 1 not in inpre:
            pending[lines[k][0]].append(k)
    for kind, s, _, b in events:
        if kind == "SPILL_OUT":
            want[n + 2 * k_out] = s
            k_out += 1
        elif kind == "SPILL_IN":
            k = pending[b].pop(0)
            want[n + 2 * k + 1] = s
            lines[k][1] = at_pos[(b, s)]
        elif kind == "COPY_OUT":
            for u in g.users[b]:
                if g.nodes[u]["Op"] == "COPY_OUT":
                    want[u] = s
    if any(w is None for w in want.values()):
        sys.exit("a spill node the model's plan does not time")

    # what each node waits for: edges, buffers, spills, addresses
    before = collections.defaultdict(set)
    for v in want:
        if v >= n:
            continue
        before[v] |= g.pred[v]
        op = g.nodes[v]["Op"]
        if op == "FREE":
            before[v] |= set(g.users[g.nodes[v]["BufId"]])
        elif op != "ALLOC":
            before[v] |= {g.alloc[b] for b in g.nodes[v]["Bufs"]}
    rank = {v: i - len(prefix) - 10 ** 9 for i, v in enumerate(prefix)}
    when = lambda v: rank.get(v, want.get(v))
    spill_lines = collections.defaultdict(list)
    for k, (b, _) in enumerate(lines):
        spill_lines[b].append(k)
    for b, ks in spill_lines.items():
        for k in ks:
            so, si = n + 2 * k, n + 2 * k + 1
            before[si].add(so)
            before[g.free[b]].add(si)
            if so in want:
                before[so] |= {g.alloc[b]} | {n + 2 * j + 1 for j in ks if j < k}
            for u in g.users[b]:
                if when(u) < when(so) and so in want:
                    before[so].add(u)
                elif when(u) > when(si) and u in want:
                    before[u].add(si)

    def start_node(b, s):
        for k in spill_lines.get(b, []):
            if want.get(n + 2 * k + 1) == s:
                return n + 2 * k + 1
        return g.alloc[b]

    def end_node(b, e):
        for k in spill_lines.get(b, []):
            if n + 2 * k in want and want[n + 2 * k] + XFER == e:
                return n + 2 * k
        return g.free[b]

    ends = []
    for o, p in zip(occ, pos):
        b = acc(*o[3][1:]) if isinstance(o[3], tuple) else o[3]
        ends.append((p, o[2], None if o[0] == START else start_node(b, o[0]),
                     None if o[1] == END else end_node(b, o[1]), o[0], o[1]))
    for a in ends:
        for c in ends:
            if a is not c and a[3] is not None and c[2] is not None and \
               a[5] <= c[4] and a[0] < c[0] + c[1] and c[0] < a[0] + a[1]:
                before[c[2]].add(a[3])
    for i, v in enumerate(seq):
        if i >= 1:
            before[g.alloc[wl1[v]]].add(g.free[wl1[seq[i - 1]]])
        if i >= 3:
            before[g.alloc[wl0[v]]].add(g.free[wl0[seq[i - 3]]])
    late = set(wnodes) | set(seq)
    for layer in range(3):
        for chain in range(4):
            late |= {g.alloc[acc(layer, chain)], g.free[acc(layer, chain)]}
    for b in BUF:
        late |= {g.alloc[b], g.free[b]} | set(g.users[b])
    rest = [v for v in sched[cut:] if v < n and v not in late and v in want]
    for a, b in zip(rest, rest[1:]):
        before[b].add(a)

    # list scheduling by wanted time
    indeg = {v: 0 for v in want}
    after = collections.defaultdict(list)
    for v in want:
        for u in before[v]:
            if u in want:
                indeg[v] += 1
                after[u].append(v)
    heap = [(want[v], v) for v in want if indeg[v] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, v = heapq.heappop(heap)
        order.append(v)
        for w in after[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(heap, (want[w], w))
    if len(order) != len(want):
        sys.exit(f"deadlock after {len(order)} of {len(want)} nodes")

    for o, p in zip(occ, pos):
        b = acc(*o[3][1:]) if isinstance(o[3], tuple) else o[3]
        if o[0] == START or start_node(b, o[0]) == g.alloc[b]:
            mem[b] = UNIT * p
    for i, v in enumerate(seq):
        mem[wl1[v]], mem[wl0[v]] = 3840, 72 * (i % 3)
    out = sys.argv[3]
    os.makedirs(out, exist_ok=True)
    with open(f"{out}/Conv_Case0_schedule.txt", "w") as f:
        f.write("".join(f"{v}\n" for v in prefix + order))
    with open(f"{out}/Conv_Case0_memory.txt", "w") as f:
        f.write("".join(f"{b}:{mem[b]}\n" for b in sorted(mem)))
    with open(f"{out}/Conv_Case0_spill.txt", "w") as f:
        f.write("".join(f"{b}:{o}\n" for b, o in lines))
    print(f"{len(prefix)} lines kept, {len(order)} placed, {len(lines)} spills")


if __name__ == "__main__":
    main()
