"""Issue 15's calibration at K = 2 on 2 cores: the 2-rank grid (rmat:20 and cnr-2000, BSP
and ASAP, 1 ms / 1 Gbit/s emulated) on the host's clock, on the virtual clock charging CPU
time, and on the virtual clock with the compute model; prints each cell's median time to
L1 1e-6 and the ratios virtual / wall.

Usage::

    python benchmarks/bench_clocks_k2.py TREE OUTPREFIX [REPEAT]

``TREE``: the source tree the ranks import (``PYTHONPATH``); JSON goes to
``OUTPREFIX_{wall,cpu,model}.json``.  The wall and CPU-time grids each run under
``flock /tmp/wallclock.lock`` (the model's does not need it); report ``uptime`` beside
the figures: on a loaded host the wall times are not the model's subject.
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
        res.setdefault((r["graph"], r["mode"], c), []).append(
            (t, r["edges_visited"], r.get("within_tolerance"), r.get("final_error")))
    print(f"{c}: load before {la:.1f}", file=sys.stderr)
print("graph     mode  wall (median, runs)  cpu  model  cpu/wall  model/wall  within")
for g in ("rmat:20", "cnr-2000"):
    for m in ("bsp", "asap"):
        w = [x[0] for x in res[(g, m, "wall")]]
        meds = {c: statistics.median(x[0] for x in res[(g, m, c)]) for c in clocks}
        ok = all(x[2] for c in clocks for x in res[(g, m, c)])
        print(f"{g:9s} {m:5s} {meds['wall']:.3f} {[round(x, 3) for x in w]}  "
              f"{meds['cpu']:.3f}  {meds['model']:.3f}  "
              f"{meds['cpu'] / meds['wall']:.2f}  {meds['model'] / meds['wall']:.2f}  {ok}")
