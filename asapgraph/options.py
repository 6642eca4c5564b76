"""One meaning per word: the run options shared by the CLI and the Python API.

Rationale
---------
Every public entry point (``asapgraph`` subcommands on 1 or K ranks, :func:`asapgraph.pagerank`,
:func:`asapgraph.engine.pagerank`, :func:`asapgraph.programs.run` and the built-in algorithm
functions) checks its options here, once, so that a value means the same thing and is
refused with the same one-line message whatever the rank count or mode:

* ``alpha``: PageRank damping in ``[0, 1)`` (alpha = 1 has no unique fixed point and no
  error bound, so it is refused everywhere; networkx does not check it and then fails to
  converge); Katz attenuation ``> 0``, checked against a certified upper bound of the
  largest eigenvalue before the run (:func:`spectral_radius_bound`).
* ``tol``: **a bound on the L1 norm of the error of the result**, certified identically
  in every mode and on every rank count (see :func:`pagerank_change_tol`,
  :func:`engine_tol`, :func:`error_bound`); every run reports the bound it reached as
  ``error_bound``.  PageRank: ``alpha / (1 - alpha) * change`` (BSP and one process,
  Jacobi: the L1 change of the last sweep), ASAP's certified bound from its waves;
  Katz: the pending delta mass times the factor of :func:`spectral_radius_bound`;
  min/max programs: 0 at the fixed point.  Programs without such a bound (HITS, label
  propagation, user programs without ``error_factor``) keep ``tol`` as the threshold of
  their own termination test and report ``error_bound`` None.
* ``max_iter``: iterations of the algorithm as its user counts them (HITS: HITS
  iterations, two supersteps each, on one process and on K ranks alike).
* ``personalization`` / ``dangling`` files: :func:`read_vertex_values` (one parser); an id
  that is not a vertex of the graph is refused (``FILE:LINE: node X is not a vertex of
  the graph``) on one process and on K ranks.
* ``weight_col``: **1-based** everywhere (the CLI, :func:`asapgraph.load_graph`,
  :func:`asapgraph.engine.pagerank`, :func:`asapgraph.engine.load`,
  :func:`asapgraph.engine.distributed.load`); :func:`weight_col_index` gives the 0-based column
  the MPI loader parses.  PageRank refuses negative weights on any rank count
  (:func:`negative_weights_error`).
* options that cannot apply to a command are refused (exit status 2, one line), never
  ignored: :data:`RULES` is the one table that says where each option takes effect.
"""
from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass, replace

from asapgraph.errors import InputError

__all__ = [
    "DEFAULTS", "SCHEDULES", "DEFAULT_SCHEDULE", "REBALANCE_MODES", "rebalance_refusal",
    "RULES", "RUN_COMMANDS", "check_alpha", "check_katz_alpha", "check_tol",
    "check_max_iter", "check_threads", "weight_col_index", "read_vertex_values",
    "dense_vertex_values",
    "unknown_vertex_error", "zero_sum_error", "negative_weights_error",
    "pagerank_change_tol", "pagerank_change_of_bound", "pagerank_error_bound", "engine_tol",
    "error_bound",
    "check_residual", "spectral_radius_bound", "check_cli", "Given", "GivenAppend",
    "STDIN_ONCE_REFUSAL", "stdin_refusal", "prefetch_stdin_values", "plain_id",
]

# ----------------------------------------------------------------------------- defaults

#: ``command -> (tol, max_iter)``: the one default of each algorithm, for every mode and
#: rank count (``None``: the option does not exist / no cap).
DEFAULTS = {
    "pagerank": (1e-10, 1000),
    "katz": (1e-10, 1000),
    "hits": (1e-8, 100),
    "labelprop": (None, 100),
    "wcc": (None, None),
    "sssp": (None, None),
    "bfs": (None, None),
}


#: ASAP on ranks: ``max_iter`` counts BSP supersteps -- the run may do ``ASAP_WORK_FACTOR x
#: max_iter`` sweeps of the whole graph's edges, summed over the ranks (why 8: the
#: rationale of :data:`asapgraph.engine.asap.WORK_FACTOR`); ``--json``:
#: ``work_budget_edges``, ``work_factor``
ASAP_WORK_FACTOR = 8


def asap_work_words(max_iter, rounds):
    """What ``--max-iter`` capped in an ASAP run on ranks, for ``did not converge after
    ...`` (every command words it alike)."""
    return (f"{max_iter} supersteps' worth of edge work ({ASAP_WORK_FACTOR * max_iter} sweeps "
            f"of the graph's edges over the ranks, {rounds} rounds)")


#: ASAP (``jacobi`` form): what a sweep pushes -- every block above the skip threshold
#: (``sweep``) or first the blocks of largest residual per unit of work (``priority``); the
#: default is chosen from measurements (benchmarks/REPORT.md, issue 14: unemulated, 2 and
#: 4 ranks, tol 1e-6 and 1e-10, priority was faster only on rmat:20 with 2 ranks, 2.6-3.8x;
#: 15-48 % slower on cnr-2000, level on rmat:20 with 4 ranks) and stated by ``--help``;
#: :mod:`asapgraph.engine.asap` uses these two names.
SCHEDULES = ("sweep", "priority")
DEFAULT_SCHEDULE = "sweep"

#: dynamic load balancing of PageRank on ranks (:mod:`asapgraph.engine.rebalance`): none,
#: one measured re-split after a short calibration, or re-splits while the job runs
REBALANCE_MODES = ("off", "start", "dynamic")


def rebalance_refusal(rebalance, partition="range", asap_form="jacobi", mode="bsp"):
    """Why ``rebalance`` cannot apply to a distributed PageRank run (None: it can); the
    CLI (:data:`RULES`) and :func:`asapgraph.engine.pagerank` give the same reason."""
    if rebalance not in REBALANCE_MODES:
        return f"--rebalance must be one of {', '.join(REBALANCE_MODES)}, not {rebalance!r}"
    if rebalance == "off":
        return None
    if partition != "range":
        return (f"--rebalance {rebalance} needs --partition range (a migration moves the "
                "bounds of contiguous ranges; a hash partition has none)")
    if mode == "asap" and asap_form != "jacobi":
        return (f"--rebalance {rebalance} applies to --asap-form jacobi only (the push form "
                "leaks mass and solves twice: its state does not resume after a migration)")
    return None

#: The smallest ``tol`` ASAP PageRank can certify: its error bound counts the rounding of
#: every sum of ranks that add up to 1, so it cannot fall much below float64's
#: resolution of 1 (rmat-12 on 2 ranks: tol 1e-16 reached in one run, the bound stuck at
#: 1.5e-16 in another, 1.4e-17 for tol 1e-18, after 1000 sweeps of work, where BSP's
#: change reaches 0; tol 1e-15 reached in 9 of 9 runs on 2-4 ranks)
ASAP_PAGERANK_MIN_TOL = 1e-15


def asap_tol_refusal(tol, pagerank=True):
    """Why an ASAP run cannot stop at ``tol`` (None: it can); the CLI and the engine APIs
    give the same reason.  ASAP ends on a certified error bound, which is never exactly 0
    on an asynchronous run (BSP stops when a superstep changes nothing); PageRank's bound
    also has a floor near float64's resolution (:data:`ASAP_PAGERANK_MIN_TOL`)."""
    tol = float(tol)
    if tol == 0.0:
        return ("--tol 0 cannot be certified by an asynchronous run (ASAP stops on an error "
                "bound > 0); give a tol > 0 or use --mode bsp")
    if pagerank and tol < ASAP_PAGERANK_MIN_TOL:
        return (f"--tol {tol:g} is below what ASAP PageRank can certify in float64 "
                f"({ASAP_PAGERANK_MIN_TOL:g}: its error bound counts the rounding of every "
                "sum of ranks that add up to 1); use --mode bsp for a smaller tol")
    return None


