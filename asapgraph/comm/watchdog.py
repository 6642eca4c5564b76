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
  recycled by an unrelated process does not match) and the name of a status socket
  it owns, :data:`ENV_STATUS` (a datagram socket in Linux's abstract namespace: it
  vanishes with the launcher, so a killed launcher leaves no file behind).
* **Each rank**, before it imports anything else (the bootstrap of
  :func:`.launch.rank_command` runs this file as a script), forks: the child goes on
  to be the rank (with ``PR_SET_PDEATHSIG = SIGKILL``: it cannot outlive its
  supervisor); the parent is a small supervisor (stdlib only, sleeping in
  ``select`` on a pidfd of the child, waking every :data:`POLL` s).  It forwards
  the usual signals to the rank, kills it when the launcher is gone or when its own
  parent (Hydra's proxy) is gone, and, when the rank ends, sends how (exit status
  or signal) and when to the status socket, then ends the same way (so Hydra sees
  what it saw before).
* **While mpiexec runs**, the launcher reads the status socket (:func:`wait_job`):
  a rank that failed while the job goes on (one that dies before ``MPI_Init`` leaves
  the others waiting there, and Hydra does not stop them) makes it stop mpiexec
  after :data:`GRACE` seconds.
* **After mpiexec returns**, :func:`explain` reads the records: the first rank
  that ended abnormally is named in one line on stderr (exit status
  :data:`EXIT_RANK_DIED`); a rank that failed with one of asapgraph's own statuses
  (1 internal error, 2 bad input, 3 not converged) has printed its own line already,
  so its status passes through unchanged.  mpiexec's status alone is not trusted: a
  success needs every rank's report of a normal end (``--mpiexec /bin/true`` exits 0
  having run nothing), and a failure before any rank reported is mpiexec's own.

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

__all__ = ["ENV_LAUNCHER", "ENV_STATUS", "ENV_STDIO", "EXIT_RANK_DIED", "POLL",
           "process_identity", "is_alive", "die_with", "supervise", "StatusSocket", "wait_job",
           "explain", "stdio_for_rank0", "take_stdio", "passes_stdout"]

ENV_LAUNCHER = "ASAPGRAPH_LAUNCHER"
ENV_STATUS = "ASAPGRAPH_STATUS_SOCKET"
#: the launcher's standard streams that rank 0 takes over (:func:`stdio_for_rank0`)
ENV_STDIO = "ASAPGRAPH_STDIO"
#: Exit status of the launcher when a rank died (a signal, or an exit status that is
#: not one of asapgraph's own), or ended without a report.
EXIT_RANK_DIED = 4
#: Seconds between two checks of the launcher by a rank's supervisor (and of the
#: ranks' status socket by the launcher).
POLL = 0.2
#: Seconds the launcher lets mpiexec take to stop the job after a rank failed.
GRACE = 3.0
#: ... after ranks ended with asapgraph's own statuses only (an input refused, a run that
#: did not converge: decided on every rank, so the others are ending too).  Their
#: teardown can take longer than :data:`GRACE`: 64 ranks on 2 cores, cnr-2000, ASAP not
#: converged -- the launcher killed mpiexec 6 s after rank 0 printed its line and
#: reported "mpiexec was killed by SIGKILL", exit 4, instead of the run's exit 3.
ORDERLY_GRACE = 60.0

_PR_SET_PDEATHSIG = 1
_FORWARD = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGCONT",
            "SIGTSTP", "SIGXCPU")
#: asapgraph's own failures: the rank printed its line (1, 2, 3), or stopped quietly
#: because rank 0's standard output was closed (141, agreed by every rank)
_OWN_STATUSES = (1, 2, 3, 141)


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


# ----------------------------------------------------------------------------- stdio


