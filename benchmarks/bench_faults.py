"""Fault handling of ``--np`` jobs, timed (see asapgraph/comm/watchdog.py).

a: seconds until every process of an ``asapgraph pagerank ... --np 2`` job is gone after
   SIGKILL of the launcher;
b: the same with mpiexec SIGSTOPped first (it cannot clean up): the ranks' supervisors
   alone end the ranks;
c: seconds from ``kill -9`` of rank 1 of 3 to the launcher's exit (status 4, one line).

5 runs of each, interleaved; medians.  ``python benchmarks/bench_faults.py`` (Linux).
"""
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mpi"))
from test_dist_faults import LONG, _env_of, _job_processes, _ranks  # noqa: E402

def start(k):
    tok = f"measure-{uuid.uuid4().hex}"
    p = subprocess.Popen([sys.executable, "-m", "asapgraph", *LONG, "--np", str(k)], cwd="/tmp",
                         env=dict(os.environ, ASAPGRAPH_FAULT_TEST_TOKEN=tok),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while len(_ranks(_job_processes(tok), p.pid)) < k:
        time.sleep(0.05)
    time.sleep(1.0)
    return p, tok

def cleanup(tok):
    for q in _job_processes(tok):
        try: os.kill(q, 9)
        except OSError: pass

def main():
    res = {"a": [], "b": [], "c": []}
    for i in range(5):
        for sc in "abc":
            p, tok = start(2 if sc != "c" else 3)
            try:
                if sc == "b":
                    m = [q for q, v in _job_processes(tok).items() if v[1] == p.pid][0]
                    os.kill(m, signal.SIGSTOP)
                if sc in "ab":
                    t0 = time.time(); p.kill(); p.wait()
                    while True:
                        left = {q: v for q, v in _job_processes(tok).items()
                                if sc == "a" or v[2].startswith("python")}
                        if not left or time.time() - t0 > 10: break
                        time.sleep(0.01)
                    res[sc].append(time.time() - t0 if not left else float("inf"))
                else:
                    v = [q for q in _ranks(_job_processes(tok), p.pid) if _env_of(q, "PMI_RANK") == "1"][0]
                    t0 = time.time(); os.kill(v, 9); p.communicate(timeout=60)
                    res[sc].append(time.time() - t0)
                    assert p.returncode == 4
            finally:
                cleanup(tok)
                if p.poll() is None: p.kill(); p.wait()
    for k, v in res.items():
        print(k, "median %.3f s  max %.3f s" % (statistics.median(v), max(v)), [round(x, 3) for x in v])


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(prog="bench_faults.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