def program_asap_tol_refusal(program, mode, tol):
    """The reason an ASAP run of a vertex program cannot stop at ``tol`` (None: it can):
    a sum-accumulative program (on either program engine, hooks or not) at ``tol`` 0.
    :func:`asapgraph.programs.run` checks it on one process and
    :func:`asapgraph.engine.distributed.run` on ranks, so ``asapgraph run P G --mode asap
    --tol 0`` is refused alike on every rank count (one process ran to ``--max-iter`` and
    exited 3, or stopped where a delta underflowed; ranks said ``P raised ValueError``,
    exit status 1).  Min/max programs stop at their fixed point, which needs no tol."""
    if (mode != "asap" or not getattr(program, "accumulative", False)
            or getattr(program, "combiner", None) != "sum"):
        return None
    return asap_tol_refusal(tol, pagerank=False)


# ----------------------------------------------------------------------------- scalars


def _number(value, name):
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    return v


def check_alpha(alpha):
    """PageRank damping factor: a number in ``[0, 1)``; returns it as float.

    ``alpha = 1`` is refused: the iteration is then not a contraction (no unique fixed
    point on graphs with several closed classes, no certified error bound)."""
    a = _number(alpha, "alpha")
    if not 0.0 <= a < 1.0:
        raise ValueError(f"alpha must be in [0, 1), got {alpha!r}")
    return a


def check_katz_alpha(alpha):
    """Katz attenuation: a finite number > 0 (the spectral check comes with the graph)."""
    a = _number(alpha, "alpha")
    if not 0.0 < a < math.inf:
        raise ValueError(f"alpha must be a finite number > 0, got {alpha!r}")
    return a


def check_tol(tol):
    """A finite tolerance ``>= 0``."""
    t = _number(tol, "tol")
    if not 0.0 <= t < math.inf:
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    return t


def check_max_iter(max_iter, allow_none=False):
    """An iteration cap: an integer ``>= 0`` (or None when ``allow_none``)."""
    if max_iter is None and allow_none:
        return None
    try:
        m = int(max_iter)
    except (TypeError, ValueError):
        raise ValueError(f"max_iter must be an integer >= 0, got {max_iter!r}") from None
    if m < 0 or m != max_iter:
        raise ValueError(f"max_iter must be an integer >= 0, got {max_iter!r}")
    return m


def check_threads(threads):
    """An OpenMP thread count: a positive integer, or None (the default).  ``int()``
    alone turned 1.5 into 1 and True into 1 without a word, and 'x' into "invalid
    literal for int() with base 10"."""
    if threads is None:
        return None
    try:
        t = int(threads)
    except (TypeError, ValueError):
        t = None
    if isinstance(threads, (bool, str, bytes)) or t is None or t != threads or t < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    from asapgraph.comm.launch import LOCAL_RANKS_MIN, LOCAL_RANKS_PER_CORE, max_local_ranks

    limit = max_local_ranks()  # (--threads' bound, cli.options.thread_count)
    if t > limit:  # 100000 crashed the process (SIGSEGV in libgomp)
        raise ValueError(f"threads must be at most {limit} on this host "
                         f"({LOCAL_RANKS_PER_CORE} per core, at least {LOCAL_RANKS_MIN}), "
                         f"got {threads!r}")
    return t


def weight_col_index(weight_col):
    """0-based column of the MPI loader from the public 1-based ``weight_col`` (default 3)."""
    if weight_col is None:
        return 2
    try:
        k = int(weight_col)
    except (TypeError, ValueError):
        raise ValueError(f"weight_col is 1-based, got {weight_col!r}") from None
    if k < 3 or k != weight_col or k > 2**31 - 1:
        raise ValueError(f"weight_col is 1-based and after the two id columns (3 to "
                         f"{2**31 - 1}), got {weight_col!r}")
    return k - 1


# ----------------------------------------------------------------------------- vertex values


#: standard input read as a node-value file (``--personalization -``): ``(data, error)``
#: once read; it cannot be read twice (rank 0 may look at it before the run reads it)
_STDIN_VALUES = None


def _stdin_bytes():
    """The decompressed bytes of standard input, read once (:data:`_STDIN_VALUES`); the
    error of that read is raised on every call."""
    global _STDIN_VALUES
    if _STDIN_VALUES is None:
        from asapgraph.graph.io._text import _DECOMP_ERRORS, open_binary

        data, err = None, None
        try:
            stream, kind, _ = open_binary("-")
            try:
                data = stream.read()
            except _DECOMP_ERRORS + (OSError,) as exc:
                err = InputError("<stdin>", None, f"corrupt or truncated {kind} data"
                                 if kind is not None else (getattr(exc, "strerror", None)
                                                           or str(exc)))
        except InputError as exc:
            err = exc
        except OSError as exc:
            err = InputError("<stdin>", None, exc.strerror or str(exc))
        _STDIN_VALUES = (data, err)
    data, err = _STDIN_VALUES
    if err is not None:
        raise err
    return data


def prefetch_stdin_values(args):
    """Read standard input now when ``--personalization`` or ``--dangling`` is ``-``
    (rank 0 before loading the graph: a stream mpiexec forwards must not wait); a
    problem with it is reported where the file is read, as on one process."""
    if "-" in (getattr(args, "personalization", None), getattr(args, "dangling", None)):
        try:
            _stdin_bytes()
        except InputError:
            pass


def _shown(path):
    return "<stdin>" if path == "-" else path


def read_vertex_values(path, text_ids=False):
    """Read a two-column file ``node value`` (personalization, dangling distribution).
    ``-`` is standard input (read once; its lines are named ``<stdin>:LINE``).

    Lines are ``ID VALUE`` separated by blanks, a tab or a comma; ``#`` and ``%``
    start comment lines; blank lines are skipped.  Values must be finite and >= 0,
    and an id may appear once.  ``text_ids``: the ids are vertex names (a graph read
    with ``--labels``), returned as a str array.

    Returns
    -------
    ids : int64 array
    values : float64 array
    lines : int64 array
        1-based line number of each entry (for error messages).

    Raises
    ------
    InputError
        ``FILE:LINE: message`` for the first bad line.
    """
    if path == "-":  # standard input (it was a file named '-')
        data, path = _stdin_bytes(), "<stdin>"
    else:
        data = _read_values_file(path)
    return _parse_vertex_values(data, path, text_ids)


_ASCII_BLANKS = re.compile("[ \t\r\v\f]+")
#: what ``str.split`` also splits ASCII text at (not ``bytes.split``)
_ASCII_SEPARATORS = re.compile("[\x1c-\x1f]")


def _read_values_file(path):
    from asapgraph.graph.io._text import _DECOMP_ERRORS, open_binary

    try:   # compressed like edge lists (a .gz file was 'FILE:1: not UTF-8 text')
        stream, kind, _ = open_binary(path)
        try:
            data = stream.read()
        except _DECOMP_ERRORS + (OSError,) as exc:
            if kind is None and isinstance(exc, OSError):
                raise
            raise InputError(path, None, f"corrupt or truncated {kind} data") from None
        finally:
            stream.close()
    except OSError as exc:
        raise InputError(path, None, exc.strerror or str(exc)) from None
    return data


def _ascii_split(line):
    """``line`` split at runs of ASCII blanks (space, tab, CR, VT, FF), as ``bytes.split``
    splits an edge list's line (``str.split`` also splits at a no-break space)."""
    return [t for t in _ASCII_BLANKS.split(line) if t]


