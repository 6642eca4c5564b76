"""Starting K ranks: find ``mpiexec`` and re-run the same command under it.

``asapgraph pagerank INPUT --np K`` (not already under a launcher) runs
``mpiexec -n K <this python> -m asapgraph pagerank INPUT ...`` with the same options
(minus ``--np``/``--mpiexec``) and returns its exit status.  The ``mpiexec`` is, in
order: ``--mpiexec PATH``, the one installed next to this Python (the MPICH wheel puts
it in the environment's ``bin``), the one on ``PATH``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from ..errors import InputError

__all__ = ["find_mpiexec", "rebuild_argv", "launch"]


def find_mpiexec(explicit=None):
    """Path of the mpiexec to use; raises InputError when there is none."""
    if explicit:
        p = shutil.which(explicit) or (explicit if os.access(explicit, os.X_OK) else None)
        if not p:
            raise InputError(explicit, None, "mpiexec not found or not executable")
        return p
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    p = shutil.which("mpiexec") or shutil.which("mpirun")
    if not p:
        raise InputError(None, None, "no mpiexec found (install the 'mpich' wheel or pass "
                                     "--mpiexec PATH)")
    return p


# (attribute, option, kind): kind "flag" (store_true), "val", "list" (append)
_OPTIONS = [
    ("weighted", "--weighted", "flag"), ("undirected", "--undirected", "flag"),
    ("weight_col", "--weight-col", "val"), ("output", "--output", "val"),
    ("top", "--top", "val"), ("json", "--json", "flag"), ("quiet", "--quiet", "flag"),
    ("tol", "--tol", "val"), ("max_iter", "--max-iter", "val"),
    ("allow_unconverged", "--allow-unconverged", "flag"), ("threads", "--threads", "val"),
    ("alpha", "--alpha", "val"), ("personalization", "--personalization", "val"),
    ("dangling", "--dangling", "val"), ("mode", "--mode", "val"),
    ("partition", "--partition", "val"), ("fanout", "--fanout", "val"),
    ("window", "--window", "val"), ("approx", "--approx", "val"), ("seed", "--seed", "val"),
    ("latency", "--latency", "val"), ("bandwidth", "--bandwidth", "val"),
    ("jitter", "--jitter", "val"), ("straggler", "--straggler", "list"),
    ("emulate_seed", "--emulate-seed", "val"),
]


def rebuild_argv(args, command="pagerank"):
    """The command line equivalent to ``args`` without ``--np``/``--mpiexec``."""
    out = [command, str(args.input)]
    for attr, opt, kind in _OPTIONS:
        v = getattr(args, attr, None)
        if v is None or v is False:
            continue
        if kind == "flag":
            out.append(opt)
        elif kind == "list":
            for x in v:
                out += [opt, str(x)]
        else:
            if isinstance(v, float):
                v = repr(v)
            if isinstance(v, str) and attr in ("output", "personalization", "dangling") \
                    and not os.path.isabs(v):
                v = os.path.abspath(v)  # ranks start in the same cwd, but be explicit
            out += [f"{opt}={v}"]
    return out


def launch(args, command="pagerank"):
    """Run the command under ``mpiexec -n args.np``; returns mpiexec's exit status."""
    exe = find_mpiexec(getattr(args, "mpiexec", None))
    cmd = [exe, "-n", str(int(args.np)), sys.executable, "-m", "asapgraph",
           *rebuild_argv(args, command)]
    env = dict(os.environ)
    env["ASAPGRAPH_LAUNCHED"] = "1"
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return subprocess.call(cmd, env=env)
    except KeyboardInterrupt:
        return 130
