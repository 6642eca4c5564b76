"""Helpers for the MPI tests: launch ``mpiexec -n K`` subprocesses with a timeout."""
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def mpiexec_path():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


@pytest.fixture
def mpirun(tmp_path):
    """``mpirun(K, args, timeout)`` -> CompletedProcess (cwd=tmp_path, env passed through)."""
    exe = mpiexec_path()
    if exe is None:
        pytest.skip("no mpiexec available")

    def run(k, args, timeout=120, env=None):
        e = dict(os.environ)
        if env:
            e.update(env)
        return subprocess.run([exe, "-n", str(k), *args], cwd=tmp_path, env=e,
                              capture_output=True, text=True, timeout=timeout)

    return run


@pytest.fixture
def cli():
    """``cli(args, cwd, timeout, env)``: ``python -m asapgraph ARGS`` in a fresh process
    (run from ``cwd``, outside the source tree, so the installed package runs), with a
    timeout so that a hang fails instead of blocking the suite."""

    def run(args, cwd, timeout=240, env=None):
        return subprocess.run([sys.executable, "-m", "asapgraph", *map(str, args)], cwd=cwd,
                              capture_output=True, text=True, timeout=timeout, env=env)

    return run


@pytest.fixture
def scores():
    """``scores(path)``: a ``node,value`` result file as ``{node: value}`` (node as text)."""

    def read(path):
        with open(path) as f:
            rows = list(csv.reader(f))
        return {r[0]: float(r[1]) for r in rows[1:]}

    return read


@pytest.fixture
def pagerank_run(cli, scores):
    """``pagerank_run(tmp_path, name, args, env=None, graph="rmat:12")``: ``(--json, the
    ranks by vertex id)`` of ``asapgraph pagerank GRAPH ARGS --json -q -o NAME.csv`` with
    ``env`` added to this process's environment; fails on a non-zero exit."""
    import numpy as np

    def run(tmp_path, name, args, env=None, graph="rmat:12"):
        out = tmp_path / f"{name}.csv"
        e = dict(os.environ)
        e.update(env or {})
        r = cli(["pagerank", graph, *args, "--json", "-q", "-o", out], tmp_path,
                timeout=300, env=e)
        assert r.returncode == 0, r.stderr
        x = scores(out)
        return json.loads(r.stdout), np.array([x[str(v)] for v in range(len(x))])

    return run


@pytest.fixture
def refused():
    """``refused(result, *words)``: the one-line refusal (exit 2) naming ``words``."""

    def check(r, *words):
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, r.stderr
        assert all(w in lines[0] for w in words), lines

    return check


@pytest.fixture
def env_refused(cli, refused):
    """``env_refused(tmp_path, name, value)``: a 2-rank ASAP run with the knob ``name`` set
    to ``value`` is refused in one line naming it (exit 2)."""

    def check(tmp_path, name, value):
        e = dict(os.environ)
        e[name] = value
        r = cli(["pagerank", "rmat:10", "--np", "2", "--mode", "asap", "-q"], tmp_path,
                timeout=300, env=e)
        refused(r, name)

    return check


@pytest.fixture
def refused_alike(cli):
    """``refused_alike(cwd, args, *words, configs=..., output=None, env=None)``: on every
    configuration (extra arguments such as ``["--np", "2", "--mode", "asap"]``), ``args
    -q`` exits 2 with one stderr line naming ``words``, and that line is the same
    everywhere; returns it.  ``output``: also ``-o output``, which must not be written;
    ``env``: variables added to the environment."""

    def check(cwd, args, *words, configs, output=None, env=None):
        seen = set()
        out = None if output is None else Path(cwd) / output
        full = None if env is None else {**os.environ, **env}
        for extra in configs:
            r = cli([*args, "-q", *(["-o", out] if out else []), *extra], cwd, timeout=180,
                    env=full)
            lines = r.stderr.strip().splitlines()
            assert r.returncode == 2 and len(lines) == 1, (extra, r.returncode, r.stderr[-2000:])
            assert all(w in lines[0] for w in words), (extra, lines)
            assert out is None or not out.exists(), extra
            seen.add(lines[0])
        assert len(seen) == 1, seen
        return seen.pop()

    return check


@pytest.fixture
def run_cases(mpirun, tmp_path):
    """Run the worker on a list of cases with K ranks; returns its JSON records."""

    def run(k, cases, timeout=180, env=None):
        cf = tmp_path / f"cases_{k}.json"
        of = tmp_path / f"out_{k}.json"
        cf.write_text(json.dumps(cases))
        r = mpirun(k, [sys.executable, str(HERE / "_worker.py"), str(cf), str(of)],
                   timeout=timeout, env=env)
        assert r.returncode == 0, f"rc={r.returncode}\nstdout:{r.stdout[-3000:]}\nstderr:{r.stderr[-3000:]}"
        return json.loads(of.read_text())

    return run
