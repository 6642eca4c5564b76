"""Markdown summary of benchmark records: headline table, RQ1-RQ5, peers, failures.

Every figure in the text is computed from the records passed in (medians over
repetitions); nothing is hard-coded, and a target that is not reached is printed as
"not reached" next to the measured value with the diagnostic that explains it (edge work,
bytes, rounds and per-sweep cost of each mode, and the straggler's own work).
"""
from __future__ import annotations

import datetime
import statistics
from collections import defaultdict
from pathlib import Path

from asapgraph.bench.runner import level_key
from asapgraph.bench.scenarios import LEVELS, straggler_factor

__all__ = ["headline_rows", "write_markdown", "markdown"]

TARGET = 1e-6


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _f(x, fmt=".3g", none="–"):
    return none if x is None else format(x, fmt)


def _mb(x):
    return "–" if x is None else f"{x / 1e6:.3g}"


def _ok(records, group=None):
    return [r for r in records if r.get("ok") and (group is None or r.get("group") == group)]


def _table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def headline_rows(records, group="rq1", level=TARGET):
    """Per (graph, ranks, network): BSP vs ASAP time and bytes to ``level``.

    Both times are when the true error gets (and stays) ``<= level`` (BSP: replayed
    iterates; ASAP: errors at termination waves, runs with ``tol == level``), bytes sent by
    then; ``asap_bound_seconds`` is when ASAP's certified bound gets there and
    ``asap_run_bytes`` the bytes of its whole run (termination included).
    """
    key = level_key(level)
    cells = defaultdict(lambda: {"bsp": [], "asap": []})
    for r in _ok(records, group):
        if r["mode"] == "asap" and abs(r["tol"] - level) > 1e-12 * level:
            continue
        cells[(r["graph"], r["ranks"], r["network"])][r["mode"]].append(r)
    rows = []
    for (g, K, net), d in cells.items():
        b, a = d["bsp"], d["asap"]
        bt = _med([(r.get("time_to_error") or {}).get(key) for r in b])
        at = _med([(r.get("time_to_error") or {}).get(key) for r in a])
        bb = _med([(r.get("bytes_to_error") or {}).get(key) for r in b])
        ab = _med([(r.get("bytes_to_error") or {}).get(key) for r in a])
        # BSP edge work to the level: supersteps needed x edges per superstep
        be = []
        for r in b:
            tr = r.get("error_trace") or []
            k = next((i for i, s in enumerate(tr, 1) if s[1] <= level), None)
            if k is not None and r.get("iterations"):
                be.append(r["edges_visited"] / r["iterations"] * k)
        rows.append({
            "graph": g, "ranks": K, "network": net, "n": (b or a or [{}])[0].get("n"),
            "m": (b or a or [{}])[0].get("m"), "bsp_seconds": bt, "asap_seconds": at,
            "asap_wall": _med([r.get("seconds") for r in a]),
            "asap_bound_seconds": _med([(r.get("time_to_bound") or {}).get(key) for r in a]),
            "asap_run_bytes": _med([r.get("bytes_sent") for r in a]),
            "speedup": (bt / at) if bt and at else None,
            "bsp_bytes": bb, "asap_bytes": ab,
            "bytes_ratio": (bb / ab) if bb and ab else None,
            "bsp_edges": _med(be), "asap_edges": _med([r.get("edges_visited") for r in a]),
            "asap_rounds": _med([r.get("rounds") for r in a]),
            "bsp_supersteps": _med([next((i for i, s in enumerate(r.get("error_trace") or [], 1)
                                          if s[1] <= level), None) for r in b]),
            "asap_error": max((r["final_error"] for r in a if r.get("final_error") is not None),
                              default=None),
            "bsp_error_at_level": level if bt is not None else None,
            "asap_within": all(r.get("within_tolerance") for r in a) if a else None,
            "bsp_wait": _med([_wait(r) for r in b]),
            "asap_wait": _med([_wait(r) for r in a]),
            "runs": (len(b), len(a)),
        })
        rows[-1].update(_work_split(b, a))
        r = rows[-1]
        steps = r["bsp_supersteps"]
        r["cap"] = (r["bsp_seconds"] / (steps * r["slow_sweep_s"])
                    if r.get("slow_sweep_s") and steps and r["bsp_seconds"] else None)
    return rows


