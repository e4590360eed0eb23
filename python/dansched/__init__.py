"""dansched: plan NPU operator graphs from Python.

dansched plans the execution of one NPU operator graph (a DAG of pipe
operations and ALLOC/FREE buffer nodes) on one core of a Davinci-style NPU:
an order with a low peak of live memory, an offset for every buffer in the
scratchpads (L1, UB, L0A, L0B, L0C), spills to DDR where buffers do not fit,
and an order in which the pipes overlap.  This package is the C library
libdansched (include/dansched.h) seen from Python, through ctypes: the
same code as the `dansched` command, the same plans, byte for byte.

Quick start
-----------

    import dansched
    g = dansched.load("data/FlashAttention_Case0.json")    # or .csv
    plan = g.schedule()                      # MPAS -> DLR -> CPE
    plan.figures["makespan"]                 # peak_vstay, extra_ddr, ...
    plan.order, plan.offsets, plan.spills    # plain lists and dicts
    plan.write("out/")                       # the three result files
    plan.trace("t.json"); plan.memmap("m.svg")

    for name in dansched.SCHEDULERS:         # the baselines too
        print(name, g.schedule(scheduler=name).figures["extra_ddr"])

Graphs come from a file (load), from the JSON's dict (Graph.from_dict),
from lists of nodes and edges (Graph.build) or from the generator
(generate).  A plan comes from Graph.schedule, from caller-given arrays
(Graph.make_plan, or evaluate to replay them at once) or from result files
(Graph.read_plan); Graph.tradeoff gives dan's plans at the traffic
budgets of `dansched tradeoff` (TRADEOFF_BUDGETS) from one run.

Figures
-------

A figures dict has the keys of `dansched eval --json`: nodes, peak_vstay
(max live L1+UB bytes), extra_ddr (bytes moved by spills), spills
(SPILL_OUT/SPILL_IN pairs), makespan (cycles of the replay),
lb_critical_path, lb_pipe_load, lb_phase and lb_any (lower bounds on the
makespan; lb_any_exact False when the graph was too large for the exact
figures), ratio_any (makespan over the largest bound) and peak_L1 ...
peak_L0C (peak occupied bytes of each memory).

Errors
------

Every failure raises dansched.Error carrying the library's one-line
message (naming the file or array and the offending item):
BadInputError (a malformed graph, file or argument; also a ValueError),
InvalidPlanError (a plan that breaks a rule of SPEC.md) and
OutOfMemoryError (also a MemoryError).

Memory
------

Each Graph and Plan owns one C object, freed by close(), by leaving a
`with` block, or when Python collects it.  A plan keeps its graph alive;
closing a graph closes its plans.  A closed object raises BadInputError
when used.  One Graph and its plans must not be used from two threads at
once; distinct graphs may.

Finding the library
-------------------

$DANSCHED_LIB (the path of libdansched.so) if set; else next to the
package; else the library folder of the prefix the package was installed
into by `cmake --install`; else build/ beside the python/ folder of a
source tree; else the dynamic loader's search path.
"""

import json
import math
import numbers
import os
import weakref

from . import _capi
from ._capi import ctypes

__all__ = [
    "Error", "BadInputError", "InvalidPlanError", "OutOfMemoryError",
    "Graph", "Plan", "load", "generate", "evaluate", "default_capacities",
    "SCHEDULERS", "STAGES", "MEMORIES", "EFFORT_MAX", "LIBRARY",
    "__version__",
]

#: The path of the libdansched loaded.
_lib, LIBRARY = _capi.load_library()
#: The version of the linked library, "MAJOR.MINOR.PATCH".
__version__ = _lib.dansched_version().decode()


def _names(fn, first):
    out = []
    i = first
    while fn(i) is not None:
        out.append(fn(i).decode())
        i += 1
    return tuple(out)