def _parse_vertex_values(data, path, text_ids):
    """``(ids, values, lines)`` of a file's bytes; of several bad lines the first is
    named, as in edge lists (:func:`asapgraph.errors.first_bad_line`: '1' then '2 0,5'
    named line 2, '1 -1' then '2 x' line 2)."""
    from asapgraph.errors import first_bad_line

    return first_bad_line(_vertex_values_pass, data, path, text_ids)


def _vertex_values_pass(data, path, text_ids):
    import numpy as np

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(path, line, "not UTF-8 text") from None
    if text[:1] == "\ufeff":  # a byte order mark (editors on Windows): not part of the id
        text = text[1:]
    if "\r" in text:   # a bare CR, as in edge lists
        from asapgraph.graph.io._text import bare_cr_error

        cr = bare_cr_error(data, path)
        if cr is not None:
            raise cr
    # lines end at '\n' and fields are split at ASCII blanks, as in edge lists (str's
    # splitlines also broke lines at a form feed, U+0085, U+2028 -- later lines were
    # misnumbered -- and str.split cut a name at a no-break space, or, in ASCII text, at
    # the separators \x1c-\x1f, which edge lists keep inside a token)
    split = str.split if text.isascii() and not _ASCII_SEPARATORS.search(text) else _ascii_split
    raw = text.split("\n")
    keep = [(i + 1, ln) for i, ln in enumerate(raw)
            if split(ln) and not ln.lstrip(" \t\r\v\f").startswith(("#", "%"))]
    if not keep:
        raise InputError(path, None, "no entries found (expected lines 'node value')")
    lines = np.fromiter((i for i, _ in keep), dtype=np.int64, count=len(keep))
    if "," in text:   # '7<TAB>0,5': a decimal comma, read as value 0 (a wrong answer)
        from asapgraph.graph.io._text import DECIMAL_COMMA, NOT_CSV_SEP, decimal_comma_hint

        dec = re.compile(r"[^\S\n,]*[^\s,]+" + NOT_CSV_SEP + "(" + DECIMAL_COMMA + ")")
        for no, ln in keep:
            m = dec.match(ln) if "," in ln else None
            if m is not None:
                t = m.group(1)
                raise InputError(path, no, f"expected a number for the value, got {t!r}"
                                 f"{decimal_comma_hint(t, 'it')}")
    fields = [split(ln.replace(",", " ")) for _, ln in keep]
    short = [k for k, fl in enumerate(fields) if len(fl) < 2]
    if short:  # extra columns are ignored, as in edge lists
        k = short[0]
        raise InputError(path, keep[k][0], f"expected 2 fields 'node value', found "
                         f"{len(fields[k])}")
    id_tok = np.array([fl[0] for fl in fields], dtype=str)
    val_tok = np.array([fl[1] for fl in fields], dtype=str)
    ids = id_tok if text_ids else _plain_int_ids(path, id_tok, lines)
    vals = _strtod_values(path, val_tok, lines)
    bad = np.flatnonzero(~np.isfinite(vals) | (vals < 0))
    if bad.size:
        i = bad[0]
        raise InputError(path, int(lines[i]), f"value {float(vals[i])!r} must be finite and >= 0")
    order = np.argsort(ids, kind="stable")
    dup = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if dup.size:
        second = order[dup + 1]
        i = second[np.argmin(lines[second])]
        node = repr(str(ids[i])) if text_ids else int(ids[i])   # (as unknown_vertex_error)
        raise InputError(path, int(lines[i]), f"node {node} appears more than once")
    return ids, vals, lines


def _plain_int_ids(path, tok, lines):
    """Integer node ids by the edge reader's rules: plain ASCII digits (Python's int
    would take ``+1``, ``1_0`` = 10 and other scripts' digits)."""
    import numpy as np

    ok = np.char.isdigit(tok)
    if not _all_ascii(tok):
        ok &= np.array([t.isascii() for t in tok.tolist()])
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        t = str(tok[i])
        if t[:1] in "+-" and t[1:].isascii() and t[1:].isdigit():
            why = "has a sign (ids are plain digits)"
        else:
            why = ("is not an integer (a graph whose vertices are named by text needs "
                   "--labels)")
        raise InputError(path, int(lines[i]), f"node id {t!r} {why}")
    try:
        return tok.astype(np.int64)
    except OverflowError:
        for i, t in enumerate(tok.tolist()):
            if int(t) >= 2 ** 63:
                raise InputError(path, int(lines[i]),
                                 f"node id {t} does not fit in int64") from None
        raise


def _all_ascii(tok):
    return all(t.isascii() for t in tok.tolist())


def _strtod_values(path, tok, lines):
    """Values by the edge reader's weight rules (decimal only: hex floats, ``1_0`` and
    other scripts' digits, which Python's float or ``strtod`` take, refused)."""
    import numpy as np

    from asapgraph.graph.io.labelled import _float_or_none

    bad = np.char.find(tok, "_") >= 0
    if not _all_ascii(tok):
        bad |= np.array([not t.isascii() for t in tok.tolist()])
    vals = None
    if not bad.any():
        try:
            vals = tok.astype(np.float64)
        except ValueError:
            vals = None
    if vals is None:
        got = [None if b else _float_or_none(t.encode("ascii"))
               for t, b in zip(tok.tolist(), bad.tolist())]
        miss = [k for k, v in enumerate(got) if v is None]
        if miss:
            i = miss[0]
            raise InputError(path, int(lines[i]), f"value {str(tok[i])!r} is not a number")
        vals = np.array(got, dtype=np.float64)
    return vals


def unknown_vertex_error(path, lines, ids, i):
    """The error for entry ``i`` of a node-value file whose id is not a vertex."""
    node = ids[i]
    node = repr(str(node)) if isinstance(node, str) else int(node)
    return InputError(_shown(path), int(lines[i]), f"node {node} is not a vertex of the graph")


def labelled_vertex_values(labels, path):
    """A node-value file whose ids are vertex names (``--labels``), as ``(dense ids,
    values, lines)``: dense id ``i`` is the vertex named ``labels[i]``.  An unknown name
    is refused as :func:`unknown_vertex_error` (file and line)."""
    import numpy as np

    names, vals, lines = read_vertex_values(path, text_ids=True)
    return _positions(path, np.asarray(labels).astype(str), names, lines), vals, lines


def _positions(path, keys, wanted, lines):
    """The position in ``keys`` of every entry of ``wanted`` (a node-value file's ids or
    names, read from ``path`` at ``lines``), by one sort and a binary search; the first
    entry (in file order) that is not among ``keys`` is :func:`unknown_vertex_error`."""
    import numpy as np

    n = keys.shape[0]
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    pos = np.minimum(np.searchsorted(sk, wanted), max(n - 1, 0))
    found = (sk[pos] == wanted) if n else np.zeros(wanted.shape, bool)
    if not found.all():
        raise unknown_vertex_error(path, lines, wanted, int(np.flatnonzero(~found)[0]))
    return order[pos].astype(np.int64)


class LabelledValues:
    """A node-value file keyed by vertex names, with the names of the dense ids
    (``labels``): what :func:`asapgraph.engine.api.pagerank` reads on rank 0 when the
    graph was read with ``--labels``."""

    def __init__(self, path, labels):
        self.path, self.labels = path, labels

    def __fspath__(self):
        return self.path

    def read(self):
        return labelled_vertex_values(self.labels, self.path)


def zero_sum_error(path):
    return InputError(_shown(path), None, "the values sum to 0; at least one must be positive")