def _work_split(b, a):
    """Where the time goes: per-sweep costs and, with a straggler, its own work.

    ``slow_*``: the slowest rank of the emulation (largest straggler factor) in the ASAP
    runs -- its sweeps, and its busy seconds (sweeping plus the emulated slowdown) as a
    share of the run; ``bsp_step``: BSP seconds per superstep to the level;
    ``*_sweep_ms``: compute milliseconds per sweep of a rank, averaged over ranks.
    """
    from asapgraph.engine.emulation import parse_straggler

    out = {}
    spec = parse_straggler((a or b or [{}])[0].get("straggler") or "")
    if spec and a:
        slow = max(spec, key=spec.get)
        sw, busy, share = [], [], []
        for r in a:
            pr = [p for p in r.get("per_rank") or [] if p.get("rank") == slow]
            if pr and r.get("seconds") and pr[0].get("sweeps"):
                b_s = pr[0].get("compute_seconds", 0.0) + pr[0].get("straggler_sleep_seconds", 0.0)
                sw.append(pr[0]["sweeps"])
                busy.append(b_s / pr[0]["sweeps"])
                share.append(b_s / r["seconds"])
        out.update({"slow_rank": slow, "slow_factor": spec[slow], "slow_sweeps": _med(sw),
                    "slow_sweep_s": _med(busy), "slow_busy": _med(share)})

    def per_sweep(rs, key):
        v = []
        for r in rs:
            pr = r.get("per_rank") or []
            n = sum((p.get(key) or 0) for p in pr) if key else r.get("iterations", 0) * len(pr)
            if n:
                v.append(1e3 * sum(p.get("compute_seconds", 0.0) for p in pr) / n)
        return _med(v)

    out["bsp_sweep_ms"] = per_sweep(b, None)
    out["asap_sweep_ms"] = per_sweep(a, "sweeps")
    out["asap_sweeps"] = _med([max((p.get("sweeps") or 0 for p in r.get("per_rank") or []),
                                   default=None) for r in a])
    return out


def _verdict(row):
    emulated = row["network"] != "none"
    out = []
    if emulated:
        sp, br = row["speedup"], row["bytes_ratio"]
        out.append(("ASAP >= 2x sooner", None if sp is None else sp >= 2.0, sp))
        out.append(("ASAP >= 3x fewer bytes", None if br is None else br >= 3.0, br))
    else:
        sp = row["speedup"]
        out.append(("ASAP not > 10% slower", None if sp is None else sp >= 1 / 1.1, sp))
    return out


