"""Issue 15's calibration at K = 2 on 2 cores: the 2-rank grid (rmat:20 and cnr-2000, BSP
and ASAP, 1 ms / 1 Gbit/s emulated) on the host's clock, on the virtual clock charging CPU
time, and on the virtual clock with the compute model; prints each cell's median time to
L1 1e-6 and the ratios virtual / wall.

Usage::

    python benchmarks/bench_clocks_k2.py TREE OUTPREFIX [REPEAT]

``TREE``: the source tree the ranks import (``PYTHONPATH``); JSON goes to
``OUTPREFIX_{wall,cpu,model}.json``.  The wall and CPU-time grids each run under
``flock /tmp/wallclock.lock`` (the model's does not need it); report ``uptime`` beside
the figures: on a loaded host the wall times are not the model's subject.  The last
column is the wall runs' run-queue wait (the worse rank's, from each record's ``host``):
a wall run whose rank waited for a CPU measured the host's load.  Prefer
``bench_clocks_k2_paired.py`` (the clocks interleaved) for the ratio.
"""
import json, os, statistics, subprocess, sys
if len(sys.argv) not in (3, 4):
    sys.exit("usage: python benchmarks/bench_clocks_k2.py TREE OUTPREFIX [REPEAT]")
tree, out = sys.argv[1], sys.argv[2]
rep = sys.argv[3] if len(sys.argv) > 3 else "5"
env = dict(os.environ, PYTHONPATH=tree, ASAPGRAPH_SHARED_DATASETS="/work/shared/datasets")
base = ["asapgraph", "bench", "--grid", "--graphs", "rmat:20,cnr-2000", "--ranks", "2", "--modes",
        "bsp,asap", "--latency", "0.001", "--bandwidth", "125e6", "--repeat", rep, "--no-peers",
        "--outdir", out + "_o", "--markdown", out + "_o/x.md", "--quiet"]
clocks = {"wall": ["--clock", "wall"], "cpu": ["--clock", "virtual"],
          "model": ["--clock", "virtual", "--compute", "model"]}
res = {}
for c, extra in clocks.items():
    js = f"{out}_{c}.json"
    cmd = base + extra + ["--json-out", js]
    if c != "model":
        cmd = ["flock", "/tmp/wallclock.lock"] + cmd
    la = os.getloadavg()[0]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    for r in json.load(open(js))["records"]:
        t = (r.get("time_to_error") or {}).get("1e-06")
        rq = max((h or {}).get("run_delay_s", 0.0) for h in (r.get("host") or [None]))
        res.setdefault((r["graph"], r["mode"], c), []).append(
            (t, r["edges_visited"], r.get("within_tolerance"), r.get("final_error"), rq))
    print(f"{c}: load before {la:.1f}", file=sys.stderr)
print("graph     mode  wall (median, runs)  cpu  model  cpu/wall  model/wall  within  "
      "wall runs' run-queue wait, worse rank, ms (median/max)")
for g in ("rmat:20", "cnr-2000"):
    for m in ("bsp", "asap"):
        w = [x[0] for x in res[(g, m, "wall")]]
        meds = {c: statistics.median(x[0] for x in res[(g, m, c)]) for c in clocks}
        ok = all(x[2] for c in clocks for x in res[(g, m, c)])
        rq = [x[4] for x in res[(g, m, "wall")]]
        print(f"{g:9s} {m:5s} {meds['wall']:.3f} {[round(x, 3) for x in w]}  "
              f"{meds['cpu']:.3f}  {meds['model']:.3f}  "
              f"{meds['cpu'] / meds['wall']:.2f}  {meds['model'] / meds['wall']:.2f}  {ok}  "
              f"{1e3 * statistics.median(rq):.1f}/{1e3 * max(rq):.1f}")