def stdio_for_rank0(targets):
    """Launcher side: ``(value, fds)``: copies ``fds`` of this process's descriptors
    ``targets`` (0 standard input, 1 standard output), to be passed to mpiexec
    (``pass_fds``), and the value of :data:`ENV_STDIO` that lets rank 0 take them over
    (:func:`take_stdio`); ``(None, [])`` when there is nothing to pass.

    Hydra forwards a rank's standard streams through mpiexec: standard input reaches
    rank 0 only as fast as it reads (Hydra stopped the job, "process reading stdin too
    slowly", when ~200 KB were waiting), and a closed standard output killed mpiexec with
    SIGPIPE (``--np K ... | head``: exit 4 where one process exits 141).  The
    descriptors are inherited by mpiexec, its proxies and the ranks on this host; rank 0
    checks that a descriptor is still the launcher's file (same host, device and inode)
    before using it, so a rank 0 on another host keeps Hydra's streams.
    """
    import sys

    boot = _host_key()[0]
    if not boot:
        return None, []
    items, fds = [], []
    for t in targets:
        if (sys.stdin, sys.stdout)[t] is None:  # started with it closed (the number may
            items.append(f"{t}=closed")          # hold another file of this process now):
            continue                             # closed on rank 0 too
        try:
            fd = os.dup(t)
        except OSError:  # closed: nothing to pass
            continue
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            continue
        fds.append(fd)
        items.append(f"{t}={fd}:{st.st_dev}:{st.st_ino}")
    if not items:
        return None, []
    return f"{boot};{','.join(items)}", fds


def _stdio_fds(env):
    """``[(target, fd)]`` of :data:`ENV_STDIO` that are open here and still the
    launcher's files (same host, device and inode); fd None: closed in the launcher."""
    value = env.get(ENV_STDIO)
    if not value:
        return []
    boot, _, items = value.partition(";")
    if boot != _host_key()[0]:
        return []
    out = []
    for item in items.split(","):
        try:
            t, rest = item.split("=", 1)
            if rest == "closed" and t in ("0", "1"):
                out.append((int(t), None))
                continue
            fd, dev, ino = (int(x) for x in rest.split(":"))
            t = int(t)
            st = os.fstat(fd)
        except (ValueError, OSError):
            continue
        if (st.st_dev, st.st_ino) == (dev, ino) and t in (0, 1):
            out.append((t, fd))
    return out


def passes_stdout(value):
    """True when the :data:`ENV_STDIO` value ``value`` hands the launcher's open standard
    output to the ranks (:func:`take_stdio`): mpiexec's own standard output then carries
    no rank's output, only Hydra's diagnostics (:func:`.launch.run_ranks`)."""
    if not value:
        return False
    items = value.partition(";")[2].split(",")
    return any(i.startswith("1=") and i != "1=closed" for i in items)


def take_stdio(environ=None):
    """Rank side (the bootstrap of :func:`.launch.rank_command`, in the rank, before any
    other import): rank 0 makes the launcher's descriptors of :data:`ENV_STDIO` its
    standard input/output, and every other rank the launcher's standard output (none of
    them writes through mpiexec, whose standard output then holds Hydra's own lines
    alone: :func:`.launch.run_ranks`); every rank then closes the copies.  Nothing
    happens without the variable (ranks of the user's own mpiexec)."""
    import sys

    env = os.environ if environ is None else environ
    fds = _stdio_fds(env)
    env.pop(ENV_STDIO, None)
    rank0 = _rank_number(env) == "0"
    for t, fd in fds:
        if fd is None:  # closed in the launcher: closed for rank 0 too, as on one process
            if rank0 and t == 1:
                sys.stdout = None
            elif rank0 and t == 0:
                sys.stdin = None
            continue
        if rank0 or t == 1:
            try:
                if t == 1 and sys.stdout is not None:
                    sys.stdout.flush()
                os.dup2(fd, t)
                if t == 1 and sys.stdout is not None and os.isatty(1) and \
                        not sys.stdout.line_buffering:
                    sys.stdout.reconfigure(line_buffering=True)  # as Python on a terminal
            except (OSError, ValueError, AttributeError):
                pass
        os.close(fd)


def _close_stdio(env):
    """The supervisor keeps none of the launcher's descriptors (:data:`ENV_STDIO`)."""
    for _, fd in _stdio_fds(env):
        if fd is None:
            continue
        try:
            os.close(fd)
        except OSError:
            pass


# ----------------------------------------------------------------------------- rank side


def _rank_number(env):
    for k in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        if env.get(k, "").isdigit():
            return env[k]
    return f"pid{os.getpid()}"


def _sender(address, rank):
    """``send(line)``: one datagram ``"RANK LINE"`` to the launcher's status socket
    (nothing happens when the launcher is gone)."""
    import socket

    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError:
        return lambda line: None
    addr = "\0" + address

    def send(line):
        try:
            sock.sendto(f"{rank} {line}".encode(), addr)
        except OSError:
            pass  # the launcher is gone: nobody to tell

    return send