def _why(row):
    """One-sentence diagnostic for a missed target, from the measured work counters."""
    bits = []
    if row["asap_edges"] and row["bsp_edges"]:
        bits.append(f"ASAP visited {row['asap_edges'] / row['bsp_edges']:.1f}x the edges BSP "
                    f"needed for L1 {TARGET:g} ({row['asap_edges']:.3g} vs {row['bsp_edges']:.3g})")
    if row["asap_bytes"] and row["bsp_bytes"]:
        bits.append(f"and sent {row['asap_bytes'] / row['bsp_bytes']:.2f}x its bytes")
    if row["asap_rounds"] and row["bsp_supersteps"]:
        bits.append(f"in {row['asap_rounds']:.0f} rounds vs {row['bsp_supersteps']:.0f} supersteps")
    out = " ".join(bits)
    steps = row.get("bsp_supersteps")
    if row.get("asap_sweeps") and steps and row.get("asap_sweep_ms") and row.get("bsp_sweep_ms"):
        out += (f". A rank swept {row['asap_sweeps']:.0f} times (BSP: {steps:.0f} supersteps to "
                f"{TARGET:g}) at {row['asap_sweep_ms']:.2f} ms of compute per sweep (BSP "
                f"{row['bsp_sweep_ms']:.2f} ms per superstep sweep)")
    if row.get("cap"):
        cap = row["cap"]
        out += (f". The straggler (rank {row['slow_rank']}, {row['slow_factor']:g}x) swept "
                f"{row['slow_sweeps']:.0f} times at {1e3 * row['slow_sweep_s']:.2f} ms each "
                f"(compute and emulated slowdown; busy {100 * row['slow_busy']:.0f}% of ASAP's "
                f"run): asynchrony removes the waiting, not the slow rank's own work -- every "
                f"vertex is owned by one rank, so the slow rank must sweep its part about as "
                f"often as BSP has supersteps ({steps:.0f}), which caps the speedup near "
                f"{cap:.2f}x on this partition (in the paper's data-parallel jobs, other workers' "
                f"redundant data stands in for a slow worker's; a partitioned graph has no such "
                f"redundancy, only moving vertices off the slow rank would lift the cap)")
    return out


def _headline_md(records):
    rows = headline_rows(records)
    if not rows:
        return "_No RQ1 runs in these records._\n"
    head = ["graph", "ranks", "network", f"BSP s to {TARGET:g}", f"ASAP s to {TARGET:g}",
            "speedup", "straggler cap", "BSP MB", "ASAP MB", "bytes BSP/ASAP",
            f"ASAP s to bound {TARGET:g} / run MB", "ASAP final L1 err (max)", "targets"]
    body = []
    notes = []
    for r in rows:
        v = _verdict(r)
        tg = "; ".join(f"{name}: {'yes' if ok else ('n/a' if ok is None else 'NO')} ({_f(val, '.2f')})"
                       for name, ok, val in v)
        body.append([r["graph"], r["ranks"], r["network"], _f(r["bsp_seconds"]),
                     _f(r["asap_seconds"]), _f(r["speedup"], ".2f"), _f(r.get("cap"), ".2f"),
                     _mb(r["bsp_bytes"]),
                     _mb(r["asap_bytes"]), _f(r["bytes_ratio"], ".2f"),
                     f"{_f(r['asap_bound_seconds'])} / {_mb(r['asap_run_bytes'])}",
                     _f(r["asap_error"], ".1e"), tg])
        if any(ok is False for _, ok, _ in v):
            notes.append(f"* {r['graph']}, network {r['network']}: not reached. {_why(r)}.")
        if any(ok is None for _, ok, _ in v):
            notes.append(f"* {r['graph']}, network {r['network']}: no figure (runs of one mode "
                         f"failed or did not reach {TARGET:g}; see Failures).")
    return _table(head, body) + "\n\n" + ("\n".join(notes) + "\n" if notes else "")


def _rq1_levels(records):
    out = []
    groups = defaultdict(list)
    for r in _ok(records, "rq1"):
        groups[(r["graph"], r["ranks"], r["network"], r["mode"], r["tol"])].append(r)
    head = ["graph", "network", "mode", "tol"] + [level_key(L) for L in LEVELS] + ["run s", "final L1 err", "runs"]
    for key in sorted(groups):
        rs = groups[key]
        g, K, net, mode, tol = key
        cells = [_f(_med([(r.get("time_to_error") or {}).get(level_key(L)) for r in rs]))
                 for L in LEVELS]
        out.append([g, net, mode, f"{tol:g}"] + cells +
                   [_f(_med([r["seconds"] for r in rs])),
                    _f(max(r.get("final_error") or 0 for r in rs), ".1e"), len(rs)])
    return _table(head, out) if out else "_No RQ1 runs._"


