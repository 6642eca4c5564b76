"""Fit the compute model's constants (``asapgraph.engine.emulation.MODEL_NS``) on this host.

Usage::

    python benchmarks/fit_compute_model.py [--graphs cnr-2000,rmat:18] [--np 4[,16,64]]
        [--repeat 3] [--args '--straggler 1:3 --compute model'] [--no-dynamic]

Runs ``asapgraph pagerank GRAPH --np K --mode M --clock virtual --latency 1e-3 --json``
(CPU-time compute, both modes) ``--repeat`` times per graph and fits, by least squares
over the ranks of every run, what each rank's ``per_rank[].compute_calibration``
recorded:

* per sweep kernel (``pull``: BSP, ``push``: ASAP; ``_r``: on relabelled rows):
  ``CPU = ns_per_edge x edges + ns_per_vertex x vertices``;
* per value of the 16-bit coded and byte-coded messages (``coded``, ``bytecoded``):
  ``(encode, decode)`` ns, the coders' CPU time measured around each call in the runs
  (``encode_bytecoded`` etc., the real messages) over the values they coded -- not fitted:
  the values are nearly proportional to the bytes, so least squares cannot tell them
  apart (a fit without them put the coders' cost on the bytes);
* per ASAP round's other work (``round``), its CPU time less the coders': ``CPU =
  ns_per_round x rounds + ns_per_message x messages + ns_per_byte x bytes + ns_per_pass x
  vertices of its passes``;
* per BSP message packed (``pack``): ``CPU = ns_per_gather x values``;
* per BSP message posted (``post``: each ``Irecv``, and each ``Isend`` with its header and
  stamp): ``CPU = ns_per_post x messages``;
* per layout built before a solve's first sweep (``layout_pull``, ``layout_pull_r``:
  BSP's pull rows; ``layout_push_r``: ASAP's relabelled push rows): ``CPU = ns x edges +
  ns x vertices`` of the rank's rows (BSP builds them in the run when the graph was
  loaded in the push layout: ``--rebalance dynamic`` or a weighted graph; the fit runs
  BSP both ways).

Prints the constants as ``MODEL_NS`` and ``MODEL_LAYOUT_NS`` literals and the fit's
relative residual per kind.
Run it on a quiet host (the fit inherits the host's load), then paste the literal into
``asapgraph/engine/emulation.py`` (or pass the figures to ``asapgraph bench
--compute model``) and record the run in benchmarks/REPORT.md.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from asapgraph.engine.emulation import KERNELS, LAYOUTS

#: the coders' measured calls (``compute_calibration`` of each rank)
CODERS = ("encode_coded", "decode_coded", "encode_bytecoded", "decode_bytecoded")
from bench_cost import source_of  # (benchmarks/ is on sys.path when run as a script)


def run(graph, k, mode, exe, extra=()):
    cmd = [exe, "pagerank", source_of(graph), "--np", str(k), "--mode", mode, "--clock",
           "virtual", "--latency", "1e-3", "--tol", "1e-6", "--json", "-q", *extra]
    print(" ".join(cmd), file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return [p.get("compute_calibration", {}) for p in json.loads(r.stdout)["per_rank"]]


#: weigh each row by 1 / its CPU time (``--relative``): every rank's relative error
#: counts alike, so the many small rows of a 64-rank run are not swamped by a few large ones
RELATIVE = [False]


def fit(rows, cols):
    """Non-negative least squares ``cpu = sum c_i x col_i`` (columns scaled to unit norm
    first; rows weighed by ``1 / cpu`` with ``--relative``); returns the constants in ns
    and the relative L1 residual."""
    from scipy.optimize import nnls

    A = np.array([[row[c] for c in cols] for row in rows], dtype=np.float64)
    y = np.array([row["cpu_seconds"] for row in rows])
    if RELATIVE[0]:
        w = 1.0 / np.maximum(y, 1e-9)
        coef = nnls(A * w[:, None], y * w)[0]
        return coef * 1e9, float(np.abs(A @ coef - y).sum() / max(y.sum(), 1e-300))
    scale = np.linalg.norm(A, axis=0)
    scale[scale == 0] = 1.0
    coef = nnls(A / scale, y)[0] / scale
    resid = float(np.abs(A @ coef - y).sum() / max(y.sum(), 1e-300))
    return coef * 1e9, resid


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default="cnr-2000,rmat:18")
    ap.add_argument("--np", default="4", dest="k",
                    help="rank counts, comma-separated (e.g. 4,16,64: the per-message "
                         "constants are told apart from the per-byte ones where messages "
                         "are many and small)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--args", default="",
                    help="more options for every run, e.g. '--straggler 1:3 --rebalance "
                         "start --bandwidth 125e6 --compute model' (the calibration is "
                         "measured CPU time whatever --compute charges)")
    ap.add_argument("--relative", action="store_true",
                    help="weigh each rank's row by 1 / its CPU time (relative errors)")
    ap.add_argument("--no-dynamic", action="store_true",
                    help="leave out BSP's run in the push layout (--rebalance dynamic)")
    ap.add_argument("--exe", default=str(Path(sys.executable).with_name("asapgraph")))
    a = ap.parse_args(argv)
    RELATIVE[0] = a.relative
    rows = {**{k: [] for k in KERNELS}, "round": [], "pack": [], "post": [],
            **{"layout_" + k: [] for k in LAYOUTS}, **{k: [] for k in CODERS}}
    # BSP also in the push layout (--rebalance dynamic: it builds its pull rows in the run)
    more = tuple(a.args.split())
    runs = (("bsp", more), ("asap", more)) + (
        () if a.no_dynamic else (("bsp", more + ("--rebalance", "dynamic")),))
    ks = [int(k) for k in a.k.split(",")]
    for rep in range(a.repeat):
        for g in a.graphs.split(","):
            for (mode, extra), k in ((r, k) for r in runs for k in ks):
                for cal in run(g, k, mode, a.exe, extra):
                    coders = sum(cal.get(k, {}).get("cpu_seconds", 0.0) for k in CODERS)
                    for kind, row in cal.items():
                        if kind == "round":  # (the coders' measured CPU out of it)
                            row = {**row, "cpu_seconds": row["cpu_seconds"] - coders}
                        if kind in rows and row.get("cpu_seconds"):
                            rows[kind].append(row)
            print(f"round {rep + 1}/{a.repeat} done", file=sys.stderr)
    out, notes = {}, []
    for kind in KERNELS:
        if len(rows[kind]) >= 2:
            (e, v), res = fit(rows[kind], ("edges", "vertices"))
            out[kind] = (round(float(e), 2), round(float(v), 2))
            notes.append(f"{kind}: {len(rows[kind])} ranks, residual {res:.1%}")
    for form in ("coded", "bytecoded"):
        pair, calls = [], []
        for end in ("encode", "decode"):
            rr = [r for r in rows[f"{end}_{form}"] if r["values"]]
            if len(rr) < 2:
                break
            # per value, with a cost per call beside it (which the message constant
            # covers): least squares over the ranks' rows, as MODEL_NS was fitted
            (c, v), _ = fit(rr, ("messages", "values"))
            pair.append(round(float(v), 2))
            calls.append(c / 1000.0)
        if len(pair) < 2:
            notes.append(f"{form}: no such messages in the runs (keep the default)")
        else:
            out[form] = tuple(pair)
            notes.append(f"{form}: measured around the coders' calls, encode {pair[0]} ns, "
                         f"decode {pair[1]} ns a value (and {calls[0]:.1f} / "
                         f"{calls[1]:.1f} us a call)")
    if len(rows["round"]) >= 3:
        (r, m, b, v), res = fit(rows["round"], ("rounds", "messages", "bytes", "vertices"))
        if r < 1000.0:  # collinear with the messages; a round must cost something
            notes.append(f"round: fitted {r:.0f} ns, fixed at 10000 and the rest refitted "
                         "(a round that costs no virtual time lets a rank run rounds at "
                         "one instant)")
            r = 10000.0
            rest = [{**row, "cpu_seconds": row["cpu_seconds"] - 1e-9 * r * row["rounds"]}
                    for row in rows["round"]]
            (m, b, v), res = fit(rest, ("messages", "bytes", "vertices"))
        out.update(round=round(float(r), -1), message=round(float(m), -1),
                   byte=round(float(b), 3), pass_=round(float(v), 2))
        notes.append(f"round: {len(rows['round'])} ranks, residual {res:.1%}")
    if len(rows["pack"]) >= 1:
        (g,), res = fit(rows["pack"], ("values",))
        out["gather"] = round(float(g), 2)
        notes.append(f"pack: {len(rows['pack'])} ranks, residual {res:.1%}")
    if len(rows["post"]) >= 1:
        (p,), res = fit(rows["post"], ("messages",))
        out["post"] = round(float(p), -1)
        notes.append(f"post: {len(rows['post'])} ranks, residual {res:.1%}")
    lay = {}
    for kind in LAYOUTS:
        rr = rows["layout_" + kind]
        if len(rr) >= 2:
            (e, v), res = fit(rr, ("edges", "vertices"))
            lay[kind] = (round(float(e), 2), round(float(v), 2))
            notes.append(f"layout {kind}: {len(rr)} builds, residual {res:.1%}")
    lit = ", ".join(f'"{k.rstrip("_")}": {v}' for k, v in out.items())
    print("MODEL_NS = {" + lit + "}")
    print("MODEL_LAYOUT_NS = {" + ", ".join(f'"{k}": {v}' for k, v in lay.items()) + "}")
    for n in notes:
        print("#", n)


if __name__ == "__main__":
    main()
