"""Ranks started by the ``--np`` launcher: nothing outlives the job, every death is told.

Rationale
---------
``asapgraph CMD ... --np K`` runs ``mpiexec -n K`` (:mod:`.launch`).  Two faults used to
be silent: when the launcher was killed (a scheduler's or a test's timeout sends
SIGKILL, which cannot be caught) mpiexec and every rank kept running, orphaned; and
when one rank died (``kill -9``, the OOM killer, a crash) MPICH's Hydra stopped the
job with the rank's signal number as exit status and a banner on *stdout*, so the
launcher said nothing about which rank died or how.  Hydra cannot tell the launcher
more, and a process's exit status reaches its parent only, so each rank gets a
parent of its own that watches it:

* **The launcher** starts mpiexec with ``PR_SET_PDEATHSIG = SIGTERM`` (Linux: the
  kernel signals mpiexec the moment the launcher dies, however it dies; Hydra then
  stops its proxies and ranks), and passes two variables to the ranks:
  its identity :data:`ENV_LAUNCHER` (pid, start time, boot id, pid namespace: a pid
  recycled by an unrelated process does not match) and a status directory it owns,
  :data:`ENV_STATUS`.
* **Each rank**, before it imports anything else (the bootstrap of
  :func:`.launch.rank_command` runs this file as a script), forks: the child goes on
  to be the rank (with ``PR_SET_PDEATHSIG = SIGKILL``: it cannot outlive its
  supervisor); the parent is a small supervisor (stdlib only, sleeping in
  ``select`` on a pidfd of the child, waking every :data:`POLL` s).  It forwards
  the usual signals to the rank, kills it when the launcher is gone or when its own
  parent (Hydra's proxy) is gone, and, when the rank ends, appends how (exit status
  or signal) and when to its status file, then ends the same way (so Hydra sees
  what it saw before).
* **While mpiexec runs**, the launcher watches the status files (:func:`wait_job`):
  a rank that failed while the job goes on (one that dies before ``MPI_Init`` leaves
  the others waiting there, and Hydra does not stop them) makes it stop mpiexec
  after :data:`GRACE` seconds.
* **After mpiexec returns**, :func:`explain` reads the status files: the first rank
  that ended abnormally is named in one line on stderr (exit status
  :data:`EXIT_RANK_DIED`); a rank that failed with one of asapgraph's own statuses
  (1 internal error, 2 bad input, 3 not converged) has printed its own line already,
  so its status passes through unchanged.

This file imports the standard library only, never a relative module: the rank
bootstrap runs it with ``runpy.run_path``.  Ranks started by the user's own
``mpiexec`` (no ``--np``) have neither variable: no
supervisor, nothing changes for them.  The pid watch needs Linux's ``/proc`` and only
applies on the launcher's host (same boot id and pid namespace); on other hosts the
supervisor still ends its rank when Hydra's proxy dies, which happens when mpiexec
dies.  Memory: the supervisor is a fork taken before numpy or MPI are imported; the
pages the rank then writes are copied, which leaves the supervisor about 5.5 MB of
its own (measured: 5.4 MB private, 6.5 MB PSS, next to a 56 MB rank on rmat:14).
"""
from __future__ import annotations

import os
import signal
import time

__all__ = ["ENV_LAUNCHER", "ENV_STATUS", "EXIT_RANK_DIED", "POLL", "process_identity",
           "is_alive", "die_with", "supervise", "read_status", "wait_job", "explain"]

ENV_LAUNCHER = "ASAPGRAPH_LAUNCHER"
ENV_STATUS = "ASAPGRAPH_STATUS_DIR"
#: Exit status of the launcher when a rank died (a signal, or an exit status that is
#: not one of asapgraph's own), or ended without a report.
EXIT_RANK_DIED = 4
#: Seconds between two checks of the launcher by a rank's supervisor (and of the
#: ranks' status files by the launcher).
POLL = 0.2
#: Seconds the launcher lets mpiexec take to stop the job after a rank failed.
GRACE = 3.0