def _rq2(records):
    rows = []
    for r in headline_rows(records):
        rows.append([r["graph"], r["network"], _mb(r["bsp_bytes"]), _mb(r["asap_bytes"]),
                     _f(r["bytes_ratio"], ".2f"), _f(r["bsp_wait"]), _f(r["asap_wait"]),
                     _f(r["bsp_edges"], ".3g"), _f(r["asap_edges"], ".3g")])
    t1 = _table(["graph", "network", "BSP MB to 1e-6", "ASAP MB to 1e-6", "ratio",
                 "BSP wait s (sum over ranks)", "ASAP wait s", "BSP edges to 1e-6",
                 "ASAP edges"], rows) if rows else "_No RQ1 runs._"
    fan = []
    for r in sorted(_ok(records, "rq2"), key=lambda r: (r["graph"], r["mode"], r["fanout"], r["approx"])):
        fan.append([r["graph"], r["ranks"], r["mode"], r["fanout"] if r["mode"] == "asap" else "–",
                    _f(r["approx"], "g") if r["mode"] == "asap" else "–", _mb(r["bytes_sent"]),
                    r["messages_sent"], _f(r.get("seconds")),
                    _f((r.get("time_to_error") or {}).get("1e-06")),
                    _f(r.get("final_error"), ".1e"), _f(r.get("spectral_gap_mean"), ".3f")])
    t2 = _table(["graph", "K", "mode", "fanout k", "approx", "MB sent", "messages", "run s",
                 "s to 1e-6", "final L1 err", "gap"], fan) if fan else "_No RQ2 runs._"
    return t1, t2


def _rq3(records):
    rows = []
    recs = [r for r in _ok(records, "rq3") if r["mode"] == "asap"]
    for r in sorted(recs, key=lambda r: (r["ranks"], r["fanout"], r["repeat"])):
        rows.append([r["graph"], r["ranks"], r["fanout"], _f(r.get("spectral_gap"), ".3f"),
                     _f(r.get("spectral_gap_mean"), ".3f"), r["rounds"], _f(r["seconds"]),
                     _mb(r["bytes_sent"]), _f(r.get("final_error"), ".1e"), f"{r['tol']:g}",
                     "yes" if r.get("within_tolerance") else "NO"])
    corr = None
    xs = [r.get("spectral_gap_mean") for r in recs]
    ys = [r.get("rounds") for r in recs]
    if len(recs) >= 3 and None not in xs:
        import numpy as np

        if np.std(xs) > 0 and np.std(ys) > 0:
            corr = float(np.corrcoef(xs, ys)[0, 1])
    return (_table(["graph", "K", "fanout k", "gap (round 0)", "gap (mean)", "rounds", "run s",
                    "MB", "final L1 err", "tol", "err <= tol"], rows) if rows else "_No RQ3 runs._",
            corr, recs)


def _wait(r):
    """A record's waiting time on its own clock: the virtual one's for a run on the virtual
    clock (its ``wait_seconds`` are the host's), as its times to an error level are."""
    if r.get("clock") == "virtual" and r.get("virtual_wait_seconds") is not None:
        return r["virtual_wait_seconds"]
    return r.get("wait_seconds")


def _rq5(records):
    recs = _ok(records, "rq5")
    bsp, asap = defaultdict(list), defaultdict(list)
    for r in recs:
        f = straggler_factor(r.get("straggler"))
        if r["mode"] == "bsp":
            bsp[(r["graph"], f)].append(r)
        else:  # (one row per ASAP schedule: `bench --scenario rq5 --schedule a,b`)
            asap[(r["graph"], r["window"], r.get("schedule") or "", f)].append(r)
    rows = []
    for (g, w, sch, f) in sorted(asap):
        a = asap[(g, w, sch, f)]
        b = bsp.get((g, f), [])
        bt = _med([(r.get("time_to_error") or {}).get("1e-06") for r in b])
        at = _med([(r.get("time_to_error") or {}).get("1e-06") for r in a])
        rows.append([g, f"{f:g}", w, sch or "default", _f(bt), _f(at),
                     _f(bt / at if bt and at else None, ".2f"),
                     _f(_med([_wait(r) for r in b])), _f(_med([_wait(r) for r in a])),
                     _f(_med([r.get("straggler_sleep_seconds") for r in b])),
                     _f(_med([r.get("straggler_sleep_seconds") for r in a]))])
    return _table(["graph", "straggler factor", "ASAP window", "ASAP schedule", "BSP s to 1e-6",
                   "ASAP s to 1e-6",
                   "speedup", "BSP wait s", "ASAP wait s", "BSP straggler sleep s",
                   "ASAP straggler sleep s"], rows) if rows else "_No RQ5 runs._"