def dense_vertex_values(original_ids, path):
    """A node-value file as a dense float64 vector over ``original_ids`` (one process).

    Raises :func:`unknown_vertex_error` for the first entry (in file order) whose id is
    not a vertex, and :func:`zero_sum_error` when nothing positive is left."""
    import numpy as np

    orig = np.asarray(original_ids, dtype=np.int64)
    if isinstance(path, LabelledValues):  # names: their dense ids directly
        pos, vals, _ = path.read()
        path = path.path
    else:
        ids, vals, lines = read_vertex_values(path)
        pos = _positions(path, orig, ids, lines)
    vec = np.zeros(orig.shape[0], dtype=np.float64)
    vec[pos] = vals
    if not vec.max(initial=0.0) > 0:  # (a sum may overflow: 1e308 + 1e308)
        raise zero_sum_error(path)
    return vec


def negative_weights_error(source, path=None, weight_col=None, what=None, edge=None,
                           header=False):
    """The refusal of negative edge weights; with ``path`` (a text edge list, its 1-based
    ``weight_col``, ``header``: its header line is no edge) it names the line of the first
    one (found again on this error path:
    :func:`asapgraph.graph.io.first_negative_weight`); else, with ``edge`` (``(where,
    value)`` of a graph given in memory: :func:`asapgraph.graph.convert.negative_weight_at`),
    that edge."""
    what = what or ("PageRank needs non-negative edge weights (use it unweighted, or "
                    "transform the weights)")
    found = None
    if path is not None:
        from asapgraph.graph.io import first_negative_weight

        found = first_negative_weight(path, weight_col, header=header)
    if found is None and path is not None:
        row = _first_negative_npy_row(path, weight_col)
        if row is not None:   # a .npy edge array: its row, as its other refusals name it
            return InputError(source if source is not None else "<graph>", None,
                              f"row {row[0]}: negative edge weight {row[1]}: {what}")
    if found is None:
        if path is not None and _skew_symmetric_mtx(path):  # the negative weights are mirrors
            return InputError(source if source is not None else "<graph>", 1,
                              "a skew-symmetric Matrix Market matrix has negative edge weights "
                              f"(the mirror of each entry is its negation): {what}")
        if edge is not None:   # (audit 24: an array's refusal named no edge)
            return InputError(source if source is not None else "<graph>", None,
                              f"{edge[0]}: negative edge weight {edge[1]}: {what}")
        return InputError(source if source is not None else "<graph>", None, what)
    line, tok = found
    return InputError(source if source is not None else "<graph>", line,
                      f"negative edge weight {tok!r}: {what}")


def _first_negative_npy_row(path, weight_col):
    """``(row, value)`` of the first negative weight of a ``.npy`` edge array (0-based
    row, as :func:`asapgraph.graph.io._formats.npy_edges` counts), else None (error paths
    only)."""
    if _file_format(path) != "npy":
        return None
    try:
        import numpy as np

        from asapgraph.graph.io._formats import _plain

        a = np.load(path, mmap_mode="r", allow_pickle=False)
        col = np.asarray(a[:, (weight_col or 3) - 1])
        neg = np.flatnonzero(col < 0)
        return (int(neg[0]), _plain(col[neg[0]])) if neg.size else None
    except Exception:  # noqa: BLE001 - an error message is being built: no second error
        return None


def _skew_symmetric_mtx(path):
    """Whether ``path`` is a readable skew-symmetric Matrix Market file (error paths only)."""
    if _file_format(path) != "mtx":
        return False
    try:
        from asapgraph.graph.io._formats import mtx_info

        return mtx_info(path)["symmetry"] == "skew-symmetric"
    except Exception:  # noqa: BLE001 - an error message is being built: no second error
        return False


def _file_format(path):
    """:func:`asapgraph.graph.io.detect_format` of a regular file ``path``, else None (an
    in-memory graph, standard input, a missing or unreadable file: error paths only)."""
    import os

    if not isinstance(path, (str, os.PathLike)) or path == "-" or not os.path.isfile(path):
        return None
    try:
        from asapgraph.graph.io import detect_format

        return detect_format(path)
    except Exception:  # noqa: BLE001 - an error message is being built: no second error
        return None


# ----------------------------------------------------------------------------- tol


def pagerank_change_tol(alpha, tol):
    """Stop threshold on the L1 change of a Jacobi sweep that certifies L1 error <= tol.

    The update is an ``alpha``-contraction in L1, so ``||x_k - x*|| <= alpha / (1 - alpha)
    * ||x_k - x_{k-1}||``; alpha = 0 gives the exact answer after one sweep."""
    alpha, tol = float(alpha), float(tol)
    return math.inf if alpha == 0.0 else tol * (1.0 - alpha) / alpha


def pagerank_change_of_bound(alpha, bound):
    """The L1 change of a Jacobi sweep that certifies L1 error ``bound`` (what a run
    without sweep-to-sweep changes, ASAP, reports as its ``residual``, comparable with
    BSP's and one process's); ``bound`` itself at alpha 0."""
    factor = pagerank_error_bound(alpha, 1.0)
    return bound / factor if factor > 0 else bound


def pagerank_error_bound(alpha, change):
    """Certified L1 error after a Jacobi sweep whose L1 change was ``change``."""
    alpha = float(alpha)
    if not math.isfinite(change):
        return math.inf
    return 0.0 if alpha == 0.0 else alpha / (1.0 - alpha) * float(change)


def _error_factor(program, ctx):
    """The program's ``error_factor(ctx)`` (None: it has none), checked: a finite number
    >= 0 (a negative one, e.g. ``1 / (1 - d)`` with a damping ``d > 1``, made the stop
    threshold negative: the run ended "not converged" at a residual of 1e-269)."""
    f = getattr(program, "error_factor", None)
    if f is None:
        return None
    v = f(ctx)
    if v is None:
        return None
    try:
        ok = math.isfinite(float(v)) and float(v) >= 0.0
    except (TypeError, ValueError):
        ok = False
    if not ok:  # worded as engine.program.ProgramError (not imported: layers)
        cls = type(program)
        if cls.__dict__.get("_asapgraph_checked"):  # the checking subclass: the user's class
            cls = cls.__mro__[1]
        raise InputError(getattr(program, "name", None) or cls.__name__, None,
                         f"{cls.__name__}.error_factor() returned {v!r}: it must be a finite "
                         "number >= 0 (the L1 error of the result is at most error_factor * "
                         "the pending delta mass; a parameter of the program is out of "
                         "range?)")
    return float(v)


def _error_units(program, ctx):
    """``(scale, unit)`` of a program that solves in a scaled unit (Katz,
    ``error_units(ctx)``): its result is ``scale`` times the engine's values, so an
    error of ``F * mass`` in the engine's unit is ``scale * F * mass`` in the values',
    and ``tol`` is measured in ``unit`` (a bound on error / unit).  ``(1, 1)`` otherwise."""
    f = getattr(program, "error_units", None)
    if f is None:
        return 1.0, 1.0
    scale, unit = f(ctx)
    return float(scale), float(unit)


def engine_tol(program, ctx, tol):
    """The threshold the engines compare the program's residual with, for a run whose
    ``tol`` bounds the L1 error (see the module doc): ``tol / error_factor`` (times
    ``unit / scale`` for a program solving in a scaled unit, :func:`_error_units`:
    Katz, whose ``tol`` is in units of beta).  Programs without ``error_factor`` (or
    returning None) keep ``tol`` for their own test."""
    f = _error_factor(program, ctx)
    if f is None:
        return float(tol)
    if f == 0.0:
        return math.inf
    scale, unit = _error_units(program, ctx)
    # (unit / scale is in [1, 2) for Katz: no product here under- or overflows)
    return float(tol) * (unit / scale) / f


