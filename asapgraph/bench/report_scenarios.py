"""Markdown of the straggler scenarios (issue 14 item 5) and of the rank-count scale runs
(issue 15 item 3): one table per family, every figure computed from the records.

Kept apart from :mod:`.report` (the RQ1-RQ5 report) so that each family of scenarios
adds its own function and its own line in :func:`sections`.  Times are the records'
``time_to_error`` (virtual seconds on the virtual clock, the run's ``wall_seconds``
beside them); a speed-up is BSP's median time to L1 1e-6 over the variant's.
"""
from __future__ import annotations

from collections import defaultdict

from asapgraph.bench.report import _f, _med, _table  # the RQ report's cell helpers
from asapgraph.bench.runner import level_key
from asapgraph.bench.scenarios import LEVELS, STRAGGLER_TARGETS

__all__ = ["stragglers_md", "scale_md", "grid_rows", "grid_md", "sections"]

LEVEL = "1e-06"


def _t(r):
    return (r.get("time_to_error") or {}).get(LEVEL)


def _wall(r):
    """The run's real seconds (``wall_seconds`` on the virtual clock, else ``seconds``)."""
    return r.get("wall_seconds", r.get("seconds"))


def _ratio(a, b):
    return a / b if a and b else None


def _variant(r):
    return "BSP" if r["mode"] == "bsp" else f"ASAP {r.get('schedule') or 'default'}"


def _clock(recs):
    clocks = {r.get("clock") or "wall" for r in recs}
    return "virtual" if clocks == {"virtual"} else ("wall" if clocks == {"wall"} else "mixed")


def stragglers_md(records):
    """The straggler scenarios (groups ``s-*``): per graph, K and scenario, BSP against
    ASAP with each schedule (the ablation), speed-up against the issue's target."""
    cells = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r.get("ok") and str(r.get("group", "")).startswith("s-"):
            kind = (r.get("tags") or {}).get("scenario") or r["group"][2:]
            cells[(r["graph"], r["ranks"], kind)][_variant(r)].append(r)
    if not cells:
        return ""
    rows = []
    for (g, K, kind), d in sorted(cells.items()):
        b = d.get("BSP", [])
        bt = _med([_t(r) for r in b])
        bb = _med([(r.get("bytes_to_error") or {}).get(LEVEL) for r in b])
        target = STRAGGLER_TARGETS.get(kind)
        for v in sorted(k for k in d if k != "BSP"):
            a = d[v]
            at = _med([_t(r) for r in a])
            ab = _med([(r.get("bytes_to_error") or {}).get(LEVEL) for r in a])
            sp = bt / at if bt and at else None
            met = "–" if sp is None or target is None else ("**met**" if sp >= target
                                                              else "not met")
            rows.append([g, K, kind, v, _f(bt), _f(at), _f(sp, ".2f"),
                         f"{target:g}x {met}" if target else "–",
                         _f(bb / ab if bb and ab else None, ".2f"),
                         _f(_med([r.get("messages_sent") for r in a]), ".0f"),
                         _f(_ratio(_med([r.get("edges_visited") for r in a]),
                                   _med([r.get("edges_visited") for r in b])), ".2f"),
                         f"{_f(_med([_wall(r) for r in b]))} / {_f(_med([_wall(r) for r in a]))}",
                         f"{len(b)}/{len(a)}"])
    recs = [r for d in cells.values() for rs in d.values() for r in rs]
    return "\n".join([
        f"Straggler scenarios ({_clock(recs)} clock; time to L1 {float(LEVEL):g}, medians):",
        "",
        _table(["graph", "K", "scenario", "ASAP variant", "BSP s", "ASAP s", "speed-up",
                "target", "bytes BSP/ASAP (to 1e-6)", "ASAP messages",
                "edges ASAP/BSP (whole runs)", "wall s BSP / ASAP", "runs BSP/ASAP"], rows)])