def _peers(peer_rows, records):
    if not peer_rows:
        return "_Peers not run (use `--peers`)._\n"
    rows = []
    for p in peer_rows:
        if not p.get("ok"):
            rows.append([p["graph"], p["impl"], "–", "–", "–", "–", "–", p.get("skipped", "")])
            continue
        rows.append([p["graph"], p["impl"], p["threads"], _f(p["build_seconds"]), _f(p["seconds"]),
                     p["iterations"] or "–", _f(p["error"], ".1e"), p.get("note", "")])
    out = _table(["graph", "implementation", "threads", "build s", "s to 1e-6", "iterations",
                  "L1 err", "note"], rows) + "\n\n"
    # COST: best single machine vs distributed (unemulated) at each K
    best = {}
    for p in peer_rows:
        if p.get("ok") and p["error"] <= p["target"] * 1.0000001:
            if p["graph"] not in best or p["seconds"] < best[p["graph"]][1]:
                best[p["graph"]] = (p["impl"] + f" {p['threads']}t", p["seconds"])
    lines = []
    for r in headline_rows(records):
        if r["network"] != "none" or r["graph"] not in best:
            continue
        name, t = best[r["graph"]]
        for mode, x in (("BSP", r["bsp_seconds"]), ("ASAP", r["asap_seconds"])):
            if x is not None:
                lines.append([r["graph"], f"{mode} on {r['ranks']} ranks", _f(x), name, _f(t),
                              _f(x / t, ".2f")])
    if lines:
        out += ("COST: distributed (unemulated, one host) vs the best single-machine run to the "
                "same error:\n\n" + _table(["graph", "distributed", "s to 1e-6", "best single machine",
                                             "s", "distributed / single"], lines) + "\n")
    return out