def values_residual(program, ctx, residual):
    """A run's ``residual`` (the pending L1 delta mass, or the last change) in the unit of
    the values, as ``error_bound``: ``scale`` times the engines' for a program solving in
    a scaled unit (Katz, :func:`_error_units`: until audit 31 its ``residual`` was
    reported in the engines' unit ``x / 2^k``, 1e100 below ``error_bound`` at beta
    1e100); unchanged otherwise (None stays None)."""
    if residual is None:
        return None
    scale, _ = _error_units(program, ctx)
    return residual if scale == 1.0 else float(residual) * scale


def error_bound(program, ctx, residual, converged, relative=False):
    """Certified L1 error bound reached by a program run (None: not certifiable).

    Sum programs with ``error_factor``: ``factor * residual`` (the pending L1 delta
    mass or the last change), in the unit of the values (times ``scale`` for a program
    solving in a scaled unit, :func:`_error_units`); ``relative``: in the unit of
    ``tol`` instead (the error over ``unit``; Katz: over beta), None for programs without
    :func:`_error_units`.  Min/max (monotone) accumulative programs: 0 at the fixed
    point (they stop only when no value can improve), None when stopped early."""
    if relative and getattr(program, "error_units", None) is None:
        return None
    if getattr(program, "accumulative", False) and program.combiner in ("min", "max"):
        return 0.0 if converged else None
    f = _error_factor(program, ctx)
    if f is None or residual is None:
        return None
    if not math.isfinite(residual):
        return math.inf
    scale, unit = _error_units(program, ctx)
    return float(f) * float(residual) * ((scale / unit) if relative else scale)


def check_residual(residual, what, iteration):
    """Raise InputError when a run's residual is not finite (the iteration diverged)."""
    if residual is not None and not math.isfinite(residual):
        raise InputError("asapgraph", None,
                         f"{what} diverged: its residual became {residual} at iteration "
                         f"{iteration} (a parameter such as alpha is too large for this graph)")


# ----------------------------------------------------------------------------- Katz


def spectral_radius_bound(in_weight, out_weight, matvec, n, alpha=None, steps=40):
    """A certified upper bound ``B >= lambda_max(A)`` of a non-negative matrix ``A`` and
    the factor ``F`` with ``L1 error <= F * pending L1 mass`` of ``x = alpha A^T x + beta``.

    ``B`` is the smallest of: the largest in-weight, the largest out-weight (matrix norms)
    and the Collatz-Wielandt bounds ``max_v (A^T x)_v / x_v`` of the positive vectors of a
    shifted power iteration ``x <- A^T x / B0 + x`` (valid for every ``x > 0``, also on
    reducible matrices; measured 40 steps: 1.02x lambda_max on rmat:10, 1.17x on rmat:14,
    1.01x on email-Eu-core, 1.15x on wiki-Vote).  The iteration stops early once
    ``alpha * B < 0.9``.  ``matvec(x) -> A^T x`` (collective on K ranks: every rank
    passes the same global ``x`` and gets the same result), ``in_weight``/``out_weight``
    the global maxima (absolute weights; ``|A|`` bounds ``A``).

    Returns ``(B, F)``; ``F`` is None when ``alpha * B >= 1``.  With ``c = alpha * B``
    in the ``x``-weighted max norm: ``F = c / (1 - c) * ||x||_1 / min(x)``, and with
    ``c1 = alpha * max out-weight < 1`` (the L1 norm of ``alpha A^T``):
    ``c1 / (1 - c1)``; the smaller one.
    """
    import numpy as np

    b0 = float(min(in_weight, out_weight))
    if n == 0 or b0 == 0.0:
        return 0.0, 0.0
    best, best_x = b0, None
    x = np.ones(n)
    for _ in range(steps):
        y = matvec(x)
        mu = float(np.max(y / x))
        if mu < best:
            best, best_x = mu, x
        if alpha is not None and alpha * best < 0.9:
            break
        x = y / b0 + x
        x /= x.max()
    if alpha is None:
        return best, None
    factors = []
    c1 = alpha * float(out_weight)
    if c1 < 1.0:
        factors.append(c1 / (1.0 - c1))
    c = alpha * best
    if c < 1.0:
        if best_x is None:  # the norm bound b0 itself: in-weight (inf-norm) or out-weight
            if c1 >= 1.0:
                factors.append(c / (1.0 - c) * n)  # ||e||_1 <= n ||e||_inf
        else:
            factors.append(c / (1.0 - c) * float(best_x.sum()) / float(best_x.min()))
    return best, (min(factors) if factors else None)


def check_katz_bound(alpha, bound, factor, source):
    """Refuse a Katz ``alpha`` whose convergence the bound cannot certify."""
    if factor is None:
        raise InputError(source if source is not None else "<graph>", None,
                         f"Katz alpha {alpha:g} is not below 1/B = {1.0 / bound:.4g}, where "
                         f"B = {bound:.6g} bounds the largest eigenvalue of the adjacency "
                         "matrix from above: the series may diverge; use a smaller --alpha "
                         f"(for instance {0.5 / bound:.3g})")


# ----------------------------------------------------------------------------- CLI rules

#: The commands that run an algorithm (and take the run options below).
RUN_COMMANDS = ("pagerank", "katz", "hits", "wcc", "sssp", "bfs", "labelprop", "run")
PROGRAM_COMMANDS = ("katz", "hits", "wcc", "sssp", "bfs", "labelprop", "run")
#: the commands that run in one process (no --np, no ranks): :func:`one_process_refusal`
ONE_PROCESS_COMMANDS = ("info", "convert", "generate", "bench")


@dataclass(frozen=True)
class Rule:
    """Where an option takes effect: ``commands`` x ``modes`` x ``ranks`` ("multi": only
    with several MPI ranks, "single": only on one process, "any"); ``why`` completes the
    refusal "--OPT does not apply to CMD ...: WHY"; ``needs``: another option (dest)
    without which it changes nothing; ``check``: a test that needs the rank count."""

    commands: tuple
    modes: tuple = ("bsp", "asap")
    ranks: str = "any"
    why: str = ""
    needs: str | None = None
    check: object = None   # (args, ranks) -> reason or None, once the rank count is known


#: commands with an ASAP mode: PageRank, the sum programs (katz, and user programs)
#: and the min/max programs; ``run`` is checked again once its program is known
#: (:func:`engine_option_refusal`).  hits and labelprop are not accumulative.
TUNED_COMMANDS = ("pagerank", "katz", "wcc", "sssp", "bfs", "run")
_ASAP_PR = Rule(TUNED_COMMANDS, ("asap",), "multi",
                "it is not accumulative: it runs in BSP supersteps only, which have no ASAP "
                "schedule")


def _fanout_check(args, ranks):
    f = int(getattr(args, "fanout", 2))
    if f > ranks - 1:
        return (f"--fanout {f} exceeds the {ranks - 1} other rank(s) of {ranks} ranks (the "
                "stochastic reduce sends to at most K-1 peers per round)")
    return None


def _schedule_check(args, ranks):
    if getattr(args, "schedule", None) == "priority" and getattr(args, "asap_form",
                                                                 "jacobi") != "jacobi":
        return ("--schedule priority applies to --asap-form jacobi only (the push form "
                "already pushes by a residual threshold)")
    return None


def _seed_check(args, ranks):
    if min(int(getattr(args, "fanout", 2)), ranks - 1) >= ranks - 1:
        return (f"--seed changes nothing on {ranks} ranks with --fanout "
                f"{getattr(args, 'fanout', 2)}: every round reaches all {ranks - 1} other "
                "rank(s), in no random order")
    return None


