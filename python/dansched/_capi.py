"""The C API of libdansched (include/dansched.h) as ctypes declarations.

Internal: the public names are in the dansched package.  This module finds
the shared library, declares every function it uses with its argument and
result types, and mirrors the public structs field for field.
"""

import ctypes
import os

#: Status codes of dansched.h.
OK, INVALID_PLAN, BAD_INPUT, NO_MEMORY = 0, 1, 2, 3
#: Memories of dansched.h, in index order (DANSCHED_NMEM of them).
MEMORIES = ("L1", "UB", "L0A", "L0B", "L0C")
NMEM = len(MEMORIES)

# The soname of the library (VERSION/SOVERSION in CMakeLists.txt), then the
# development link name.
_NAMES = ("libdansched.so.0", "libdansched.so")


class Err(ctypes.Structure):
    """dansched_error."""
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class Caps(ctypes.Structure):
    """dansched_caps."""
    _fields_ = [("cap", ctypes.c_int64 * NMEM)]


class Figures(ctypes.Structure):
    """dansched_figures."""
    _fields_ = [("nodes", ctypes.c_int64),
                ("peak_vstay", ctypes.c_int64),
                ("extra_ddr", ctypes.c_int64),
                ("spills", ctypes.c_int64),
                ("makespan", ctypes.c_int64),
                ("lb_critical_path", ctypes.c_int64),
                ("lb_pipe_load", ctypes.c_int64),
                ("peak_mem", ctypes.c_int64 * NMEM)]


PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p,
                            ctypes.c_double, ctypes.POINTER(Figures))


class Options(ctypes.Structure):
    """dansched_options."""
    _fields_ = [("scheduler", ctypes.c_int),
                ("stage", ctypes.c_int),
                ("effort", ctypes.c_int64),
                ("traffic_budget_pct", ctypes.c_double),
                ("peak_budget_pct", ctypes.c_double),
                ("progress", PROGRESS),
                ("progress_ud", ctypes.c_void_p)]


class Place(ctypes.Structure):
    """dansched_place: a buffer and an offset."""
    _fields_ = [("bufid", ctypes.c_int64), ("offset", ctypes.c_int64)]


_p = ctypes.c_void_p
_i = ctypes.c_int
_i32 = ctypes.c_int32
_i64 = ctypes.c_int64
_s = ctypes.c_char_p
_err = ctypes.POINTER(Err)
_caps = ctypes.POINTER(Caps)
_fig = ctypes.POINTER(Figures)
_pp = ctypes.POINTER(ctypes.c_void_p)

# name: (result type, argument types)
_SIGNATURES = {
    "dansched_version": (_s, []),
    "dansched_caps_default": (None, [_caps]),
    "dansched_caps_parse": (_i, [_caps, _s, _err]),
    "dansched_memory_name": (_s, [_i]),
    "dansched_builder_new": (_p, [_p, _s]),
    "dansched_builder_add_buffer": (_i, [_p, _i64, _i, _i64, _i64, _s,
                                         _err]),
    "dansched_builder_add_op": (_i, [_p, _i64, _s, _s, _i64,
                                     ctypes.POINTER(_i64), _i32, _err]),
    "dansched_builder_add_edge": (_i, [_p, _i64, _i64, _err]),
    "dansched_builder_finish": (_i, [_p, _caps, _pp, _err]),
    "dansched_builder_destroy": (None, [_p]),
    "dansched_graph_load": (_i, [_p, _s, _caps, _pp, _err]),
    "dansched_graph_parse": (_i, [_p, _s, _s, ctypes.c_size_t, _caps, _pp,
                                  _err]),
    "dansched_graph_save": (_i, [_p, _s, _err]),
    "dansched_generate": (_i, [_p, _s, _i64, ctypes.c_uint64, _caps, _pp,
                               _err]),
    "dansched_graph_destroy": (None, [_p]),
    "dansched_graph_nodes": (_i32, [_p]),
    "dansched_graph_buffers": (_i32, [_p]),
    "dansched_graph_buffer_id": (_i64, [_p, _i32]),
    "dansched_case_name": (_i, [_s, ctypes.c_char_p, ctypes.c_size_t]),
    "dansched_scheduler_name": (_s, [_i]),
    "dansched_scheduler_from_name": (_i, [_s]),
    "dansched_stage_name": (_s, [_i]),
    "dansched_stage_from_name": (_i, [_s]),
    "dansched_options_default": (None, [ctypes.POINTER(Options)]),
    "dansched_schedule": (_i, [_p, ctypes.POINTER(Options), _pp, _fig,
                               _err]),
    "dansched_tradeoff_budget": (ctypes.c_double, [_i]),
    "dansched_schedule_tradeoff": (_i, [_p, ctypes.POINTER(Options),
                                        ctypes.POINTER(ctypes.c_void_p),
                                        ctypes.POINTER(Figures), _err]),
    "dansched_phase_bound": (_i, [_p, _p, ctypes.POINTER(_i64), _err]),
    "dansched_any_bound": (_i, [_p, _p, ctypes.POINTER(_i64),
                                ctypes.POINTER(_i64),
                                ctypes.POINTER(ctypes.c_int), _err]),
    "dansched_plan_read": (_i, [_p, _s, _s, _s, _pp, _err]),
    "dansched_plan_make": (_i, [_p, ctypes.POINTER(_i64), _i64,
                                ctypes.POINTER(Place), _i64,
                                ctypes.POINTER(Place), _i64, _pp, _err]),
    "dansched_evaluate": (_i, [_p, _p, _i, _fig, _err]),
    "dansched_plan_write": (_i, [_p, _p, _s, _s, _err]),
    "dansched_write_trace": (_i, [_p, _p, _s, _err]),
    "dansched_write_memmap": (_i, [_p, _p, _s, _err]),
    "dansched_plan_destroy": (None, [_p]),
    "dansched_plan_length": (_i32, [_p]),
    "dansched_plan_order": (ctypes.POINTER(_i32), [_p]),
    "dansched_plan_has_offsets": (_i, [_p]),
    "dansched_plan_offset": (_i64, [_p, _p, _i64]),
    "dansched_plan_spill_count": (_i32, [_p]),
    "dansched_plan_spill": (_i, [_p, _p, _i32, ctypes.POINTER(_i64),
                                 ctypes.POINTER(_i64)]),
}


def _candidates():
    """Where the library may be, most specific first: $DANSCHED_LIB, next
    to the package, the library folder of the install prefix (recorded at
    install time in _install.py), a build/ folder of the source tree, and
    the dynamic loader's own search path."""
    env = os.environ.get("DANSCHED_LIB")
    if env:
        return [env]  # the caller said where: look nowhere else
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [here]
    try:
        from . import _install  # written by cmake --install
        dirs.append(os.path.normpath(os.path.join(here, _install.LIBDIR)))
    except ImportError:
        pass
    dirs.append(os.path.normpath(os.path.join(here, "..", "..", "build")))
    found = [os.path.join(d, n) for d in dirs for n in _NAMES
             if os.path.exists(os.path.join(d, n))]
    return found + list(_NAMES)


def _declare(lib):
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def load_library():
    """The declared library; OSError naming every place tried."""
    tried = []
    for path in _candidates():
        try:
            return _declare(ctypes.CDLL(path)), path
        except (OSError, AttributeError) as exc:
            tried.append("%s (%s)" % (path, exc))
    raise OSError("dansched: libdansched not found; set DANSCHED_LIB to "
                  "its path. Tried: " + "; ".join(tried))