def _losses(records):
    """Every measured comparison in which ASAP is slower or sends more, with its counters."""
    out = []
    from asapgraph.bench.report_scenarios import grid_rows  # (it imports this module)

    grid = [r for r in grid_rows(records) if r["mode"] == "asap"]
    heads = headline_rows(records)
    compared = any(r["speedup"] is not None or r["bytes_ratio"] is not None
                   for r in heads + grid)
    for r in grid:  # (a grid's comparisons: none were looked at, and the line below said
        # ASAP won every one of them whatever they held)
        sp, br = r["speedup"], r["bytes_ratio"]
        if (sp is not None and sp < 1) or (br is not None and br < 1):
            out.append(f"* grid {r['graph']} ({r['ranks']} ranks, network {r['network']}, "
                       f"{r['partition']}, rebalance {r['rebalance']}, tol {r['tol']:g}) "
                       f"{r['variant']}: speed-up {_f(sp, '.2f')}, bytes ratio "
                       f"{_f(br, '.2f')} (BSP / ASAP, to L1 {float(r['level']):g}).")
    for r in heads:
        sp, br = r["speedup"], r["bytes_ratio"]
        if (sp is not None and sp < 1) or (br is not None and br < 1):
            out.append(f"* {r['graph']} ({r['ranks']} ranks, network {r['network']}): ASAP "
                       f"speedup {_f(sp, '.2f')} (BSP time / ASAP time), bytes ratio {_f(br, '.2f')} "
                       f"(BSP bytes / ASAP bytes) to L1 {TARGET:g}. {_why(r)}.")
    rq5 = defaultdict(lambda: {"bsp": [], "asap": []})
    for r in _ok(records, "rq5"):
        asap = r["mode"] == "asap"
        rq5[(r["graph"], straggler_factor(r.get("straggler")), r["window"] if asap else None,
             (r.get("schedule") or "") if asap else None)][r["mode"]].append(r)
    for (g, f, w, sch), d in sorted(rq5.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                kv[0][2] or 0, kv[0][3] or "")):
        if w is None:
            continue
        b = rq5.get((g, f, None, None), {}).get("bsp", [])
        bt = _med([(x.get("time_to_error") or {}).get("1e-06") for x in b])
        at = _med([(x.get("time_to_error") or {}).get("1e-06") for x in d["asap"]])
        compared = compared or bool(bt and at)
        if bt and at and at > bt:
            out.append(f"* RQ5 {g}, straggler factor {f:g}, window {w}"
                       + (f", schedule {sch}" if sch else "") + f": ASAP {at:.3g} s vs BSP "
                       f"{bt:.3g} s to L1 1e-6.")
    if not out:
        if not compared:
            return ("No comparison of BSP and ASAP in these records (no mode reached the "
                    "same error level on both sides).")
        return "ASAP was at least as fast and sent no more bytes in every measured comparison."
    out.append("")
    out.append("Mechanisms to read these rows by (the counters above say which applies): "
               "ASAP's Jacobi delta form needs about as many sweeps as power iteration when the "
               "ranks run in step, but every sweep a rank runs on partial input (a peer's data "
               "not there yet) is extra edge work (the `edges` columns), and with 4 ranks on 2 "
               "cores that work takes CPU from the rank that is behind, while a rank blocked at a "
               "BSP barrier costs little; a rank applies messages only between sweeps and may "
               "not send a peer more until it ACKs (window 1), so a boundary value can wait a "
               "sweep plus a round trip; the true error is sampled at termination waves (every "
               "~5 ms), which rounds ASAP's times up. What ASAP saves is bytes: 16-bit messages "
               "with error feedback carry 2 bytes per boundary value instead of 8, and on "
               "cnr-2000 skipping small residuals halves the edge work.")
    return "\n".join(out)


def _failures(records):
    bad = [r for r in records if not r.get("ok")]
    wrong = [r for r in records if r.get("ok") and r.get("within_tolerance") is False]
    out = []
    for r in bad:
        out.append(f"* {r['group']}: {r['graph']} K={r['ranks']} {r['mode']} "
                   f"(k={r['fanout']}, W={r['window']}, tol={r['tol']:g}, network {r['network']}): "
                   f"{r.get('error')}")
    for r in wrong:
        out.append(f"* ERROR ABOVE TOLERANCE: {r['group']} {r['graph']} K={r['ranks']} {r['mode']} "
                   f"tol={r['tol']:g}: final L1 error {r.get('final_error')}")
    return "\n".join(out) if out else "None: every run finished with its final error within its tolerance."