#: The schedulers, by name: the baselines original, free-first, lpmf,
#: cp-list, vpux, and dan (MPAS -> DLR -> CPE, the default).
SCHEDULERS = _names(_lib.dansched_scheduler_name, 0)
#: The stages of the dan scheduler: mpas, dlr, cpe (the default).
STAGES = _names(_lib.dansched_stage_name, 1)
#: The memories, by name, in the library's index order.
MEMORIES = _names(_lib.dansched_memory_name, 0)
#: The traffic budgets (%) of Graph.tradeoff, rising: 0, 5, 25, 100, 400.
def _budgets():
    out, i = [], 0
    while _lib.dansched_tradeoff_budget(i) >= 0:
        out.append(_lib.dansched_tradeoff_budget(i))
        i += 1
    return tuple(out)


TRADEOFF_BUDGETS = _budgets()
#: The largest effort Graph.schedule takes (DANSCHED_EFFORT_MAX in
#: dansched.h; a test holds the two equal).
EFFORT_MAX = 1000

_FIGURE_KEYS = ("nodes", "peak_vstay", "extra_ddr", "spills", "makespan",
                "lb_critical_path", "lb_pipe_load")


# ---- errors ----

class Error(Exception):
    """A failure reported by libdansched.

    str(error) and error.message are the library's one-line message;
    error.status is its status code (1 invalid plan, 2 bad input, 3 out of
    memory), the exit code the command line would give.
    """

    status = 0

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class InvalidPlanError(Error):
    """A plan that breaks a rule of SPEC.md (permutation, order, residency,
    capacity, overlap); the message names the rule, node and buffer."""

    status = _capi.INVALID_PLAN


class BadInputError(Error, ValueError):
    """A malformed graph, file or argument; the message names the file (or
    the graph's name) and the offending item."""

    status = _capi.BAD_INPUT


class OutOfMemoryError(Error, MemoryError):
    """The library's allocator said no."""

    status = _capi.NO_MEMORY


_ERRORS = {c.status: c for c in (InvalidPlanError, BadInputError,
                                 OutOfMemoryError)}


def _raise(status, message):
    raise _ERRORS.get(status, Error)(message)


def _check(rc, err):
    if rc != _capi.OK:
        _raise(rc, err.message.decode("utf-8", "replace"))


def _path(p):
    return os.fsencode(p)


def _int(value, what, lo=-(1 << 63), hi=(1 << 63) - 1):
    """value as an int in [lo, hi], or BadInputError naming it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise BadInputError("%s: %r is not an integer" % (what, value))
    if not lo <= value <= hi:
        raise BadInputError("%s: %d is out of range" % (what, value))
    return int(value)


def _number(value, what):
    """value as a finite float >= 0, or BadInputError naming it."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:
        raise BadInputError("%s: %r is not a number >= 0" % (what, value))
    return float(value)


# ---- capacities ----

def default_capacities():
    """The default capacity of each memory in bytes, a dict by name
    (L1 4096, UB 1024, L0A 256, L0B 256, L0C 512)."""
    caps = _capi.Caps()
    _lib.dansched_caps_default(ctypes.byref(caps))
    return dict(zip(MEMORIES, caps.cap))


def _caps(capacities):
    """A dansched_caps from a dict {memory name: bytes} over the defaults,
    checked by the library."""
    caps = _capi.Caps()
    _lib.dansched_caps_default(ctypes.byref(caps))
    if not capacities:
        return caps
    items = []
    for name, value in capacities.items():
        if not isinstance(name, str):
            raise BadInputError("capacities: %r is not a memory name"
                                % (name,))
        items.append("%s=%d" % (name, _int(value, "capacities[%r]" % name)))
    err = _capi.Err()
    _check(_lib.dansched_caps_parse(ctypes.byref(caps),
                                    ",".join(items).encode(),
                                    ctypes.byref(err)), err)
    return caps


def _caps_dict(caps):
    return dict(zip(MEMORIES, caps.cap))


# ---- graphs ----