_PR_SET_PDEATHSIG = 1
_FORWARD = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCONT",
            "SIGTSTP", "SIGXCPU")
_OWN_STATUSES = (1, 2, 3)  # asapgraph's own failures: the rank printed its line


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def _stat(pid):
    """``(state, start_ticks)`` of ``pid`` from ``/proc``, or None when there is none."""
    s = _read(f"/proc/{int(pid)}/stat")
    if not s:
        return None
    f = s[s.rfind(")") + 2:].split()  # after "pid (comm) "
    return f[0], f[19]


def _host_key():
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = ""
    return _read("/proc/sys/kernel/random/boot_id"), ns


def process_identity(pid=None):
    """``pid:start:boot_id:pid_namespace`` of a process (default this one)."""
    pid = os.getpid() if pid is None else int(pid)
    st = _stat(pid)
    boot, ns = _host_key()
    return f"{pid}:{st[1] if st else ''}:{boot}:{ns}"


def is_alive(identity):
    """True/False for the process of :func:`process_identity`; None when this host
    cannot tell (another machine or pid namespace, no ``/proc``)."""
    try:
        pid, start, boot, ns = identity.split(":", 3)
        pid = int(pid)
    except ValueError:
        return None
    if not start or not boot or (boot, ns) != _host_key():
        return None
    st = _stat(pid)
    return st is not None and st[1] == start and st[0] not in ("Z", "X", "x")


def _prctl():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None


def die_with(parent_pid, sig=signal.SIGTERM):
    """A ``preexec_fn`` for ``subprocess``: the child gets ``sig`` when ``parent_pid``
    (the caller) dies; if it already died, the child ends at once.  None off Linux."""
    prctl = _prctl()
    if prctl is None:
        return None

    def preexec():
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


# ----------------------------------------------------------------------------- rank side


def _rank_number(env):
    for k in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if env.get(k, "").isdigit():
            return env[k]
    return f"pid{os.getpid()}"


def _append(path, line):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    except OSError:
        pass  # the launcher is gone (its directory too): nobody to tell


def supervise(environ=None):
    """Called first thing by a rank the launcher started; returns in the rank only.

    Without :data:`ENV_STATUS` and :data:`ENV_LAUNCHER` in the environment (the rank was
    started by the user's own mpiexec) it returns at once and changes nothing.
    """
    env = os.environ if environ is None else environ
    status_dir, launcher = env.get(ENV_STATUS), env.get(ENV_LAUNCHER)
    if not status_dir or not launcher or not hasattr(os, "fork"):
        return
    for k in (ENV_STATUS, ENV_LAUNCHER):  # processes the rank starts are not ranks
        env.pop(k, None)
    path = os.path.join(status_dir, "rank-" + _rank_number(env))
    prctl = _prctl()
    proxy = os.getppid()
    me = os.getpid()
    child = os.fork()
    if child == 0:  # the rank: it ends with its supervisor
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != me:
            os._exit(1)
        return
    _supervisor(child, path, launcher, proxy)  # never returns


def _supervisor(child, path, launcher, proxy):
    import select

    _append(path, f"start {child} {os.uname().nodename}")

    def forward(sig, frame):
        try:
            os.kill(child, sig)
        except OSError:
            pass

    for name in _FORWARD:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), forward)
    try:
        pidfd = os.pidfd_open(child)
    except (AttributeError, OSError):
        pidfd = None
    watch = is_alive(launcher) is not None
    while True:
        try:
            pid, status = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            os._exit(1)
        if pid:
            break
        if (watch and is_alive(launcher) is False) or os.getppid() != proxy:
            os.kill(child, signal.SIGKILL)  # the job is over: take the rank down now
            os.waitpid(child, 0)
            _append(path, f"end {time.time_ns()} orphaned 0")
            os._exit(1)
        if pidfd is not None:
            select.select([pidfd], [], [], POLL)
        else:
            time.sleep(POLL)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        _append(path, f"end {time.time_ns()} signal {sig}")
        try:  # end the same way, without a core file of the supervisor
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: always the default
            pass
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
    _append(path, f"end {time.time_ns()} exit {code}")
    os._exit(code)


