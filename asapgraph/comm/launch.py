"""Starting K ranks: find ``mpiexec`` and re-run the same command under it.

``asapgraph pagerank INPUT --np K`` (not already under a launcher) runs
``mpiexec -n K <this python> -m asapgraph pagerank INPUT ...`` with the same options
(minus ``--np``/``--mpiexec``) and returns its exit status (:func:`run_ranks`: the
ranks end when the launcher dies, and a rank that dies is named on stderr, see
:mod:`.watchdog`).  The ``mpiexec`` is, in
order: ``--mpiexec PATH``, the one installed next to this Python (the MPICH wheel puts
it in the environment's ``bin``), the one on ``PATH``.  The ranks get the environment of
this process plus a few memory-saving MPICH defaults (:func:`rank_env`).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from asapgraph.errors import InputError

__all__ = ["find_mpiexec", "rebuild_argv", "launch", "run_ranks", "reads_stdin", "rank_env",
           "RANK_ENV_DEFAULTS", "mpi_world_size_from_env", "mpi_rank_from_env",
           "LOCAL_RANKS_MIN", "LOCAL_RANKS_PER_CORE", "max_local_ranks", "local_ranks_refusal"]

#: The most ranks started on this host by the ``--np`` launcher (and by ``asapgraph
#: bench --ranks``, the networkx backend's ``np``): every one of them is a process here,
#: so a typo (``--np 100000``) had mpiexec fork until the host gave out, and the command
#: hung.  The bound is :data:`LOCAL_RANKS_PER_CORE` ranks per core, at least
#: :data:`LOCAL_RANKS_MIN` (256 on a 2-core host: the 64-rank runs of issue 15 fit; a rank
#: takes 80-170 MB, benchmarks/REPORT.md).  More ranks: your own ``mpiexec`` with a
#: hostfile, without ``--np`` (README, "Running on several hosts"); that is not bounded.
LOCAL_RANKS_MIN = 256
LOCAL_RANKS_PER_CORE = 64


def max_local_ranks():
    """The most ranks started on this host (:data:`LOCAL_RANKS_MIN`, or
    :data:`LOCAL_RANKS_PER_CORE` per core of ``os.cpu_count()``, whichever is larger)."""
    return max(LOCAL_RANKS_MIN, LOCAL_RANKS_PER_CORE * (os.cpu_count() or 1))


def local_ranks_refusal(k, beyond=None):
    """Why ``k`` ranks are not started on this host (one clause, for a usage error), or
    None when ``k <= max_local_ranks()``.  ``beyond``: how to run more (default: under
    your own mpiexec with a hostfile, without ``--np``)."""
    limit = max_local_ranks()
    if k <= limit:
        return None
    beyond = beyond or (f"run under your own mpiexec with a hostfile and no --np "
                        f"(mpiexec -f HOSTFILE -n {k} asapgraph ...)")
    return (f"at most {limit} ranks on this host ({LOCAL_RANKS_PER_CORE} per core, at least "
            f"{LOCAL_RANKS_MIN}), got {k}: for more, {beyond}")

#: Environment defaults for the ranks started with MPICH's ``mpiexec`` (a variable the
#: user has set is left alone); measured with the MPICH wheel (ch4:ucx), cnr-2000 on 4
#: ranks.  ``UCX_TLS=^sm``: MPICH carries the traffic between ranks of one node over its
#: own shared memory, never over UCX's shared-memory transports, which still map about
#: 4 MB per rank at ``MPI_Init``; UCX keeps its network transports for other nodes.
#: ``MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS=16`` (default 64 cells of 8 KiB per rank):
#: the engines keep a few messages in flight per peer (load, BSP and ASAP times did not
#: change measurably), but every cell once used stays resident (2-3 MB per rank).
#: ``UCX_MEM_EVENTS=no``: loading UCX (``from mpi4py import MPI`` loads libmpi, which
#: links it) patches ``mmap``/``munmap``/``brk``... in the process so that its
#: registration cache sees memory being unmapped; the patching spins in ``sched_yield``
#: (``ucm_bistro_apply_patch_atomic``) and was 40 of the 48 ms that importing
#: ``mpi4py.MPI`` took per rank (now 7 ms; ``MPI_Init`` itself, ~23 ms, is unchanged).
#: Only RDMA transports between hosts (InfiniBand) use that cache: there UCX then
#: registers memory per transfer instead of caching it (set ``UCX_MEM_EVENTS=yes`` for
#: such runs); ranks on one node never go through UCX (``UCX_TLS=^sm`` above).
RANK_ENV_DEFAULTS = {"UCX_TLS": "^sm", "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS": "16",
                     "UCX_MEM_EVENTS": "no"}


def mpi_world_size_from_env(environ=None):
    """World size announced by an MPI launcher, read from the environment (no MPI import).

    Returns
    -------
    int or None
        The size from ``PMI_SIZE`` (MPICH hydra) or ``OMPI_COMM_WORLD_SIZE`` (Open MPI);
        1 when only a rank variable (``PMI_RANK``, ``PMIX_RANK``) is present; None when
        not launched by mpiexec.
    """
    env = os.environ if environ is None else environ
    for key in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"):
        v = env.get(key)
        if v:
            try:
                return int(v)
            except ValueError:
                pass
    if env.get("PMI_RANK") or env.get("PMIX_RANK"):
        return 1
    return None


def mpi_rank_from_env(environ=None):
    """This process's rank announced by an MPI launcher (``PMI_RANK``,
    ``OMPI_COMM_WORLD_RANK``, ``PMIX_RANK``), or None (no MPI import)."""
    env = os.environ if environ is None else environ
    for key in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        v = env.get(key, "")
        if v.isdigit():
            return int(v)
    return None


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


# (attribute, option, kind): kind "flag" (store_true), "val", "list" (append), "colon"
# (a tuple written as A:B:C)
_OPTIONS = [
    ("weighted", "--weighted", "flag"), ("undirected", "--undirected", "flag"),
    ("labels", "--labels", "flag"), ("header", "--header", "flag"),
    ("weight_col", "--weight-col", "val"), ("output", "--output", "val"),
    ("top", "--top", "val"), ("json", "--json", "flag"), ("quiet", "--quiet", "flag"),
    ("tol", "--tol", "val"), ("max_iter", "--max-iter", "val"),
    ("allow_unconverged", "--allow-unconverged", "flag"), ("threads", "--threads", "val"),
    ("alpha", "--alpha", "val"), ("personalization", "--personalization", "val"),
    ("dangling", "--dangling", "val"), ("mode", "--mode", "val"),
    ("partition", "--partition", "val"), ("fanout", "--fanout", "val"),
    ("window", "--window", "val"), ("approx", "--approx", "val"), ("seed", "--seed", "val"),
    ("asap_form", "--asap-form", "val"), ("schedule", "--schedule", "val"),
    ("rebalance", "--rebalance", "val"),
    ("latency", "--latency", "val"), ("bandwidth", "--bandwidth", "val"),
    ("jitter", "--jitter", "val"), ("straggler", "--straggler", "list"),
    ("emulate_seed", "--emulate-seed", "val"), ("clock", "--clock", "val"),
    ("pauses", "--pauses", "colon"), ("compute", "--compute", "val"),
]


def rebuild_argv(args, command="pagerank"):
    """The command line equivalent to ``args`` without ``--np``/``--mpiexec``.

    ``INPUT`` comes last, after ``--``: an input file whose name starts with ``-``
    (``asapgraph pagerank --np 2 -- -g.txt``) ran on one process and as a program
    command on K ranks, but the pagerank ranks read it as an option and refused the
    command line ("the following arguments are required: INPUT")."""
    out = [command]
    for attr, opt, kind in _OPTIONS:
        v = getattr(args, attr, None)
        if v is None or v is False:
            continue
        if kind == "flag":
            out.append(opt)
        elif kind == "list":
            for x in v:
                out += [opt, str(x)]
        elif kind == "colon":  # a tuple of floats, MIN:MAX:EVERY
            out += [f"{opt}={':'.join(repr(float(x)) for x in v)}"]
        else:
            if isinstance(v, float):
                v = repr(v)
            # paths stay as typed (the ranks start in this cwd): messages name them alike
            out += [f"{opt}={v}"]
    return out + ["--", str(args.input)]


def _is_mpich(exe):
    """True when ``exe`` is MPICH's ``mpiexec``: MPICH's ``mpichversion`` lies beside it (as
    in the MPICH wheel's ``bin``; no process started), or Hydra names itself in
    ``--version``."""
    for d in {os.path.dirname(exe), os.path.dirname(os.path.realpath(exe))}:
        if os.access(os.path.join(d, "mpichversion"), os.X_OK):
            return True
    try:
        r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10,
                           stdin=subprocess.DEVNULL)  # the user's stdin is not for it
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and r.stdout.lstrip().startswith("HYDRA build details")


def rank_env(exe, environ=None):
    """Environment for the ranks started by ``exe`` (an ``mpiexec``).

    A copy of ``environ`` (default ``os.environ``) with ``ASAPGRAPH_LAUNCHED=1`` and, when
    ``exe`` is MPICH's and MPICH's shared memory between ranks is not turned off
    (``MPIR_CVAR_NOLOCAL``), the :data:`RANK_ENV_DEFAULTS` the user has not set.  Other
    MPIs get none (Open MPI's UCX layer also carries the messages within a node).
    """
    env = dict(os.environ if environ is None else environ)
    env["ASAPGRAPH_LAUNCHED"] = "1"
    todo = {k: v for k, v in RANK_ENV_DEFAULTS.items() if k not in env}
    if todo and env.get("MPIR_CVAR_NOLOCAL", "0") in ("", "0") and _is_mpich(exe):
        env.update(todo)
    return env


#: rank bootstrap: first the supervisor of :mod:`.watchdog` (loaded from its file and its
#: cached bytecode -- ``runpy.run_path`` compiled it every time, 4-7 ms a rank -- before
#: numpy or MPI are imported: it forks), then import the launcher's asapgraph, not a
#: source tree in the current directory (``python -m`` would put the cwd first on
#: ``sys.path``: from a clone's root the ranks would import the uncompiled sources
#: instead of the installed package)
_BOOT = ("import runpy, sys, importlib.util as u; "
         "s = u.spec_from_file_location('_asapgraph_watchdog', sys.argv[1]); "
         "m = u.module_from_spec(s); s.loader.exec_module(m); m.supervise(); m.take_stdio(); "
         "sys.path.insert(0, sys.argv[2]); mod = sys.argv[3]; "
         "sys.argv = [mod] + sys.argv[4:]; runpy.run_module(mod, run_name='__main__', "
         "alter_sys=True)")


def rank_command(exe, nprocs, argv, module="asapgraph"):
    """``mpiexec -n nprocs python ... -m module argv`` importing this very asapgraph."""
    from asapgraph.comm import watchdog

    # this file is asapgraph/comm/launch.py: the directory above the package
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return [exe, "-n", str(int(nprocs)), sys.executable, "-c", _BOOT,
            os.path.abspath(watchdog.__file__), top, module, *argv]


def reads_stdin(args):
    """True when the ranks of this command read standard input: ``INPUT`` is ``-`` (rank 0
    reads it and deals its lines to the ranks, or, with ``--labels``, reads the named edge
    list for everyone), or the ``--personalization`` or ``--dangling`` file is ``-`` (rank
    0 reads it; its problems, a closed standard input included, come after the graph's, as
    on one process: ``"values"``, a true value)."""
    if getattr(args, "input", None) == "-":
        return True
    return "values" if "-" in (getattr(args, "personalization", None),
                               getattr(args, "dangling", None)) else False


def run_ranks(exe, nprocs, argv, module="asapgraph", stdin=False):
    """Run ``python -m module argv`` (default: ``asapgraph argv``) on ``nprocs`` ranks under
    ``exe``; returns the exit status.

    mpiexec gets no standard input (``/dev/null``): Hydra forwards it to rank 0 only as
    fast as that rank reads, and stopped the job with its own errors when it could not
    keep up.  With ``stdin`` true rank 0 reads this process's standard input directly
    instead (an inherited descriptor, :func:`.watchdog.stdio_for_rank0`).  Rank 0 (which
    writes the results) also writes to this process's standard output directly: through
    mpiexec, a reader that went away (``| head``) killed mpiexec with SIGPIPE (exit 4);
    now rank 0 sees the closed pipe, every rank ends with status 141, quietly, as one
    process does.  The other ranks write there directly too, and mpiexec's own standard
    output, which then holds only Hydra's diagnostics, is ``/dev/null`` (they reached
    the user's stdout: "Sending Ctrl-C to processes as requested" on a SIGINT, the "BAD
    TERMINATION" banner of a rank that died).

    The ranks end within about :data:`.watchdog.POLL` seconds when this process dies,
    however it dies.  When a rank dies (a signal, an unknown exit status) one line on
    stderr names it and how, and the status is :data:`.watchdog.EXIT_RANK_DIED`; a
    rank's own failure (1, 2, 3) passes through.  Ctrl-C: KeyboardInterrupt, once
    mpiexec has stopped.
    """
    from asapgraph.comm import watchdog

    cmd = rank_command(exe, nprocs, argv, module)
    env = rank_env(exe)
    status = watchdog.StatusSocket()
    env.pop(watchdog.ENV_STATUS, None)
    env.pop(watchdog.ENV_LAUNCHER, None)
    env.pop(watchdog.ENV_STDIO, None)
    if status.address is not None:  # else (not Linux): no supervisors
        env[watchdog.ENV_STATUS] = status.address
        env[watchdog.ENV_LAUNCHER] = watchdog.process_identity()
    if stdin is True and sys.stdin is None:  # started with descriptor 0 closed: as one
        # process (INPUT '-'; a closed --personalization '-' is refused after the
        # graph's problems: rank 0 finds it closed, stdio_for_rank0)
        from asapgraph.graph.io._text import STDIN_CLOSED

        status.close()
        raise InputError("<stdin>", None, STDIN_CLOSED)
    stdio, fds = watchdog.stdio_for_rank0((0, 1) if stdin else (1,))
    if stdio is not None:
        env[watchdog.ENV_STDIO] = stdio
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    # a descriptor closed at start may hold another file of this process now: not for
    # mpiexec (rank 0 sees the closed stdout: ENV_STDIO).  When the ranks write to this
    # process's stdout directly (watchdog.take_stdio), mpiexec's own stdout carries
    # Hydra's lines alone -- "[mpiexec@host] Sending Ctrl-C to processes as requested"
    # and "Press Ctrl-C again to force abort" on a SIGINT, the "BAD TERMINATION" banner
    # when a rank died -- which landed in the user's stdout (a --json consumer's): it
    # gets /dev/null.  (Not stderr: the launcher's one line there says what happened,
    # "asapgraph: interrupted" or the rank that died; Hydra's would make it 3 or 12.)
    out = subprocess.DEVNULL if sys.stdout is None or watchdog.passes_stdout(stdio) else None
    try:
        try:
            proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    pass_fds=fds, preexec_fn=watchdog.die_with(os.getpid()))
        finally:
            for fd in fds:  # mpiexec holds them now
                os.close(fd)
        try:
            rc = watchdog.wait_job(proc, status)
        except KeyboardInterrupt:
            stop_mpiexec(proc)
            raise  # the CLI says "asapgraph: interrupted", status 130, as on one process
        recs = status.records() if status.address is not None else None  # None: no reports
        line, code = watchdog.explain(rc, recs, nprocs, exe)
        if line:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        return code
    finally:
        status.close()


#: seconds mpiexec has, after this process's SIGINT, to stop on a SIGINT of its own (a
#: terminal's Ctrl-C reaches the whole process group: Hydra then stops within ~20 ms)
#: before it is sent one (the SIGINT came to this process alone: ``kill -INT``, a
#: supervisor); then :data:`STOP_WAIT` more before it is killed
INT_GRACE = 0.5
STOP_WAIT = 5.0


def stop_mpiexec(proc):
    """This process was interrupted: let mpiexec stop its ranks.  A terminal's Ctrl-C
    reached mpiexec and the ranks too; a SIGINT sent to this process alone did not, and
    the ranks went on computing until mpiexec was killed :data:`STOP_WAIT` seconds later
    (audit 29): it is forwarded once mpiexec has not stopped within :data:`INT_GRACE`.
    (A second SIGINT makes Hydra abort at once: the job ends either way.)"""
    import signal

    try:
        try:
            proc.wait(timeout=INT_GRACE)
            return
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
        proc.wait(timeout=STOP_WAIT)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        proc.kill()
        proc.wait()


def launch(args, command="pagerank"):
    """Run the command under ``mpiexec -n args.np``; returns the exit status."""
    exe = find_mpiexec(getattr(args, "mpiexec", None))
    return run_ranks(exe, args.np, rebuild_argv(args, command), stdin=reads_stdin(args))