def _case_name(path):
    buf = ctypes.create_string_buffer(1024)
    if _lib.dansched_case_name(_path(path), buf, len(buf)) != _capi.OK:
        raise BadInputError("%s: name too long" % (path,))
    return buf.value.decode("utf-8", "replace")


def _make_graph(fn, name, caps, remake):
    """Calls fn(out, err) that makes a C graph; the Graph that owns it."""
    out = ctypes.c_void_p()
    err = _capi.Err()
    _check(fn(ctypes.byref(out), ctypes.byref(err)), err)
    return Graph(_lib, out.value, name, _caps_dict(caps), remake)


def load(path, capacities=None):
    """Loads a graph file: JSON as in SPEC.md, or CSV when path ends in
    .csv (path is then the nodes table NAME_nodes.csv, with
    NAME_edges.csv beside it).

    capacities: {memory name: bytes} over the defaults, e.g.
    {"L1": 8192}.  The graph's name is the case name ("Matmul_Case0").
    Raises BadInputError with the library's message for a malformed file.
    """
    caps = _caps(capacities)

    def fn(out, err):
        return _lib.dansched_graph_load(None, _path(path), ctypes.byref(caps),
                                        out, err)

    return _make_graph(fn, _case_name(path), caps,
                       lambda c: load(path, c))


def generate(kind, nodes, seed=1, capacities=None):
    """A synthetic graph of about `nodes` nodes (`dansched gen`): kind is
    "matmul", "attention", "conv" or "random"; the same graph for the same
    seed."""
    caps = _caps(capacities)
    n = _int(nodes, "nodes")
    s = _int(seed, "seed", 0, (1 << 64) - 1)
    if not isinstance(kind, str):
        raise BadInputError("kind: %r is not a graph kind" % (kind,))

    def fn(out, err):
        return _lib.dansched_generate(None, kind.encode(), n, s,
                                      ctypes.byref(caps), out, err)

    return _make_graph(fn, "%s_%d" % (kind, n), caps,
                       lambda c: generate(kind, n, s, c))


# The fields of a node: ALLOC/FREE, then operations (the JSON's order).
_BUFFER_KEYS = ("Id", "Op", "BufId", "Size", "Type")
_OP_KEYS = ("Id", "Op", "Pipe", "Cycles", "Bufs")


def _node_fields(node, where):
    """A node dict or tuple as a dict with the JSON's keys."""
    if isinstance(node, dict):
        return node
    if not isinstance(node, (tuple, list)) or len(node) != 5:
        raise BadInputError("%s: expected a dict or a 5-tuple, got %r"
                            % (where, node))
    keys = _BUFFER_KEYS if node[1] in ("ALLOC", "FREE") else _OP_KEYS
    return dict(zip(keys, node))


def _field(node, key, where):
    if key not in node:
        raise BadInputError('%s: missing "%s"' % (where, key))
    return node[key]


def _string(value, what):
    if not isinstance(value, str):
        raise BadInputError("%s: %r is not a string" % (what, value))
    return value.encode()


def _add_node(b, node, where, err):
    """One node into builder b: an ALLOC/FREE or an operation."""
    node = _node_fields(node, where)
    nid = _int(_field(node, "Id", where), where + ': "Id"')
    op = _string(_field(node, "Op", where), where + ': "Op"')
    if op in (b"ALLOC", b"FREE"):
        return _lib.dansched_builder_add_buffer(
            b, nid, op == b"FREE",
            _int(_field(node, "BufId", where), where + ': "BufId"'),
            _int(_field(node, "Size", where), where + ': "Size"'),
            _string(_field(node, "Type", where), where + ': "Type"'), err)
    bufs = _field(node, "Bufs", where)
    if not isinstance(bufs, (list, tuple)):
        raise BadInputError('%s: "Bufs" is not a list' % where)
    arr = (ctypes.c_int64 * max(len(bufs), 1))(
        *[_int(x, where + ': "Bufs"') for x in bufs])
    return _lib.dansched_builder_add_op(
        b, nid, op, _string(_field(node, "Pipe", where), where + ': "Pipe"'),
        _int(_field(node, "Cycles", where), where + ': "Cycles"'),
        arr, len(bufs), err)


