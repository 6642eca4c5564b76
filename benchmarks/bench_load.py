"""Loading figures: text parse speed vs pyarrow/pandas, binary reload, peak RSS per edge.

Usage::

    python benchmarks/bench_load.py                # rmat:18 (4.2M edges, ~60 MB of text)
    python benchmarks/bench_load.py --scale 22     # the issue's figure (~67M edges, ~1.2 GB)
    python benchmarks/bench_load.py --scale 22 --cache-dir /tmp \
        --methods polars_csv,asap_load_graph,load_pagerank --before /path/to/other/checkout

Writes (or reuses) ``rmat_S_EF.txt`` in the cache directory (default
``benchmarks/results/cache``, ignored by git): ``src<TAB>dst`` lines after a ``#``
header, the R-MAT graph of :mod:`asapgraph.graph.generators` (Graph500 parameters,
permuted).  Every measurement runs in a fresh subprocess so that its peak RSS
(``ru_maxrss``) is its own; the median of ``--repeat`` runs is reported, with the
ratios against the peers measured in the same run (the machine may be busy).

Methods
-------
asap_read_edges    asapgraph.graph.io.read_edges -> two int64 arrays (like the peers)
asap_load_graph    asapgraph.graph.io.load_graph -> in-CSR Graph (parse + remap + build)
pyarrow_csv        pyarrow.csv.read_csv -> two int64 numpy arrays
pandas_c           pandas.read_csv(engine="c") -> two int64 numpy arrays
polars_csv         polars.read_csv -> two int64 numpy arrays (issue 13's reference reader)
binary_mmap        asapgraph.graph.io.load_binary (memory map only)
binary_touch       load_binary + read every array once (pages faulted in)
load_pagerank      load_graph + asapgraph.programs.pagerank.pagerank (peak RSS per edge)
baseline           interpreter + imports only (RSS floor)

``--before DIR`` adds ``METHOD@before`` runs of every asapgraph method with ``DIR`` (a
checkout with its extensions built in place) first on ``PYTHONPATH``: before/after in one
run, interleaved.  The summary prints load_graph's MB/s over polars' and the peak bytes
per edge of load + PageRank (issue 13: at least 2x, at most 16 bytes per edge).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rss_now_bytes():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def peak_rss_bytes():
    """Peak resident set of this process (VmHWM; ru_maxrss survives exec on Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_rmat_text(path, scale, ef, seed):
    import numpy as np

    from asapgraph.graph import generators

    src, dst = generators.rmat(scale, ef, seed)
    tmp = str(path) + ".part"
    with open(tmp, "wb") as f:
        f.write(f"# rmat scale {scale} edge factor {ef} seed {seed}: {src.size} edges\n"
                "# FromNodeId\tToNodeId\n".encode())
        step = 1 << 22
        for k in range(0, src.size, step):
            s = src[k:k + step].astype(str)
            d = dst[k:k + step].astype(str)
            lines = np.char.add(np.char.add(s, "\t"), d)
            f.write(("\n".join(lines.tolist()) + "\n").encode())
    os.replace(tmp, path)
    return src.size


def child(method, path, binpath):
    """One measurement; prints a JSON line."""
    import numpy as np

    # imports are not timed (but their memory is in every RSS figure: see baseline)
    import asapgraph.graph.io  # noqa: F401
    import asapgraph.graph.core  # noqa: F401
    if method in ("baseline", "pyarrow_csv"):
        import pyarrow.csv  # noqa: F401
    if method in ("baseline", "pandas_c"):
        import pandas  # noqa: F401
    if method == "polars_csv":
        import polars  # noqa: F401
    if method == "load_pagerank":
        import asapgraph.programs.pagerank  # noqa: F401
    rss0 = rss_now_bytes()
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    m = None
    if method == "baseline":
        pass
    elif method == "asap_read_edges":
        from asapgraph.graph.io import read_edges

        e = read_edges(path)
        m = len(e)
    elif method == "asap_load_graph":
        from asapgraph.graph.io import load_graph

        g = load_graph(path)
        m = g.m
    elif method == "pyarrow_csv":
        import pyarrow as pa
        import pyarrow.csv as pc

        t = pc.read_csv(path, read_options=pc.ReadOptions(skip_rows=2, column_names=["s", "d"]),
                        parse_options=pc.ParseOptions(delimiter="\t"),
                        convert_options=pc.ConvertOptions(column_types={"s": pa.int64(),
                                                                        "d": pa.int64()}))
        s = t.column("s").to_numpy()
        d = t.column("d").to_numpy()
        m = s.size
    elif method == "pandas_c":
        import pandas as pd

        df = pd.read_csv(path, sep="\t", comment="#", header=None, names=["s", "d"],
                         dtype=np.int64, engine="c")
        s = df["s"].to_numpy()
        d = df["d"].to_numpy()
        m = s.size
    elif method == "polars_csv":
        import polars as pl

        df = pl.read_csv(path, separator="\t", has_header=False, comment_prefix="#",
                         new_columns=["s", "d"],
                         schema_overrides={"column_1": pl.Int64, "column_2": pl.Int64})
        s = df["s"].to_numpy()
        d = df["d"].to_numpy()
        m = min(s.size, d.size)
    elif method == "binary_mmap":
        from asapgraph.graph.io import load_binary

        g = load_binary(binpath)
        m = g.m
    elif method == "binary_touch":
        from asapgraph.graph.io import load_binary

        g = load_binary(binpath)
        tot = 0
        for a in (g.indptr, g.indices, g.out_degree, g.ids):
            if a is not None:
                tot += int(np.asarray(a[::512]).sum())  # one read per page
        m = g.m
    elif method == "load_pagerank":
        from asapgraph.graph.io import load_graph
        from asapgraph.programs.pagerank import pagerank

        g = load_graph(path)
        pagerank(g, tol=1e-6)
        m = g.m
    else:
        raise SystemExit(f"unknown method {method}")
    dt = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    print(json.dumps({"method": method, "time": dt, "cpu": cpu, "rss": peak_rss_bytes(),
                      "rss0": rss0, "m": m}))


def run_child(method, path, binpath, env, before=None):
    base, _, tag = method.partition("@")
    if tag:  # METHOD@before: the other checkout's asapgraph first on the path
        env = dict(env, PYTHONPATH=os.pathsep.join(
            x for x in (before, env.get("PYTHONPATH")) if x))
    out = subprocess.run([sys.executable, __file__, "--child", base, str(path), str(binpath)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"method": method, "error": out.stderr.strip().splitlines()[-1:]}
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["method"] = method
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache-dir", default=str(HERE / "results" / "cache"))
    ap.add_argument("--methods", default="baseline,asap_read_edges,asap_load_graph,pyarrow_csv,"
                    "pandas_c,binary_mmap,binary_touch,load_pagerank")
    ap.add_argument("--child", nargs=3, metavar=("METHOD", "PATH", "BINPATH"), help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=None, help="OMP_NUM_THREADS for the runs")
    ap.add_argument("--write", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument("--before", default=None, metavar="DIR",
                    help="also run the asapgraph methods from this checkout (METHOD@before)")
    a = ap.parse_args(argv)
    if a.write:
        write_rmat_text(a.write[0], int(a.write[1]), int(a.write[2]), int(a.write[3]))
        return
    if a.child:
        child(*a.child)
        return
    cache = Path(a.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"rmat_{a.scale}_{a.edge_factor}_{a.seed}.txt"
    if not path.exists():
        print(f"writing {path} ...", flush=True)
        # in a subprocess: keeps this (parent) process small
        subprocess.run([sys.executable, __file__, "--write", str(path), str(a.scale),
                        str(a.edge_factor), str(a.seed)], check=True)
    binpath = path.with_suffix(".asg")
    if not binpath.exists():
        subprocess.run([sys.executable, "-c", "import sys; from asapgraph.graph.io import load_graph, "
                        "save_binary; save_binary(load_graph(sys.argv[1]), sys.argv[2])",
                        str(path), str(binpath)], check=True)
    size = path.stat().st_size
    env = dict(os.environ)
    if a.threads:
        env["OMP_NUM_THREADS"] = str(a.threads)
    # page cache warm for everybody
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass
    results = {}
    methods = [x for x in a.methods.split(",") if x]
    if a.before:
        methods += [f"{x}@before" for x in methods
                    if x.startswith(("asap_", "binary_", "load_"))]
    load0 = os.getloadavg()[0]
    for r in range(a.repeat):
        for mth in methods:
            res = run_child(mth, path, binpath, env, a.before)
            results.setdefault(mth, []).append(res)
    print(f"\nrmat:{a.scale} edge factor {a.edge_factor}: text {size / 1e6:,.1f} MB, "
          f"binary {binpath.stat().st_size / 1e6:,.1f} MB; {os.cpu_count()} cpus, "
          f"median of {a.repeat} (fresh process each)")
    med = {}
    m_edges = None
    for mth, rs in results.items():
        ok = [x for x in rs if "error" not in x]
        if not ok:
            print(f"{mth:24s} FAILED: {rs[0].get('error')}")
            continue
        med[mth] = (statistics.median(x["time"] for x in ok), max(x["rss"] for x in ok),
                    max(x["rss"] - x["rss0"] for x in ok),
                    statistics.median(x["cpu"] for x in ok))
        m_edges = m_edges or next((x["m"] for x in ok if x["m"]), None)
    ref = med.get("pyarrow_csv", (None,))[0]
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        print(f"WARNING: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus: "
              "the machine is busy, wall times are inflated and noisy")
    pandas_t = med.get("pandas_c", (None,))[0]
    text_parse = med.get("asap_load_graph", (None,))[0]
    print(f"m = {m_edges or 0:,} edges; RSS 'own' = peak minus the RSS after imports")
    print("wall time, MB/s (wall) and ratios (wall); CPU s = user+sys of the process")
    print(f"{'method':24s} {'time s':>8s} {'CPU s':>7s} {'MB/s':>8s} {'peak RSS MB':>12s} "
          f"{'own MB':>8s} {'own B/edge':>10s} {'vs pyarrow':>10s} {'vs pandas':>10s}")
    for mth, (t, rss, own, cpu) in med.items():
        if mth == "baseline":
            continue
        mbps = size / 1e6 / t
        per = own / m_edges if m_edges else float("nan")
        ratio = (ref / t) if ref else float("nan")
        ratio2 = (pandas_t / t) if pandas_t else float("nan")
        print(f"{mth:24s} {t:8.3f} {cpu:7.2f} {mbps:8.0f} {rss / 1e6:12.1f} {own / 1e6:8.1f} "
              f"{per:10.1f} "
              f"{ratio:9.2f}x {ratio2:9.2f}x")
    print(f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    pol = med.get("polars_csv", (None,))[0]
    for tag in ("", "@before"):
        lg = med.get("asap_load_graph" + tag)
        lp = med.get("load_pagerank" + tag)
        if pol and lg:
            print(f"load_graph{tag}: {size / 1e6 / lg[0]:,.0f} MB/s = {pol / lg[0]:.2f}x "
                  f"polars.read_csv ({size / 1e6 / pol:,.0f} MB/s)")
        if lp and m_edges:
            print(f"load + PageRank{tag}: peak {lp[2] / m_edges:.1f} bytes per edge "
                  f"(own RSS, max of {a.repeat})")
    if "asap_load_graph@before" in med and "asap_load_graph" in med:
        print(f"load_graph before/after: {med['asap_load_graph@before'][0] / text_parse:.2f}x "
              f"wall, {med['asap_load_graph@before'][3] / med['asap_load_graph'][3]:.2f}x CPU")
    if "binary_touch" in med and text_parse:
        print(f"binary reload speed-up over text load_graph: "
              f"mmap {text_parse / med['binary_mmap'][0]:.0f}x, "
              f"touching every page {text_parse / med['binary_touch'][0]:.1f}x")


if __name__ == "__main__":
    main()