#: the emulation each rank-count group names in its table's title
_SCALE_NETS = {
    "scale": "rank 1 3x, 1 ms / 1 Gbit/s",
    "scale-hetero": "scenario hetero: rank r runs (1, 1.5, 2, 3)[r % 4] times slower, "
                    "1 ms / 1 Gbit/s",
    "scale-transient": "scenario transient: every rank pauses U(20, 100) ms at exponential "
                       "gaps of mean 250 ms, 1 ms / 1 Gbit/s",
}


def _scale_group(g):
    return g == "scale" or g.startswith("scale-")


def scale_md(records):
    """The rank-count runs (group ``scale``, and ``scale-<scenario>`` of
    ``stragglers-scale``): one table per group, named by its scenario; per graph, K and
    mode, time to 1e-6, the run's end (bound), wall seconds, bytes, messages, final error,
    peak RSS per rank."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r.get("ok") and _scale_group(str(r.get("group", ""))):
            groups[r["group"]][(r["graph"], r["ranks"], r["mode"])].append(r)
    return "\n\n".join(_scale_table(grp, groups[grp]) for grp in sorted(groups))


def _scale_table(grp, cells):
    rows = []
    for (g, K, m), rs in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                               kv[0][2] != "bsp")):
        t = _med([_t(r) for r in rs])
        bt = _med([_t(r) for r in cells.get((g, K, "bsp"), [])])
        rss = [max(r.get("peak_rss_mb") or [0]) for r in rs]
        rows.append([g, K, m.upper(), _f(t), _f(bt / t if bt and t and m != "bsp" else None,
                                                ".2f"),
                     _f(_med([r.get("seconds") for r in rs])), _f(_med([_wall(r) for r in rs])),
                     _f(_ratio(_med([(r.get("bytes_to_error") or {}).get(LEVEL)
                                     for r in rs]), 1e6), ".3g"),
                     _f(_med([r.get("bytes_sent") for r in rs]) / 1e6, ".3g"),
                     _f(_med([r.get("messages_sent") for r in rs]), ",.0f"),
                     _f(max((r.get("final_error") or 0.0) for r in rs), ".1e"),
                     f"{_f(max(rss), '.0f')} MB", f"{_f(max(rss) * K / 1024, '.1f')} GB",
                     len(rs)])
    recs = [r for rs in cells.values() for r in rs]
    kind = grp[len("scale-"):] if grp.startswith("scale-") else "persistent"
    net = _SCALE_NETS.get(grp, f"scenario {kind}")
    Ks = ", ".join(str(k) for k in sorted({r["ranks"] for r in recs}))
    return "\n".join([
        f"Rank counts K = {Ks}, {net} ({_clock(recs)} clock; group {grp}):",
        "",
        _table(["graph", "K", "mode", "s to 1e-6", "speed-up BSP/ASAP", "s to the end (bound)",
                "wall s", "MB to 1e-6", "MB sent (run)", "messages (run)", "final L1 error",
                "peak RSS / rank", "K x peak RSS", "runs"], rows)])


def _grid_level(tol):
    """The error level a grid cell is compared at: the smallest of :data:`LEVELS` at or
    above its ``tol`` (the level its runs are asked to reach)."""
    return next((L for L in sorted(LEVELS) if L >= tol * (1 - 1e-9)), max(LEVELS))


def _grid_variant(r):
    if r["mode"] == "bsp":
        return "BSP"
    v = f"ASAP k={r['fanout']} W={r['window']}"
    if r.get("approx"):
        v += f" approx={r['approx']:g}"
    return v + (f" {r['schedule']}" if r.get("schedule") else "")


def grid_rows(records):
    """The runs of ``asapgraph bench --grid`` (group ``grid``): one row per variant (BSP,
    or ASAP with its fanout, window, approx and schedule) of each cell (graph, K, network,
    partition, rebalance, tol), medians over the repetitions; ``speedup`` and
    ``bytes_ratio`` are BSP's median time and bytes to the cell's level (:func:`_grid_level`)
    over the variant's (None for BSP, or when either side did not reach it).  (The grid's
    records were in the JSON only: the Markdown of a grid run showed none of them.)"""
    cells = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r.get("ok") and r.get("group") == "grid":
            rb = r.get("rebalance")   # (a run's record holds the engine's rebalance
            if not isinstance(rb, str):  # report there, a dict; the tag keeps the mode)
                rb = (r.get("tags") or {}).get("rebalance") or "off"
            key = (r["graph"], r["ranks"], r["network"], r.get("partition", "range"), rb,
                   r["tol"])
            cells[key][_grid_variant(r)].append(r)
    rows = []
    for key in sorted(cells, key=lambda k: tuple(str(x) if isinstance(x, str) else x
                                                 for x in k)):
        d = cells[key]
        lv = level_key(_grid_level(key[5]))
        med = {v: (_med([(r.get("time_to_error") or {}).get(lv) for r in rs]),
                   _med([(r.get("bytes_to_error") or {}).get(lv) for r in rs]))
               for v, rs in d.items()}
        bt, bb = med.get("BSP", (None, None))
        for v in sorted(d, key=lambda v: (v != "BSP", v)):
            rs = d[v]
            t, b = med[v]
            rows.append({
                "graph": key[0], "ranks": key[1], "network": key[2], "partition": key[3],
                "rebalance": key[4], "tol": key[5], "level": lv, "variant": v,
                "mode": rs[0]["mode"], "seconds_to_level": t, "bytes_to_level": b,
                "run_seconds": _med([r.get("seconds") for r in rs]),
                "run_bytes": _med([r.get("bytes_sent") for r in rs]),
                "messages": _med([r.get("messages_sent") for r in rs]),
                "rounds": _med([r.get("rounds") for r in rs]),
                "final_error": max((r["final_error"] for r in rs
                                    if r.get("final_error") is not None), default=None),
                "within": all(r.get("within_tolerance") for r in rs),
                "speedup": _ratio(bt, t) if v != "BSP" else None,
                "bytes_ratio": _ratio(bb, b) if v != "BSP" else None,
                "runs": len(rs)})
    return rows


def grid_md(records):
    """The table of :func:`grid_rows` ("" when ``records`` hold no grid runs)."""
    rows = grid_rows(records)
    if not rows:
        return ""
    body = [[r["graph"], r["ranks"], r["network"], r["partition"], r["rebalance"],
             f"{r['tol']:g}", r["variant"], r["level"], _f(r["seconds_to_level"]),
             _f(r["speedup"], ".2f"), _f(r["bytes_to_level"], ".0f"),
             _f(r["bytes_ratio"], ".2f"), _f(r["run_seconds"]), _f(r["run_bytes"], ".0f"),
             _f(r["messages"], ".0f"), _f(r["rounds"], ".0f"), _f(r["final_error"], ".1e"),
             "yes" if r["within"] else "NO", r["runs"]] for r in rows]
    clock = _clock([r for r in records if r.get("ok") and r.get("group") == "grid"])
    return "\n".join([
        f"Every grid run ({clock} clock), medians over repetitions. `L1 level` = the smallest "
        "recorded error level at or above the row's tol; `s to level` / `bytes to level` = "
        "when the true L1 error got (and stayed) there; `speed-up` = BSP's s to level / the "
        "row's, `bytes BSP/row` = BSP's bytes to level / the row's (same graph, K, network, "
        "partition, rebalance and tol); `run s` / `run bytes` = the whole run to its tol.",
        "",
        _table(["graph", "K", "network", "partition", "rebalance", "tol", "variant",
                "L1 level", "s to level", "speed-up", "bytes to level", "bytes BSP/row",
                "run s", "run bytes", "messages", "rounds", "final L1 err", "err <= tol",
                "runs"], body)])


def sections(records):
    """The Markdown of every scenario family present in ``records`` ("" when none)."""
    parts = []
    s = grid_md(records)
    if s:
        parts += ["## Grid runs", "", s, ""]
    s = stragglers_md(records)
    if s:
        parts += ["## Straggler scenarios (issue 14 item 5)", "", s, ""]
    s = scale_md(records)
    if s:
        parts += ["## Rank counts (issue 15 item 3)", "", s, ""]
    return "\n".join(parts)