def markdown(records, peer_rows=None, plots=(), command="", elapsed=None, outdir=".",
             generated=None):
    """The report text (Markdown); ``generated``: the date shown (default now; the
    JSON's, when ``--from-json`` redraws a run, so that the redrawn text is the run's)."""
    from asapgraph.bench.runner import machine_info

    machine = (records[0].get("machine") if records else None) or machine_info()
    bi = next((r.get("batch_info") for r in records if r.get("batch_info")), {}) or {}
    plots = [Path(p) for p in plots]

    def img(prefix):
        import os

        return "\n".join(f"![{p.stem}]({Path(os.path.relpath(p.resolve(), Path(outdir).resolve())).as_posix()})"
                         for p in plots if p.name.startswith(prefix))

    t_rq2a, t_rq2b = _rq2(records)
    t_rq3, corr, rq3recs = _rq3(records)
    rq4_ok = [r for r in rq3recs if r.get("within_tolerance")]
    lines = [
        "# asapgraph benchmark report: BSP vs ASAP PageRank on an emulated cluster",
        "",
        f"Generated {generated or datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} by "
        f"`{command}`"
        + (f" in {elapsed / 60:.1f} min" if elapsed else "") + ".",
        "",
        "## Conditions",
        "",
        f"* Machine: {machine.get('cpu_count')} cores, {machine.get('platform')}; Python "
        f"{machine.get('python')}, numpy {machine.get('numpy')}, scipy {machine.get('scipy')}, "
        f"mpi4py {bi.get('mpi4py', machine.get('mpi4py'))}, MPI: {bi.get('mpi_library', '?')}; "
        f"asapgraph {machine.get('asapgraph')}. Load average at start: "
        f"{', '.join(f'{x:.1f}' for x in machine.get('loadavg_start', ()))}.",
        "* All K ranks run on this one host with `OMP_NUM_THREADS=1`; with 4 or 6 ranks on 2 "
        "cores the ranks are **oversubscribed**, so absolute times include OS time-slicing. "
        "Network effects are **emulated** inside the engines' message layer (each message is "
        "delivered no earlier than latency + bytes/bandwidth after it is sent, a collective -- "
        "BSP's reduce, ASAP's termination wave -- completes ceil(log2 K) x latency + "
        "bytes/bandwidth after the last rank joined it; straggler ranks "
        "sleep (factor - 1) x the CPU time of each sweep), identically for both modes; rows with network "
        "`none` are the real, unemulated numbers.",
        "* PageRank alpha 0.85, uniform teleport, networkx semantics. Error = L1 distance of the "
        "full rank vector to a single-process reference solved to L1 change 1e-13.",
        "* **Time to error**, both modes the *true* L1 error: BSP = time of the first superstep "
        "whose iterate is below the level (BSP is power iteration; the error of each iterate is "
        "replayed with scipy). ASAP = time of the first termination wave from which the error "
        "of x / sum(x) stays below the level (every rank adds the L1 error of its part "
        "against the reference when a wave completes; waves run every ~5 ms). The headline also shows when ASAP's *certified bound* (what "
        "its termination waits for) gets there; intermediate wave bounds sum the ranks' "
        "residuals at slightly different moments, so only the final bound is certified. "
        "Times start after the graph is loaded and partitioned (loading is excluded and "
        "reported separately in the JSON).",
        "* **Bytes**: bytes sent until the level is reached (data, ACKs, headers); BSP = the "
        "supersteps needed, ASAP = by the wave that reached it (the whole run to `tol`, "
        "termination included, is in the headline too).",
        "* Medians over repetitions; failed, timed-out or skipped runs are listed under Failures.",
        "* The benchmark worker loads and partitions each graph once per job and reuses it "
        "for the job's runs (see benchmarks/README.md).",
        "",
        f"## Headline: BSP vs ASAP to L1 error {TARGET:g}",
        "",
        "Targets of the issue: on the emulated cluster (4 ranks, 1 ms latency, 1 Gbit/s per "
        "link, rank 1 three times slower) ASAP reaches L1 1e-6 at least 2x sooner than BSP and "
        "sends at least 3x fewer bytes; unemulated, ASAP is not more than 10% slower. "
        "`speedup` = BSP time / ASAP time; `straggler cap` = BSP time / (BSP supersteps x "
        "the straggler's own time per ASAP sweep), the speed-up the slow rank's work allows "
        "if it sweeps as often as BSP has supersteps; `bytes BSP/ASAP` = BSP bytes / ASAP "
        "bytes.",
        "",
        _headline_md(records),
        img("error_vs_time"),
        "",
        "## RQ1: does ASAP converge faster to the same accuracy?",
        "",
        "Seconds to reach each L1 error level (median; `–` = not reached by that run's tol):",
        "",
        _rq1_levels(records),
        "",
        img("error_vs_bytes"),
        "",
        "## RQ2: how much traffic and synchronisation does it save?",
        "",
        t_rq2a,
        "",
        "Bytes vs fanout k and the approximation threshold (emulated cluster):",
        "",
        t_rq2b,
        "",
        img("bytes_vs_fanout"),
        "",
        "## RQ3: which topology property governs convergence?",
        "",
        "ASAP rounds vs the spectral gap 1 - sigma2(P) of the stochastic-reduce graph (unemulated):",
        "",
        t_rq3,
        "",
        ("Pearson correlation of rounds with the mean spectral gap: "
         f"{corr:+.2f} over {len(rq3recs)} runs." if corr is not None else
         "Too few RQ3 runs for a correlation."),
        "",
        img("rounds_vs_gap"),
        "",
        "## RQ4: does the stochastic reduce on a sparse expander keep the guarantee of the full reduce?",
        "",
        (f"{len(rq4_ok)} of {len(rq3recs)} ASAP runs of the fanout sweep (fanout 1 = sparsest "
         "expander ... K-1 = full reduce) ended with a true L1 error at or below their tolerance "
         "(table above, column `err <= tol`). The guarantee is the exact termination "
         "(counting waves) plus the certified bound, which do not depend on the fanout; the "
         "fanout changes only how fast the residual mass reaches its owners."
         if rq3recs else "_No RQ3/RQ4 runs._"),
        "",
        "## RQ5: what does NOTIFY-ACK gain over a barrier?",
        "",
        _rq5(records),
        "",
        img("speedup_vs_straggler"),
        "",
        "## Peers: the COST question (single machine, same error)",
        "",
        _peers(peer_rows, records),
        "",
        "## Where ASAP does not win",
        "",
        _losses(records),
        "",
        "## Failures, timeouts, skipped runs",
        "",
        _failures(records),
        "",
    ]
    from asapgraph.bench.report_scenarios import sections  # (it uses this module's helpers)

    extra = sections(records)  # scenario families beyond RQ1-RQ5 (present ones only)
    if extra:
        lines[-4:-4] = [extra]
    return "\n".join(lines)