def supervise(environ=None):
    """Called first thing by a rank the launcher started; returns in the rank only.

    Without :data:`ENV_STATUS` and :data:`ENV_LAUNCHER` in the environment (the rank was
    started by the user's own mpiexec) it returns at once and changes nothing.
    """
    env = os.environ if environ is None else environ
    address, launcher = env.get(ENV_STATUS), env.get(ENV_LAUNCHER)
    if not address or not launcher or not hasattr(os, "fork"):
        return
    for k in (ENV_STATUS, ENV_LAUNCHER):  # processes the rank starts are not ranks
        env.pop(k, None)
    send = _sender(address, _rank_number(env))
    prctl = _prctl()
    proxy = os.getppid()
    me = os.getpid()
    keep_autogroup_nice()  # before the fork: the rank shares this session's autogroup
    child = os.fork()
    if child == 0:  # the rank: it ends with its supervisor
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != me:
            os._exit(1)
        return
    _close_stdio(env)
    _supervisor(child, send, launcher, proxy)  # never returns


def keep_autogroup_nice(path="/proc/self/autogroup"):
    """The rule of :func:`asapgraph.comm.mpi.keep_autogroup_nice` (its docstring says why),
    here so that it stays stdlib-only for this module: give this process's autogroup the
    process's nice when that is higher, only in a process that leads its session; returns
    the autogroup's nice after, or None.  Hydra starts this process (the supervisor) in a
    session of its own and the rank is its child, not the session's leader, so the rank's
    own call changes nothing: :func:`supervise` calls this before it forks the rank.
    Without it ``bg19 asapgraph ... --np K`` (nice 19 in a nice-19 autogroup) ran its
    ranks in nice-0 autogroups, at normal priority against every other session -- wall-clock
    measurements included (benchmarks/REPORT.md, twenty-first session)."""
    try:
        if os.getsid(0) != os.getpid():
            return None
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        with open(path) as f:
            group = int(f.read().rsplit("nice", 1)[1])
        if mine > group:
            with open(path, "w") as f:
                f.write(str(mine))
            with open(path) as f:
                group = int(f.read().rsplit("nice", 1)[1])
        return group
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _supervisor(child, send, launcher, proxy):
    import select

    send(f"start {child} {os.uname().nodename}")

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
            send(f"end {time.time_ns()} orphaned 0")
            os._exit(1)
        if pidfd is not None:
            select.select([pidfd], [], [], POLL)
        else:
            time.sleep(POLL)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        send(f"end {time.time_ns()} signal {sig}")
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
    send(f"end {time.time_ns()} exit {code}")
    os._exit(code)


# ----------------------------------------------------------------------------- launcher side


class StatusSocket:
    """The launcher's end of the ranks' reports: an abstract-namespace datagram socket
    (Linux; :attr:`address` is None elsewhere, and the ranks then get no supervisor).

    :meth:`records` -> ``{rank: {"pid", "host", "end_ns", "how", "value"}}`` (``how``:
    ``"exit"``, ``"signal"``, ``"orphaned"``, or None while the rank has not ended).
    """

    def __init__(self):
        import socket

        self.address, self._lines = None, []
        try:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            # os.urandom, not secrets: secrets imports hmac and OpenSSL's libcrypto (3.4
            # ms of the launcher's start-up) for the same 8 random bytes
            name = f"asapgraph-ranks-{os.getpid()}-{os.urandom(8).hex()}"
            self._sock.bind("\0" + name)
            self._sock.setblocking(False)
            self.address = name
        except (OSError, AttributeError):
            self._sock = None

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def records(self):
        while self._sock is not None:
            try:
                self._lines.append(self._sock.recv(4096).decode(errors="replace"))
            except (BlockingIOError, InterruptedError):
                break
        return parse_records(self._lines)


def parse_records(lines):
    """Records (see :class:`StatusSocket`) from ``"RANK start PID HOST"`` and
    ``"RANK end TIME_NS how VALUE"`` lines."""
    out = {}
    for line in lines:
        f = line.split()
        if len(f) < 2:
            continue
        key = int(f[0]) if f[0].isdigit() else f[0]
        rec = out.setdefault(key, {"pid": None, "host": "?", "end_ns": None, "how": None,
                                   "value": None})
        try:
            if f[1] == "start" and len(f) >= 4:
                rec["pid"], rec["host"] = int(f[2]), f[3]
            elif f[1] == "end" and len(f) >= 5 and rec["end_ns"] is None:
                rec["end_ns"], rec["how"], rec["value"] = int(f[2]), f[3], int(f[4])
        except ValueError:
            continue
    return out