# ----------------------------------------------------------------------------- launcher side


def read_status(status_dir):
    """The ranks' records: ``{rank: {"pid", "host", "end_ns", "how", "value"}}``
    (``how`` is ``"exit"``, ``"signal"``, ``"orphaned"`` or None when the rank left no
    end record)."""
    out = {}
    try:
        names = os.listdir(status_dir)
    except OSError:
        return out
    for name in names:
        if not name.startswith("rank-"):
            continue
        rec = {"pid": None, "host": "?", "end_ns": None, "how": None, "value": None}
        for line in _read(os.path.join(status_dir, name)).splitlines():
            f = line.split()
            try:
                if f[0] == "start" and len(f) >= 3:
                    rec["pid"], rec["host"] = int(f[1]), f[2]
                elif f[0] == "end" and len(f) >= 4 and rec["end_ns"] is None:
                    rec["end_ns"], rec["how"], rec["value"] = int(f[1]), f[2], int(f[3])
            except (ValueError, IndexError):
                continue
        key = name[5:]
        out[int(key) if key.isdigit() else key] = rec
    return out


def _failed(recs):
    return [(r["end_ns"], k) for k, r in recs.items()
            if r["how"] == "signal" or (r["how"] == "exit" and r["value"] != 0)]


def wait_job(proc, status_dir, grace=GRACE):
    """Wait for ``proc`` (mpiexec); returns its exit status.

    When a rank has failed and mpiexec is still running ``grace`` seconds later (a rank
    that dies before ``MPI_Init`` leaves the others waiting there for ever, and Hydra
    does not stop them), mpiexec gets SIGTERM, and SIGKILL after another ``grace``.
    """
    import subprocess

    failed_at = None
    while True:
        try:
            return proc.wait(timeout=POLL)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if failed_at is None:
            if _failed(read_status(status_dir)):
                failed_at = now
        elif now - failed_at > 2 * grace:
            proc.kill()
        elif now - failed_at > grace:
            proc.terminate()


def _signame(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def explain(returncode, status_dir, nprocs):
    """``(line, status)`` for the launcher once mpiexec returned ``returncode``.

    ``line`` is "" when there is nothing to add (success, or a failure that the ranks
    reported themselves: every rank ended with one of asapgraph's own statuses).
    """
    if returncode == 0:
        return "", 0
    if returncode == 130:  # Ctrl-C reached the ranks (mpiexec forwards it)
        return "asapgraph: interrupted", 130
    if returncode < 0:  # mpiexec itself was killed; its ranks went with it
        return (f"asapgraph: mpiexec was killed by {_signame(-returncode)}; the job was "
                "stopped", EXIT_RANK_DIED)
    recs = read_status(status_dir)
    bad = _failed(recs)
    if bad:
        rank = min(bad)[1]
        r = recs[rank]
        if r["how"] == "exit" and r["value"] in _OWN_STATUSES:
            return "", r["value"]
        how = (f"was killed by {_signame(r['value'])}" if r["how"] == "signal" else
               f"exited with status {r['value']}")
        return (f"asapgraph: rank {rank} of {nprocs} (pid {r['pid']} on {r['host']}) {how}; "
                f"the job was stopped", EXIT_RANK_DIED)
    if returncode in _OWN_STATUSES:
        return "", returncode  # e.g. MPI_Abort after the rank printed its line
    silent = sorted(str(k) for k, r in recs.items() if r["how"] is None)
    if not recs:
        what = "before any rank started"
    elif silent:
        what = (f"and no report of how rank{'s' if len(silent) > 1 else ''} "
                f"{', '.join(silent)} ended (a rank's supervisor was killed?)")
    else:
        what = "after every rank ended normally"
    return f"asapgraph: mpiexec failed with exit status {returncode} {what}", EXIT_RANK_DIED