#: the generated part of a report between these lines; :func:`write_markdown` replaces
#: only that part of an existing file, so hand-written sections around it survive a rerun
#: (benchmarks/REPORT.md keeps a status table above it and the dated sessions below it)
GEN_BEGIN = "<!-- asapgraph bench: the generated report begins -->"
GEN_END = "<!-- asapgraph bench: the generated report ends (text outside these lines is kept) -->"


def write_markdown(path, records, peer_rows=None, plots=(), command="", elapsed=None,
                   generated=None):
    """Write :func:`markdown` to ``path`` (through a temporary file and a rename); returns
    the path.  If ``path`` exists with the :data:`GEN_BEGIN` / :data:`GEN_END` lines, only
    the text between them is replaced (without the report's title line when the text
    before them already starts with it); else the whole file is written, marked."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = markdown(records, peer_rows, plots, command, elapsed, path.parent, generated)
    text = f"{GEN_BEGIN}\n{body}\n{GEN_END}\n"
    old = path.read_text() if path.exists() else ""
    i, j = old.find(GEN_BEGIN), old.find(GEN_END)
    if 0 <= i < j:
        pre, post = old[:i], old[j + len(GEN_END):]
        title, _, rest = body.partition("\n")
        if pre.startswith(title + "\n"):
            body = rest.lstrip("\n")
        text = f"{pre}{GEN_BEGIN}\n{body}\n{GEN_END}{post}"
    from asapgraph.graph.io.atomic import atomic_write

    with atomic_write(path, "w") as f:   # (as the JSON: no fixed NAME.tmp left behind)
        f.write(text)
    return path