def _failed(recs):
    return [(r["end_ns"], k) for k, r in recs.items()
            if r["how"] == "signal" or (r["how"] == "exit" and r["value"] != 0)]


def wait_job(proc, status, grace=GRACE):
    """Wait for ``proc`` (mpiexec), reading the :class:`StatusSocket` ``status``;
    returns mpiexec's exit status.

    When a rank has failed and mpiexec is still running ``grace`` seconds later (a rank
    that dies before ``MPI_Init`` leaves the others waiting there for ever, and Hydra
    does not stop them), mpiexec gets SIGTERM, and SIGKILL after another ``grace``;
    :data:`ORDERLY_GRACE` instead while every failed rank ended with one of asapgraph's
    own statuses (the job is ending in order).
    """
    import select
    import subprocess

    try:  # wake the moment mpiexec ends (Popen.wait(timeout) polls every 50 ms)
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    failed_at = None
    try:
        while True:
            if pidfd is not None:
                select.select([pidfd], [], [], POLL)
                rc = proc.poll()
            else:
                try:
                    rc = proc.wait(timeout=POLL)
                except subprocess.TimeoutExpired:
                    rc = None
            if rc is not None:
                return rc
            now = time.monotonic()
            recs = status.records()
            bad = _failed(recs)
            if not bad:
                continue
            if failed_at is None:
                failed_at = now
            orderly = all(recs[k]["how"] == "exit" and recs[k]["value"] in _OWN_STATUSES
                          for _, k in bad)
            limit = max(grace, ORDERLY_GRACE) if orderly else grace
            if now - failed_at > 2 * limit:
                proc.kill()
            elif now - failed_at > limit:
                proc.terminate()
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _signame(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _ended_well(recs, nprocs):
    """Ranks ``0..nprocs-1`` that reported ending with status 0."""
    return {k for k, r in recs.items()
            if isinstance(k, int) and k < nprocs and r["how"] == "exit" and r["value"] == 0}


def explain(returncode, recs, nprocs, exe=None):
    """``(line, status)`` for the launcher once mpiexec (``exe``) returned ``returncode``,
    from the ranks' records ``recs`` (:meth:`StatusSocket.records`; None when the ranks
    had no supervisor to report, e.g. off Linux: nothing can be checked).

    ``line`` is "" when there is nothing to add (success, or a failure that the ranks
    reported themselves: every rank ended with one of asapgraph's own statuses).  The
    exit status of mpiexec alone is not trusted: a success needs every rank's report of
    a normal end (``--mpiexec /bin/true`` exits 0 without running anything), and a
    failure with one of asapgraph's own statuses needs a rank that started (``--mpiexec
    /bin/false`` exits 1, and no rank printed a line).
    """
    name = f"mpiexec {exe}" if exe else "mpiexec"  # for the failures of the launcher itself
    if returncode == 0:
        if recs is None:
            return "", 0
        ok = _ended_well(recs, nprocs)
        if len(ok) == nprocs:
            return "", 0
        if not recs:
            what = "but started no rank (is it an MPI launcher?)"
        else:
            what = (f"but only {len(ok)} of {nprocs} ranks reported a normal end (is it an "
                    f"MPI launcher for {nprocs} processes?)")
        return f"asapgraph: {name} exited with status 0 {what}", EXIT_RANK_DIED
    if returncode == 130:  # Ctrl-C reached the ranks (mpiexec forwards it)
        return "asapgraph: interrupted", 130
    if returncode < 0:  # mpiexec itself was killed; its ranks went with it
        return (f"asapgraph: mpiexec was killed by {_signame(-returncode)}; the job was "
                "stopped", EXIT_RANK_DIED)
    unknown, recs = recs is None, ({} if recs is None else recs)
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
    if returncode in _OWN_STATUSES and (recs or unknown):
        return "", returncode  # e.g. MPI_Abort after the rank printed its line
    silent = sorted(str(k) for k, r in recs.items() if r["how"] is None)
    if not recs:
        what = "before any rank started"
    elif silent:
        what = (f"and no report of how rank{'s' if len(silent) > 1 else ''} "
                f"{', '.join(silent)} ended (a rank's supervisor was killed?)")
    else:
        what = "after every rank ended normally"
    if recs:
        name = "mpiexec"
    return f"asapgraph: {name} failed with exit status {returncode} {what}", EXIT_RANK_DIED