def _add_edge(b, edge, where, err):
    if not isinstance(edge, (list, tuple)) or len(edge) != 2:
        raise BadInputError("%s: expected a pair (src, dst), got %r"
                            % (where, edge))
    return _lib.dansched_builder_add_edge(b, _int(edge[0], where),
                                          _int(edge[1], where), err)


def _build(nodes, edges, name, caps):
    """The C graph of nodes and edges through the builder; its handle."""
    b = _lib.dansched_builder_new(None, name.encode())
    if not b:
        raise OutOfMemoryError("%s: out of memory" % name)
    err = _capi.Err()
    try:
        for i, node in enumerate(nodes):
            _check(_add_node(b, node, "%s: node at index %d" % (name, i),
                             ctypes.byref(err)), err)
        for i, edge in enumerate(edges):
            _check(_add_edge(b, edge, "%s: edge at index %d" % (name, i),
                             ctypes.byref(err)), err)
        out = ctypes.c_void_p()
        _check(_lib.dansched_builder_finish(b, ctypes.byref(caps),
                                            ctypes.byref(out),
                                            ctypes.byref(err)), err)
        return out.value
    finally:
        _lib.dansched_builder_destroy(b)


class _Owned:
    """What Graph and Plan share: a C object in self._h, freed by close()
    (idempotent), at the end of a with block, or when Python collects the
    owner."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None) is not None:
            self.close()

    @property
    def closed(self):
        """True once the C object is freed (by close(), or for a plan by
        its graph's close())."""
        return self._h is None


class Graph(_Owned):
    """One operator graph, owned by libdansched.

    Make one with load(), generate(), Graph.from_dict() or Graph.build();
    plan it with schedule().  Read-only attributes: name, nodes, buffers,
    buffer_ids, capacities.  Use it as a context manager (or call close())
    to free it at a known point; otherwise Python frees it when it is
    collected.  Closing a graph closes its plans.
    """

    def __init__(self, lib, handle, name, capacities, remake):
        """Internal: use load, generate, from_dict or build."""
        self._lib = lib
        self._h = handle
        self._name = name
        self._capacities = capacities
        self._remake = remake
        self._plans = weakref.WeakSet()

    @classmethod
    def from_dict(cls, data, name="graph", capacities=None):
        """The graph of a dict shaped like the JSON file (SPEC.md):
        {"Nodes": [{"Id": 0, "Op": "ALLOC", "BufId": 0, "Size": 256,
        "Type": "L1"}, ...], "Edges": [[0, 3], ...]}, e.g.
        json.load(f).  It is checked exactly as a file is, and the
        messages name it by `name`."""
        try:
            text = json.dumps(data, allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            raise BadInputError("%s: not a JSON value: %s" % (name, exc))
        caps = _caps(capacities)

        def fn(out, err):
            return _lib.dansched_graph_parse(None, name.encode(), text,
                                             len(text), ctypes.byref(caps),
                                             out, err)

        return _make_graph(fn, name, caps,
                           lambda c: cls.from_dict(data, name, c))

    @classmethod
    def build(cls, nodes, edges, name="graph", capacities=None):
        """A graph from a list of nodes and a list of edges.

        A node is a dict with the JSON's keys or a 5-tuple in their order:
        (Id, "ALLOC" or "FREE", BufId, Size, Type) for a buffer node,
        (Id, Op, Pipe, Cycles, [BufId, ...]) for an operation.  An edge is
        a pair (src, dst): dst may start only after src has finished.
        The graph is validated by the library (Ids exactly 0..N-1, no
        cycle, one ALLOC and one FREE per buffer, ...)."""
        caps = _caps(capacities)
        nodes, edges = list(nodes), list(edges)  # a snapshot, for remakes
        handle = _build(nodes, edges, name, caps)
        return cls(_lib, handle, name, _caps_dict(caps),
                   lambda c: cls.build(nodes, edges, name, c))

    # -- lifetime --

    def close(self):
        """Frees the C graph and every plan made for it; idempotent."""
        if self._h is None:
            return
        for plan in list(self._plans):
            plan.close()
        h, self._h = self._h, None
        self._lib.dansched_graph_destroy(h)


    def _handle(self):
        if self._h is None:
            raise BadInputError("%s: the graph is closed" % self._name)
        return self._h

    # -- attributes --

    @property
    def name(self):
        """The graph's name: the case name of its file, or the one given."""
        return self._name

    @property
    def nodes(self):
        """The number of nodes."""
        return self._lib.dansched_graph_nodes(self._handle())

    @property
    def buffers(self):
        """The number of buffers."""
        return self._lib.dansched_graph_buffers(self._handle())

    @property
    def buffer_ids(self):
        """The BufIds, increasing (the order of a memory file)."""
        h = self._handle()
        return [self._lib.dansched_graph_buffer_id(h, i)
                for i in range(self._lib.dansched_graph_buffers(h))]

    @property
    def capacities(self):
        """The capacity of each memory in bytes, a dict by name."""
        return dict(self._capacities)

    def __repr__(self):
        if self._h is None:
            return "<dansched.Graph %s (closed)>" % self._name
        return "<dansched.Graph %s: %d nodes, %d buffers>" % (
            self._name, self.nodes, self.buffers)

    def save(self, path):
        """Writes the graph as JSON, or CSV when path ends in .csv;
        atomically."""
        err = _capi.Err()
        _check(self._lib.dansched_graph_save(self._handle(), _path(path),
                                             ctypes.byref(err)), err)

    # -- plans --

    def _plan(self, handle, figures=None):
        plan = Plan(self, handle, figures)
        self._plans.add(plan)
        return plan

    def schedule(self, stage="cpe", scheduler="dan", effort=0,
                 traffic_budget=5.0, peak_budget=5.0, capacities=None):
        """Plans the graph; returns a Plan the evaluator has accepted.

        scheduler: one of SCHEDULERS ("dan", the default, or a baseline).
        stage: the last stage dan runs, one of STAGES; "mpas" gives an
        order without offsets (one live buffer per L0 memory).
        effort: every stage searches effort times its default budget
            (0 or 1: the default; at most EFFORT_MAX).
        traffic_budget: % more extra DDR traffic than DLR's plan the final
            plan may have, spent where it shortens the makespan (a
            placement with aged victims, retiming) (5); on graphs of up
            to 20,000 nodes CPE's plan at budget 0 is kept where it is
            shorter and within the budget, and above 5 the
            plan at the next lower of 5, 25, 100 and 400 where it is
            shorter.
        peak_budget: % more peak_vstay than the DLR plan the plan may
            have, where that shortens it (5); above 5 the plans at 5,
            25 and 100 below it are made too, one kept where it is
            shorter or as long at a lower peak.  Exceptions: a
            baseline's plan where only it meets the baselines' own
            least makespan or traffic, and the plan of a graph's
            separate parts, each part within its own DLR plan's.
        A stage, effort or budget that the run would not use is refused
        (BadInputError), as the CLI refuses it: with a baseline scheduler
        anything but their defaults (its plan is its whole run), with
        stage "mpas" or "dlr" budgets other than 5 (they are CPE's).
        capacities: {memory: bytes} to plan for other capacities than the
        graph's: the graph is made again with them, and the plan belongs to
        that graph (plan.graph).
        The same graph and options give the same plan as `dansched
        schedule`.  Raises BadInputError for a graph that cannot be placed
        at all (a node needing more of a memory than it holds).
        """
        self._handle()
        if capacities is not None:
            merged = dict(self._capacities)
            merged.update(capacities)
            if merged != self._capacities:
                g = self._remake(merged)
                return g.schedule(stage, scheduler, effort, traffic_budget,
                                  peak_budget)
        o = _capi.Options()
        self._lib.dansched_options_default(ctypes.byref(o))
        o.scheduler = _choice(self._lib.dansched_scheduler_from_name,
                              scheduler, "scheduler", SCHEDULERS)
        o.stage = _choice(self._lib.dansched_stage_from_name, stage,
                          "stage", STAGES)
        o.effort = _int(effort, "effort", 0, EFFORT_MAX)
        o.traffic_budget_pct = _number(traffic_budget, "traffic_budget")
        o.peak_budget_pct = _number(peak_budget, "peak_budget")
        out = ctypes.c_void_p()
        fig = _capi.Figures()
        err = _capi.Err()
        _check(self._lib.dansched_schedule(self._h, ctypes.byref(o),
                                           ctypes.byref(out),
                                           ctypes.byref(fig),
                                           ctypes.byref(err)), err)
        return self._plan(out.value, fig)

    def tradeoff(self, effort=0, peak_budget=5.0, capacities=None):
        """dan's plans at each of TRADEOFF_BUDGETS, a list of Plans: each
        the plan schedule(traffic_budget=b, effort=effort,
        peak_budget=peak_budget, capacities=capacities) gives, made in
        one run that shares the budgets' work (MPAS and DLR once; a
        budget's floors take the lower budgets' plans), as `dansched
        tradeoff` makes them.
        """
        self._handle()
        if capacities is not None:
            merged = dict(self._capacities)
            merged.update(capacities)
            if merged != self._capacities:
                return self._remake(merged).tradeoff(effort, peak_budget)
        o = _capi.Options()
        self._lib.dansched_options_default(ctypes.byref(o))
        o.effort = _int(effort, "effort", 0, EFFORT_MAX)
        o.peak_budget_pct = _number(peak_budget, "peak_budget")
        n = len(TRADEOFF_BUDGETS)
        out = (ctypes.c_void_p * n)()
        figs = (_capi.Figures * n)()
        err = _capi.Err()
        _check(self._lib.dansched_schedule_tradeoff(self._h, ctypes.byref(o),
                                                    out, figs,
                                                    ctypes.byref(err)), err)
        return [self._plan(out[i], figs[i]) for i in range(n)]

    def make_plan(self, order, offsets=None, spills=()):
        """A plan from plain values, not yet checked against the rules
        (plan.figures or plan.evaluate() replays it).

        order: node Ids (graph nodes 0..N-1, then spill nodes: SPILL_OUT
        of spill k is N+2k, its SPILL_IN N+2k+1).  offsets: {BufId:
        offset} or (BufId, offset) pairs, or None for an order without
        offsets.  spills: (BufId, offset after SPILL_IN) pairs, in order.
        Items that cannot belong to a plan of this graph (unknown buffer,
        negative offset, ...) raise InvalidPlanError naming the array and
        index."""
        h = self._handle()
        ids = [_int(v, "order[%d]" % i) for i, v in enumerate(order)]
        arr = (ctypes.c_int64 * max(len(ids), 1))(*ids)
        offs = None
        noffs = 0
        if offsets is not None:
            pairs = offsets.items() if isinstance(offsets, dict) else offsets
            offs = _places(pairs, "offsets")
            noffs = len(offs) - 1
        sp = _places(spills, "spills")
        out = ctypes.c_void_p()
        err = _capi.Err()
        _check(self._lib.dansched_plan_make(h, arr, len(ids), offs, noffs,
                                            sp, len(sp) - 1,
                                            ctypes.byref(out),
                                            ctypes.byref(err)), err)
        return self._plan(out.value)

    def read_plan(self, schedule, memory=None, spill=None):
        """A plan from the benchmark's result files (CASE_schedule.txt,
        and optionally _memory.txt and _spill.txt), not yet checked against
        the rules."""
        h = self._handle()
        out = ctypes.c_void_p()
        err = _capi.Err()
        _check(self._lib.dansched_plan_read(
            h, _path(schedule), None if memory is None else _path(memory),
            None if spill is None else _path(spill), ctypes.byref(out),
            ctypes.byref(err)), err)
        return self._plan(out.value)


def _choice(from_name, value, what, names):
    k = from_name(value.encode()) if isinstance(value, str) else -1
    if k < 0:
        raise BadInputError("unknown %s %r (%s)"
                            % (what, value, ", ".join(names)))
    return k


def _places(pairs, what):
    """(BufId, offset) pairs as a dansched_place array with one spare
    element at the end (so that an empty list is still an array)."""
    items = []
    for i, pair in enumerate(pairs):
        where = "%s[%d]" % (what, i)
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise BadInputError("%s: expected a pair (BufId, offset), got %r"
                                % (where, pair))
        items.append((_int(pair[0], where), _int(pair[1], where)))
    arr = (_capi.Place * (len(items) + 1))()
    for i, (b, o) in enumerate(items):
        arr[i].bufid = b
        arr[i].offset = o
    return arr


# ---- plans ----

class Plan(_Owned):
    """A plan of a graph: an order, and usually offsets and spills.

    Attributes: graph, order, offsets, spills, has_offsets, figures.
    Write it with write() (the benchmark's result files), trace() and
    memmap().  A plan keeps its graph alive; close() (or a `with` block)
    frees it at a known point, else Python frees it when it is collected.
    """

    def __init__(self, graph, handle, figures=None):
        """Internal: use Graph.schedule, Graph.make_plan or
        Graph.read_plan."""
        self._lib = graph._lib
        self._graph = graph
        self._h = handle
        self._figures = None
        if figures is not None:
            self._figures = _figures_dict(figures)

    def close(self):
        """Frees the C plan; idempotent."""
        if self._h is None:
            return
        h, self._h = self._h, None
        self._lib.dansched_plan_destroy(h)


    def _handles(self):
        if self._h is None:
            raise BadInputError("%s: the plan is closed" % self._graph.name)
        return self._graph._handle(), self._h

    def __repr__(self):
        state = "closed" if self._h is None else "%d nodes" % len(self.order)
        return "<dansched.Plan of %s: %s>" % (self._graph.name, state)

    @property
    def graph(self):
        """The Graph this plan was made for."""
        return self._graph

    @property
    def order(self):
        """The node Ids in order, a list: graph nodes 0..N-1 and spill
        nodes (SPILL_OUT of spill k is N+2k, its SPILL_IN N+2k+1); the
        lines of CASE_schedule.txt."""
        _, p = self._handles()
        n = self._lib.dansched_plan_length(p)
        return self._lib.dansched_plan_order(p)[:n] if n else []

    @property
    def has_offsets(self):
        """True when the plan places buffers (offsets and spills)."""
        _, p = self._handles()
        return bool(self._lib.dansched_plan_has_offsets(p))

    @property
    def offsets(self):
        """{BufId: offset at its ALLOC} in increasing BufId order (the
        lines of CASE_memory.txt), or None for an order without offsets
        (stage "mpas")."""
        g, p = self._handles()
        if not self._lib.dansched_plan_has_offsets(p):
            return None
        return {b: self._lib.dansched_plan_offset(g, p, b)
                for b in self._graph.buffer_ids}

    @property
    def spills(self):
        """[(BufId, offset after SPILL_IN), ...], spill k at index k (the
        lines of CASE_spill.txt)."""
        g, p = self._handles()
        out = []
        b, off = ctypes.c_int64(), ctypes.c_int64()
        for k in range(self._lib.dansched_plan_spill_count(p)):
            self._lib.dansched_plan_spill(g, p, k, ctypes.byref(b),
                                          ctypes.byref(off))
            out.append((b.value, off.value))
        return out

    @property
    def figures(self):
        """The plan's figures, a dict (see the package's help): those of
        the schedule, or of the replay for a plan made from values
        (InvalidPlanError if it breaks a rule).  A fresh dict each time."""
        if self._figures is None:
            self._figures = self._evaluate(False)
        fig = dict(self._figures)
        if "lb_phase" not in fig:
            fig = self._with_phase(fig)
            self._figures = fig
        return dict(fig)

    def _with_phase(self, fig):
        """fig with the bounds that hold for every plan inserted after
        lb_pipe_load: lb_phase, lb_any, lb_any_exact (False when the graph
        is too large for the exact figures) and ratio_any, the makespan
        over max(lb_critical_path, lb_pipe_load, lb_any) (the CLI's keys,
        in its order)."""
        g, p = self._handles()
        lb_any = ctypes.c_int64()
        lb_phase = ctypes.c_int64()
        exact = ctypes.c_int()
        err = _capi.Err()
        _check(self._lib.dansched_any_bound(g, p, ctypes.byref(lb_any),
                                            ctypes.byref(lb_phase),
                                            ctypes.byref(exact),
                                            ctypes.byref(err)), err)
        lb = max(fig["lb_critical_path"], fig["lb_pipe_load"], lb_any.value)
        out = {}
        for k, v in fig.items():
            out[k] = v
            if k == "lb_pipe_load":
                out["lb_phase"] = lb_phase.value
                out["lb_any"] = lb_any.value
                out["lb_any_exact"] = bool(exact.value)
                out["ratio_any"] = fig["makespan"] / lb if lb else 0.0
        return out

    def _evaluate(self, q1):
        g, p = self._handles()
        fig = _capi.Figures()
        err = _capi.Err()
        _check(self._lib.dansched_evaluate(g, p, 1 if q1 else 0,
                                           ctypes.byref(fig),
                                           ctypes.byref(err)), err)
        return _figures_dict(fig)

    def evaluate(self, q1=False):
        """Replays the plan on the machine model, checks every rule (q1:
        also at most one live buffer in each L0 memory) and returns its
        figures; InvalidPlanError with the rule, node and buffer if one is
        broken."""
        return self._with_phase(self._evaluate(q1))

    def write(self, directory, case=None):
        """Writes DIRECTORY/CASE_schedule.txt, and _memory.txt and
        _spill.txt when the plan has offsets, all or nothing; case defaults
        to the graph's name.  Creates the directory.  Returns the paths."""
        g, p = self._handles()
        case = self._graph.name if case is None else case
        os.makedirs(directory, exist_ok=True)
        err = _capi.Err()
        _check(self._lib.dansched_plan_write(g, p, _path(directory),
                                             case.encode(),
                                             ctypes.byref(err)), err)
        kinds = ("schedule", "memory", "spill")
        if not self._lib.dansched_plan_has_offsets(p):
            kinds = kinds[:1]
        return [os.path.join(directory, "%s_%s.txt" % (case, k))
                for k in kinds]

    def trace(self, path):
        """Writes the replay as a Chrome Trace Event file (open it in
        ui.perfetto.dev): one track per pipe, a counter per memory."""
        g, p = self._handles()
        err = _capi.Err()
        _check(self._lib.dansched_write_trace(g, p, _path(path),
                                              ctypes.byref(err)), err)

    def memmap(self, path):
        """Writes the memory layout over time as an SVG (needs offsets)."""
        g, p = self._handles()
        err = _capi.Err()
        _check(self._lib.dansched_write_memmap(g, p, _path(path),
                                               ctypes.byref(err)), err)


def _figures_dict(fig):
    out = {k: getattr(fig, k) for k in _FIGURE_KEYS}
    for m, name in enumerate(MEMORIES):
        out["peak_" + name] = fig.peak_mem[m]
    return out


def evaluate(graph, order, offsets=None, spills=(), q1=False):
    """Replays a caller-given plan of graph and returns its figures (as
    `dansched eval`): order, offsets and spills as in Graph.make_plan.
    Raises InvalidPlanError naming the rule, node and buffer when the plan
    breaks one."""
    with graph.make_plan(order, offsets, spills) as plan:
        return plan.evaluate(q1)