def _threads_check(args, ranks):
    if ranks is not None and ranks > 1 and getattr(args, "mode", "bsp") != "bsp" and \
            (getattr(args, "threads", None) or 1) > 1:
        return ("--threads does not apply to distributed pagerank --mode "
                f"{getattr(args, 'mode', 'bsp')}: an ASAP rank sweeps with one thread (ranks x "
                "threads run in --mode bsp)")
    return None


#: the network and straggler emulation: every engine on ranks, BSP and ASAP
_EMU = Rule(RUN_COMMANDS, ("bsp", "asap"), "multi", "")


def _straggler_check(args, ranks):
    """A straggler rank must be one of the run's ranks (0 .. K-1): a factor for a rank that
    does not exist would slow nothing; and given once (a second ``--straggler`` for the same
    rank silently replaced the first's factor)."""
    seen = {}
    for text in getattr(args, "straggler", None) or []:
        for part in str(text).split(","):
            r = part.split(":")[0].strip()
            if r.lstrip("-").isdigit() and int(r) >= ranks:
                return (f"--straggler {text}: rank {int(r)} is not one of the {ranks} ranks "
                        f"(0..{ranks - 1})")
            if r.isdigit():
                if int(r) in seen:
                    return (f"--straggler {text}: rank {int(r)} already has a factor "
                            f"(--straggler {seen[int(r)]}); give each rank once")
                seen[int(r)] = text
    return None


def _rebalance_check(args, ranks):
    return rebalance_refusal(getattr(args, "rebalance", "off"),
                             getattr(args, "partition", "range"),
                             getattr(args, "asap_form", "jacobi"), getattr(args, "mode", "bsp"))


def _clock_check(args, ranks):
    if getattr(args, "clock", "wall") == "virtual" and not float(getattr(args, "latency", 0)
                                                                 or 0) > 0:
        return ("--clock virtual needs --latency > 0 (the lookahead of its conservative "
                "synchronisation)")
    return None


def _emulate_seed_check(args, ranks):
    if not (float(getattr(args, "jitter", 0) or 0) > 0 or getattr(args, "pauses", None)):
        return "--emulate-seed changes nothing without --jitter or --pauses"
    return None


def _compute_check(args, ranks):
    if getattr(args, "compute", "cpu") != "cpu" and getattr(args, "clock", "wall") != "virtual":
        return (f"--compute {args.compute} applies to --clock virtual only (on the host's "
                "clock compute takes the time it takes)")
    return None


#: option dest -> :class:`Rule`.  The one table of where each option applies: when the
#: program engine learns an option, add the command to its rule's ``commands``.
RULES = {
    "fanout": replace(_ASAP_PR, check=_fanout_check),
    "window": _ASAP_PR,
    "approx": replace(_ASAP_PR, commands=("pagerank", "katz", "run"),
                      why="min/max programs send every improvement at once (there is no "
                          "residual to hold back)"),
    "asap_form": replace(_ASAP_PR, commands=("pagerank",),
                         why="it selects between the two forms of the PageRank solver"),
    "schedule": replace(_ASAP_PR, commands=("pagerank", "katz", "run"), check=_schedule_check,
                        why="min/max programs send improvements, not residuals: there is no "
                            "residual order to schedule by"),
    "seed": replace(_ASAP_PR, check=_seed_check),
    "latency": _EMU,
    "bandwidth": _EMU,
    "jitter": _EMU,
    "straggler": replace(_EMU, check=_straggler_check),
    "emulate_seed": replace(_EMU, check=_emulate_seed_check),
    "clock": replace(_EMU, check=_clock_check),
    "pauses": _EMU,
    "compute": replace(_EMU, check=_compute_check),
    "partition": Rule(RUN_COMMANDS, ("bsp", "asap"), "multi", "vertices are partitioned "
                      "over MPI ranks only"),
    "mpiexec": Rule(RUN_COMMANDS, ("bsp", "asap"), "multi", "mpiexec is used with --np > 1 "
                    "only"),
    "threads": Rule(("pagerank",), ("bsp", "asap"), "any", check=_threads_check),
    "method": Rule(("pagerank",), ("bsp", "asap"), "single",
                   "it selects the sweep of the single-process kernel"),
    "rebalance": Rule(("pagerank",), ("bsp", "asap"), "multi",
                      "vertex migration is built for PageRank's local graph only (the vertex "
                      "programs' ProgramGraph has no migration yet)", check=_rebalance_check),
}

_OPTION_NAMES = {"asap_form": "--asap-form", "emulate_seed": "--emulate-seed",
                 "max_iter": "--max-iter"}


def option_name(dest):
    return _OPTION_NAMES.get(dest, "--" + dest.replace("_", "-"))


def refusal(dest, command, mode, distributed, given=(), args=None, ranks=None):
    """Why option ``dest`` cannot apply to this run, or None when it applies
    (``ranks``: the rank count when known, for the rules with a ``check``)."""
    rule = RULES.get(dest)
    if rule is None or command not in RUN_COMMANDS:
        return None
    opt = option_name(dest)
    if command not in rule.commands:
        return f"{opt} does not apply to {command}: {rule.why}"
    if rule.ranks == "multi" and not distributed:
        return f"{opt} applies to distributed runs only (--np > 1 or under mpiexec)"
    if rule.ranks == "single" and distributed:
        return f"{opt} does not apply to distributed runs: {rule.why}"
    if mode not in rule.modes:
        return (f"{opt} does not apply to {command} --mode {mode} (only to --mode "
                f"{' or '.join(rule.modes)})")
    if rule.needs is not None and rule.needs not in given:
        return f"{opt} changes nothing without {option_name(rule.needs)}"
    if rule.check is not None and ranks is not None and args is not None:
        return rule.check(args, ranks)
    return None


def engine_option_refusal(dest, program_name, engine, combiner="sum"):
    """Why option ``dest`` given to ``asapgraph run`` cannot apply to its program, which
    runs on ``engine`` ("sum", "minmax", or the reason it runs on the general engine),
    with combiner ``combiner`` (every engine has the ASAP options and the
    emulation and both clocks; ``approx`` holds back sums only)."""
    opt = option_name(dest)
    rule = RULES.get(dest)
    if rule is None or "run" not in rule.commands:
        return None
    general = engine not in ("sum", "minmax")
    if dest == "approx" and (engine == "minmax" or (general and combiner != "sum")):
        return f"{opt} does not apply to program {program_name}: {RULES['approx'].why}"
    if dest == "schedule" and engine == "minmax":
        return f"{opt} does not apply to program {program_name}: {RULES['schedule'].why}"
    if dest == "schedule" and general:
        return (f"{opt} does not apply to program {program_name}: it runs on the general "
                f"program engine ({engine}), whose ASAP loop has no priority schedule")
    return None


class Between:
    """An :data:`ASAP_ENV` kind: a number strictly between ``lo`` and ``hi``, or from
    ``lo`` to ``hi`` both included when ``closed`` (``what`` names the knob in the
    refusal)."""

    def __init__(self, lo, hi, what, closed=False):
        self.lo, self.hi, self.what, self.closed = lo, hi, what, closed

    def __call__(self, value):
        v = float(value)
        inside = self.lo <= v <= self.hi if self.closed else self.lo < v < self.hi
        if not inside:   # (NaN included)
            raise ValueError(value)
        return v

    def describe(self):
        how = "from {:g} to {:g}" if self.closed else "strictly between {:g} and {:g}"
        return f"a number {how.format(self.lo, self.hi)} ({self.what})"


