"""PNG plots of benchmark records (matplotlib, Agg backend; imported only when plotting).

Each function takes the list of records of :func:`asapgraph.bench.runner.run_specs` and
an output directory, writes zero or more PNG files, and returns their paths (nothing is
drawn, and nothing returned, when the records hold no data for that plot).
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

__all__ = ["error_vs_time", "error_vs_bytes", "speedup_vs_straggler", "bytes_vs_fanout",
           "rounds_vs_gap", "all_plots", "slug"]

COLORS = {"bsp": "tab:blue", "asap": "tab:orange"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def slug(text):
    import re

    return re.sub(r"[^A-Za-z0-9]+", "-", str(text)).strip("-").lower()


def _ok(records, group=None):
    return [r for r in records if r.get("ok") and (group is None or r.get("group") == group)]


def _save(fig, path):
    from asapgraph.graph.io.atomic import atomic_write

    fig.tight_layout()
    with atomic_write(path) as f:   # (as the JSON and the Markdown: a Ctrl-C during
        fig.savefig(f, dpi=90, format="png")   # savefig left a truncated PNG)
    _plt().close(fig)
    return path


def _by_graph_net(recs):
    out = defaultdict(list)
    for r in recs:
        out[(r["graph"], r["ranks"], r["network"])].append(r)
    return out


def error_vs_time(records, outdir, group="rq1"):
    """L1 error vs seconds, BSP and ASAP on the same axes (true error; bound when absent)."""
    plt = _plt()
    paths = []
    for (g, K, net), recs in _by_graph_net(_ok(records, group)).items():
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        seen = set()
        for r in sorted(recs, key=lambda r: (r["mode"], r["tol"], r["repeat"])):
            tr = r.get("error_trace") or []
            if not tr:
                continue
            m = r["mode"]
            lab = None
            key = (m, r["tol"]) if m == "asap" else (m,)
            if key not in seen:
                seen.add(key)
                kind = "true error" if str(r.get("error_kind", "")).startswith("true") \
                    else "bound"
                lab = ("BSP (true error)" if m == "bsp" else f"ASAP {kind}, tol {r['tol']:g}")
            ls = "-" if m == "bsp" else {1e-4: ":", 1e-6: "-", 1e-8: "--"}.get(r["tol"], "-.")
            ax.plot([s[0] for s in tr], [max(s[1], 1e-16) for s in tr], ls, color=COLORS[m],
                    alpha=0.9 if r["repeat"] == 0 else 0.35, label=lab, lw=1.4)
            if m == "asap" and r.get("final_error") is not None:
                ax.plot([r["seconds"]], [max(r["final_error"], 1e-16)], "o", color=COLORS[m],
                        ms=5, label="ASAP true final error" if ("fe",) not in seen else None)
                seen.add(("fe",))
        ax.set_yscale("log")
        ax.set_xlabel("seconds since start of the run (loading excluded)")
        ax.set_ylabel("L1 error vs 1e-13 reference")
        ax.set_title(f"{g}, {K} ranks, network: {net}", fontsize=10)
        ax.axhline(1e-6, color="grey", lw=0.6, ls=":")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
        paths.append(_save(fig, Path(outdir) / f"error_vs_time_{slug(g)}_{slug(net)}.png"))
    return paths


def error_vs_bytes(records, outdir, group="rq1"):
    """L1 error vs bytes sent: BSP per superstep, ASAP one point per tolerance."""
    plt = _plt()
    paths = []
    for (g, K, net), recs in _by_graph_net(_ok(records, group)).items():
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        bsp = [r for r in recs if r["mode"] == "bsp"]
        for i, r in enumerate(bsp[:1]):
            tr = r.get("error_trace") or []
            ax.plot([s[2] / 1e6 for s in tr], [max(s[1], 1e-16) for s in tr], "-o", ms=3,
                    color=COLORS["bsp"], label="BSP (true error per superstep)")
        asap = sorted((r for r in recs if r["mode"] == "asap"), key=lambda r: r["tol"])
        for r in asap[:1]:  # the longest run: its error trace carries the bytes sent by then
            tr = [s for s in r.get("error_trace") or [] if len(s) > 2 and s[2] is not None]
            if tr:
                ax.plot([s[2] / 1e6 for s in tr], [max(s[1], 1e-16) for s in tr], "-o", ms=3,
                        color=COLORS["asap"], alpha=0.6,
                        label=f"ASAP (true error at each wave, tol {r['tol']:g})")
        pts = defaultdict(list)
        for r in recs:
            if r["mode"] == "asap" and r.get("final_error") is not None:
                pts[r["tol"]].append((r["bytes_sent"] / 1e6, r["final_error"],
                                       r.get("error_bound", r["residual"])))
        if pts:
            tols = sorted(pts, reverse=True)
            xs = [statistics.median(p[0] for p in pts[t]) for t in tols]
            ys = [max(statistics.median(p[1] for p in pts[t]), 1e-16) for t in tols]
            bs = [statistics.median(p[2] for p in pts[t]) for t in tols]
            ax.plot(xs, ys, "-s", color=COLORS["asap"], label="ASAP true final error (one run per tol)")
            ax.plot(xs, bs, ":", color=COLORS["asap"], alpha=0.6, label="ASAP certified bound")
        ax.set_yscale("log")
        ax.set_xlabel("MB sent (all ranks)")
        ax.set_ylabel("L1 error vs 1e-13 reference")
        ax.set_title(f"{g}, {K} ranks, network: {net}", fontsize=10)
        ax.axhline(1e-6, color="grey", lw=0.6, ls=":")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        paths.append(_save(fig, Path(outdir) / f"error_vs_bytes_{slug(g)}_{slug(net)}.png"))
    return paths


def _t6(r, level="1e-06"):
    t = (r.get("time_to_error") or {}).get(level)
    return t


def speedup_vs_straggler(records, outdir, group="rq5", level="1e-06"):
    """BSP time / ASAP time to the error level, vs the straggler factor (one line per window
    and ASAP schedule)."""
    plt = _plt()
    recs = _ok(records, group)
    if not recs:
        return []
    from asapgraph.bench.scenarios import straggler_factor

    bsp = defaultdict(list)
    asap = defaultdict(list)
    wall = defaultdict(list)  # real seconds of the runs (virtual clock: printed beside)
    virtual = all(r.get("clock") == "virtual" for r in recs)
    for r in recs:
        f = straggler_factor(r.get("straggler"))
        t = _t6(r, level)
        if t is None:
            continue
        if r["mode"] == "bsp":
            bsp[(r["graph"], f)].append(t)
        else:  # one line per window and ASAP schedule
            asap[(r["graph"], r["window"], r.get("schedule") or "", f)].append(t)
        wall[(r["graph"], r["mode"], f)].append(r.get("wall_seconds", r.get("seconds")))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    drawn = False
    for (g, w, sch) in sorted({k[:3] for k in asap}):
        fs = sorted(f for (gg, ww, ss, f) in asap if (gg, ww, ss) == (g, w, sch)
                    and (g, f) in bsp)
        if not fs:
            continue
        sp = [statistics.median(bsp[(g, f)]) / statistics.median(asap[(g, w, sch, f)])
              for f in fs]
        ax.plot(fs, sp, "-o", label=f"{g}, window {w}" + (f", {sch}" if sch else ""))
        if virtual:  # the wall-clock seconds of the two runs beside each point
            for f, y in zip(fs, sp):
                bw = statistics.median(wall[(g, "bsp", f)])
                aw = statistics.median(wall[(g, "asap", f)])
                ax.annotate(f"wall {bw:.1f}/{aw:.1f} s", (f, y), fontsize=6,
                            xytext=(3, 4), textcoords="offset points")
        drawn = True
    if not drawn:
        plt.close(fig)
        return []
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("straggler factor of rank 1")
    ax.set_ylabel(f"speedup: BSP / ASAP time to L1 {float(level):g}"
                  + (" (virtual s)" if virtual else ""))
    if virtual:
        ax.set_title("virtual time; beside each point: wall s of the BSP / ASAP runs",
                     fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return [_save(fig, Path(outdir) / "speedup_vs_straggler.png")]


def bytes_vs_fanout(records, outdir, group="rq2"):
    """MB sent by ASAP (to its tol) vs fanout k, with BSP's bytes as a reference line."""
    plt = _plt()
    recs = [r for r in _ok(records, group) if not r.get("approx")]
    asap = defaultdict(list)
    bsp = defaultdict(list)
    for r in recs:
        if r["mode"] == "asap":
            asap[(r["graph"], r["ranks"], r["fanout"])].append(r["bytes_sent"] / 1e6)
        else:
            b = (r.get("bytes_to_error") or {}).get("1e-06")
            if b is not None:
                bsp[(r["graph"], r["ranks"])].append(b / 1e6)
    if not asap:
        return []
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for (g, K) in sorted({(k[0], k[1]) for k in asap}):
        ks = sorted(k for (gg, KK, k) in asap if gg == g and KK == K)
        ax.plot(ks, [statistics.median(asap[(g, K, k)]) for k in ks], "-o", color=COLORS["asap"],
                label=f"ASAP {g} K={K} (run to tol)")
        if (g, K) in bsp:
            ax.axhline(statistics.median(bsp[(g, K)]), color=COLORS["bsp"], ls="--",
                       label=f"BSP {g} K={K} (to L1 1e-6)")
    ax.set_xlabel("fanout k (peers per round of the stochastic reduce)")
    ax.set_ylabel("MB sent (all ranks)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return [_save(fig, Path(outdir) / "bytes_vs_fanout.png")]


def rounds_vs_gap(records, outdir, group="rq3"):
    """ASAP rounds to converge vs the spectral gap 1 - sigma2(P) of the reduce graph."""
    plt = _plt()
    recs = [r for r in _ok(records, group) if r["mode"] == "asap" and r.get("spectral_gap") is not None]
    if not recs:
        return []
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for K in sorted({r["ranks"] for r in recs}):
        rr = sorted((r for r in recs if r["ranks"] == K), key=lambda r: r["spectral_gap_mean"]
                    if r.get("spectral_gap_mean") is not None else r["spectral_gap"])
        xs = [r.get("spectral_gap_mean", r["spectral_gap"]) for r in rr]
        ax.plot(xs, [r["rounds"] for r in rr], "o-", label=f"K={K} ranks ({rr[0]['graph']})")
        for r, x in zip(rr, xs):
            ax.annotate(f"k={r['fanout']}", (x, r["rounds"]), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
    ax.set_xlabel("spectral gap 1 - sigma2(P), mean over the schedule period")
    ax.set_ylabel("rounds of the slowest rank")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return [_save(fig, Path(outdir) / "rounds_vs_gap.png")]


def all_plots(records, outdir):
    """Every plot the records allow; returns the list of written paths."""
    Path(outdir).mkdir(parents=True, exist_ok=True)
    paths = []
    for fn in (error_vs_time, error_vs_bytes, speedup_vs_straggler, bytes_vs_fanout, rounds_vs_gap):
        paths += fn(records, outdir)
    return paths