#: an :data:`ASAP_ENV` on/off switch: "0" off, "1" on (any other word was read as one of
#: the two -- "on" for most switches, "off" for some -- without a word)
SWITCH = ("0", "1")


#: the ASAP engine's experiment knobs in the environment (parsed by
#: :class:`asapgraph.engine.asap._Solver` on every rank): checked up front by
#: :func:`check_env`, so that a bad value is one line and exit status 2, not one error per
#: rank and an abort; the Python API checks them at entry in both modes (:func:`.run`,
#: :func:`asapgraph.pagerank`, :func:`asapgraph.engine.pagerank`: BSP reads some of
#: them too, audit 24b), and every rank's ASAP solver again.  A kind is
#: ``float``, ``int``, a :class:`Between` range or the tuple of the accepted words.
#: ``ASAPGRAPH_ASAP_OMEGA`` (SOR): a pushed vertex keeps ``(1 - omega)`` of its residual,
#: so omega <= 0 or >= 2 does not converge (omega -1 did only after the SOR guard turned
#: it off: audit 22).  ``ASAPGRAPH_ASAP_ANSWER`` (the answer rule, :data:`.asap.ANSWER_GATE`):
#: 0 (off) or the fraction of a rank's sweep its in-peers sweep in at most -- a negative
#: value acted as off and was shown as given in ``--json`` (audit 24).  The on/off
#: switches (:data:`SWITCH`), the rebalancer's ``ASAPGRAPH_ASAP_PEER_COST``,
#: ``ASAPGRAPH_ASAP_FIXED_COST`` (from 0 to 1: a fraction of a sweep) and
#: ``ASAPGRAPH_REBALANCE_FORCE``, the sum programs' ``ASAPGRAPH_EXTRAPOLATE`` and the
#: emulation's ``ASAPGRAPH_SPIN_WAITS`` are checked alike (audit 24).
ASAP_ENV = {"ASAPGRAPH_ASAP_RHO": float, "ASAPGRAPH_ASAP_RANK_PRIO": float,
            "ASAPGRAPH_ASAP_GAMMA": float, "ASAPGRAPH_ASAP_PRIO": float,
            "ASAPGRAPH_ASAP_BLOCK": int, "ASAPGRAPH_ASAP_PATIENCE": float,
            "ASAPGRAPH_ASAP_IDLE_CAP": float, "ASAPGRAPH_ASAP_JGAMMA": float,
            "ASAPGRAPH_ASAP_PREFETCH": int, "ASAPGRAPH_ASAP_IDLE_PRIO": float,
            "ASAPGRAPH_ASAP_STALL_SWEEPS": int, "ASAPGRAPH_ASAP_WIDE_FANOUT_K": int,
            "ASAPGRAPH_ASAP_WIDE_PERIOD": int,
            "ASAPGRAPH_ASAP_OMEGA": Between(0.0, 2.0, "the SOR over-relaxation factor"),
            "ASAPGRAPH_ASAP_SCALED_TARGET": float,
            "ASAPGRAPH_ASAP_ANSWER": Between(0.0, 1.0, "the answer rule's fraction of "
                                             "the rank's sweep; 0: off", closed=True),
            "ASAPGRAPH_ASAP_GATE_SLEEP": Between(0.0, 1.0, "seconds an idle rank whose "
                                                 "sweep gate is closed sleeps at once; 0: "
                                                 "off", closed=True),
            "ASAPGRAPH_ASAP_QUANT": ("q16", "q16b", "q16c", "f32", "off"),
            "ASAPGRAPH_ASAP_PEER_COST": Between(0.0, 1.0, "the split's cost a peer, a "
                                                "fraction of a sweep; 0: none", closed=True),
            "ASAPGRAPH_ASAP_FIXED_COST": Between(0.0, 1.0, "the split's fixed cost, a "
                                                 "fraction of a sweep; 0: none", closed=True),
            "ASAPGRAPH_REBALANCE_FORCE": int,
            **{name: SWITCH for name in (
                "ASAPGRAPH_ASAP_GS", "ASAPGRAPH_ASAP_DEGREE_RULE",
                "ASAPGRAPH_ASAP_REMAINDERS", "ASAPGRAPH_ASAP_QUANT_OUT",
                "ASAPGRAPH_ASAP_FLUSH_FIRST", "ASAPGRAPH_ASAP_ANSWER_HOLD",
                "ASAPGRAPH_ASAP_SWEEP_FLUSH", "ASAPGRAPH_ASAP_SKIP_STALE",
                "ASAPGRAPH_ASAP_REORDER", "ASAPGRAPH_ASAP_SLOT_ORDER",
                "ASAPGRAPH_ASAP_WIDE_FANOUT", "ASAPGRAPH_EXTRAPOLATE",
                "ASAPGRAPH_SPIN_WAITS")}}


def env_knobs(environ=None):
    """The :data:`ASAP_ENV` experiment knobs set in the environment, ``{name: value}``
    (``--json``'s ``env`` and the bench's records: a run's knobs are part of its
    configuration, so they are shown with it, not applied unseen)."""
    import os

    env = os.environ if environ is None else environ
    return {name: env[name] for name in ASAP_ENV if name in env}


def check_env(environ=None):
    """Refuse (InputError) a value of an :data:`ASAP_ENV` knob the engine cannot parse."""
    import os

    env = os.environ if environ is None else environ
    for name, kind in ASAP_ENV.items():
        value = env.get(name)
        if value is None:
            continue
        if isinstance(kind, tuple):
            if value not in kind:
                raise InputError("asapgraph", None, f"{name}={value!r}: expected one of "
                                 f"{', '.join(kind)}")
            continue
        try:
            kind(value)
        except ValueError:
            what = ("an integer" if kind is int else kind.describe()
                    if isinstance(kind, Between) else "a number")
            raise InputError("asapgraph", None, f"{name}={value!r} is not {what}") from None


def plain_id(text):
    """The integer of vertex-id ``text`` written as an edge list's id column writes it:
    plain ASCII digits, blanks around them allowed.  ``int()`` also took ``+1``, ``1_0``
    (as 10) and other scripts' digits, which a file's id column refuses.  ValueError
    ``"has a sign"`` for a signed number, ``"not an integer"`` for anything else."""
    t = text.strip()
    if t[:1] in ("+", "-") and t[1:].isascii() and t[1:].isdigit():
        raise ValueError("has a sign")
    if not (t.isascii() and t.isdigit()):
        raise ValueError("not an integer")
    return int(t)


#: ``-`` for more than one of INPUT, ``--personalization`` and ``--dangling``
STDIN_ONCE_REFUSAL = ("standard input '-' can be read once: give it to only one of {}; "
                      "save the others to files")


def stdin_refusal(args):
    """The :class:`InputError` for ``-`` given to more than one of ``INPUT``,
    ``--personalization`` and ``--dangling`` (each would read standard input; on one
    process and on ranks), or None.  ``INPUT`` = ``-`` on K ranks is read by rank 0, which
    deals its lines to the ranks (:func:`asapgraph.partition.reading.read_local_edges`);
    with ``--np`` rank 0 reads the launcher's standard input itself
    (:func:`asapgraph.comm.launch.run_ranks`), under the user's own mpiexec it drains
    what Hydra forwards into a spool (:mod:`asapgraph.comm.stdin_spool`).  A
    ``--personalization``/``--dangling`` file ``-`` is read by rank 0 (whole, first:
    :func:`prefetch_stdin_values`).  The same on every rank count."""
    named = [w for w, d in (("INPUT", "input"), ("--personalization", "personalization"),
                            ("--dangling", "dangling")) if getattr(args, d, None) == "-"]
    if len(named) > 1:
        return InputError("asapgraph", None, STDIN_ONCE_REFUSAL.format(" and ".join(named)))
    return None


def _check_labels_input(source):
    """``--labels`` names the vertices of a text edge list: a generator spec has none (it
    was ignored on one process, read as a missing file on ranks)."""
    import os

    if isinstance(source, str) and source != "-" and not os.path.exists(source):
        from asapgraph.graph.generators import is_spec

        if is_spec(source):
            raise InputError("asapgraph", None, f"--labels applies to text edge lists whose "
                             f"vertices are named by tokens; {source} is a generator spec "
                             "(integer ids)")


def _check_weighted_input(args):
    """``--weighted`` / ``--weight-col`` read a weight column: an input that has none is
    refused, as a text edge list without the column is ("missing column 3"), instead of
    running unweighted (one process) or with unit weights reported as weighted (K ranks):
    a generator spec, a binary graph saved without weights, a Matrix Market ``pattern``
    file.  Checked before any rank starts, so 1 and K ranks refuse alike."""
    import os

    weight_col = getattr(args, "weight_col", None)
    if not (getattr(args, "weighted", False) or weight_col is not None):
        return
    opt = "--weighted" if weight_col is None else "--weight-col"
    source = getattr(args, "input", None)
    if weight_col is not None and isinstance(source, str):  # the reader's line, before
        from asapgraph.graph.io._readers import _check_cols  # any rank starts (K ranks
                                                             # raised it on rank 1)
        _check_cols(source, 1, 2, int(weight_col))
    if not isinstance(source, str) or source == "-" or getattr(args, "labels", False):
        return  # standard input and --labels are text: their parsers check the column
    if not os.path.exists(source):
        from asapgraph.graph.generators import is_spec

        if is_spec(source):
            raise InputError(source, None, f"a generator spec has no edge weights (every "
                             f"edge weighs 1): drop {opt}")
        return
    if not os.path.isfile(source):
        return  # the reader's own message
    from asapgraph.graph.io import detect_format

    fmt = detect_format(source)
    if fmt == "binary":
        from asapgraph.graph.io._binary import read_header

        if not read_header(source)["flags"] & 1:
            raise InputError(source, None, f"this binary graph was saved without edge "
                             f"weights (convert its source with --weighted to keep them): "
                             f"drop {opt}")
    elif fmt == "mtx":
        from asapgraph.graph.io._formats import mtx_field

        if mtx_field(source) == "pattern":
            raise InputError(source, 1, f"a Matrix Market 'pattern' file has no edge "
                             f"weights: drop {opt}")


def _check_header_input(args):
    """``--header`` skips the header line of a text edge list: an input that is none -- a
    Matrix Market file, a binary graph, a ``.npy`` array, a Parquet table, a generator
    spec -- is refused (:func:`asapgraph.graph.io._readers.header_refusal`), before any
    rank starts, so 1 and K ranks refuse alike (it is applied, or refused; never
    ignored)."""
    if not getattr(args, "header", False):
        return
    from asapgraph.graph.io._readers import header_format, header_refusal

    source = getattr(args, "input", None)
    kind = header_format(source)
    if kind is not None:
        raise header_refusal(source, kind)


def _check_konect_header(args):
    """A KONECT file whose first line says ``% sym`` (undirected, each edge once) without
    ``--undirected``, or ``% bip`` (bipartite): refused before any rank starts
    (:func:`asapgraph.graph.io._readers.konect_refusal`; one process: ``load_graph``)."""
    import os

    source = getattr(args, "input", None)
    if not isinstance(source, str) or source == "-" or not os.path.isfile(source):
        return
    from asapgraph.graph.io import detect_format
    from asapgraph.graph.io._readers import konect_refusal

    if detect_format(source) == "text":
        err = konect_refusal(source, bool(getattr(args, "undirected", False)))
        if err is not None:
            raise err


def check_cli(args, distributed, ranks=None):
    """Refuse (InputError, exit status 2) every option given on the command line that
    cannot apply to this command, mode and rank count ``ranks`` (:data:`RULES`), ``--weighted``
    on an input without weights (:func:`_check_weighted_input`), and a bad value of an ASAP
    experiment knob in the environment (:func:`check_env`)."""
    command = getattr(args, "command", None)
    from asapgraph.errors import refuse_pipe   # (light: the launcher imports no numpy)

    refuse_pipe(getattr(args, "input", None))   # before any rank starts (each opens it)
    _check_weighted_input(args)  # info and convert read their input alike
    _check_header_input(args)
    _check_konect_header(args)
    if getattr(args, "labels", False):  # info too (it loaded the spec and then failed with
        _check_labels_input(getattr(args, "input", None))  # an internal error, exit 1)
    why = one_process_refusal(args, distributed)
    if why is not None:
        raise InputError("asapgraph", None, why)
    if command not in RUN_COMMANDS:
        return
    check_env()
    given = set(getattr(args, "_given", None) or ())
    if getattr(args, "labels", False):  # a store_true flag: given when set
        given.add("labels")
    for dest in sorted(given):
        why = refusal(dest, command, getattr(args, "mode", "bsp"), distributed, given, args,
                      ranks)
        if why is not None:
            raise InputError("asapgraph", None, why)
    # (on one process too, where --mode asap runs the single-process kernel, which could
    # certify them: the same input is refused the same way on every rank count, audit 27)
    if (getattr(args, "mode", "bsp") == "asap" and command in ("pagerank", "katz")
            and getattr(args, "tol", None) is not None):
        why = asap_tol_refusal(args.tol, pagerank=command == "pagerank")
        if why is not None:
            raise InputError("asapgraph", None, why)
    stdin_err = stdin_refusal(args)
    if stdin_err is not None:
        raise stdin_err


def one_process_refusal(args, distributed):
    """Why ``info``, ``convert``, ``generate`` or ``bench`` refuses ``--np`` (it has no
    ranks: it runs in one process, and ``bench`` starts its own with ``--ranks``), or
    refuses to run under the user's own mpiexec with several ranks (each rank printed the
    whole summary, or wrote the same file; each ran the whole benchmark); None otherwise."""
    command = getattr(args, "command", None)
    if command not in ONE_PROCESS_COMMANDS:
        return None
    if getattr(args, "np_refused", None) is not None:
        if command == "bench":
            return ("--np does not apply to bench: it starts its own ranks, give their "
                    "counts with --ranks (e.g. --ranks 2,4)")
        return (f"--np does not apply to {command}: it runs in one process (--np applies "
                f"to {', '.join(RUN_COMMANDS[:-1])} and {RUN_COMMANDS[-1]})")
    if distributed and command == "bench":  # (was run by every rank: K benchmarks at once,
        # timing each other, each starting its own jobs and writing the same files)
        return ("bench starts its own ranks (--ranks): start it without mpiexec (each of the "
                "ranks would run the whole benchmark)")
    if distributed:
        return (f"{command} runs in one process: start it without mpiexec (each of the "
                "ranks would do the whole work)")
    return None


class Given(argparse._StoreAction):
    """``store`` that records the option's dest in ``namespace._given`` (explicit use)."""

    def __call__(self, parser, namespace, values, option_string=None):
        _mark(namespace, self.dest)
        super().__call__(parser, namespace, values, option_string)


class GivenAppend(argparse._AppendAction):
    """``append`` that records the option's dest in ``namespace._given``."""

    def __call__(self, parser, namespace, values, option_string=None):
        _mark(namespace, self.dest)
        super().__call__(parser, namespace, values, option_string)


def _mark(namespace, dest):
    given = set(getattr(namespace, "_given", None) or ())
    given.add(dest)
    namespace._given = given
