"""Faults of ``--np`` jobs: nothing outlives the launcher, and a rank that dies is named.

The processes of one job are found by a unique token in their environment (every rank,
mpiexec and Hydra's proxy inherit it); every test kills what is left in a ``finally``.
"""
import os
import re
import signal
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = pytest.mark.mpi

#: a job that runs for minutes: ASAP to tol 1e-15 with every message delivered 0.5 s late
#: (emulated), never hitting its work cap (ASAP refuses tol 0: it cannot certify it)
LONG = ["pagerank", "rmat:14", "--mode", "asap", "--tol", "1e-15", "--latency", "0.5",
        "--max-iter", "100000000", "-q"]


def _job_processes(token):
    """``{pid: (state, ppid, comm)}`` of the live processes whose environment holds token."""
    out = {}
    needle = token.encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if needle not in f.read():
                    continue
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
            with open(f"/proc/{d}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        fields = st[st.rfind(")") + 2:].split()
        if fields[0] not in ("Z", "X"):
            out[int(d)] = (fields[0], int(fields[1]), comm)
    return out


def _ranks(procs, launcher):
    """The rank processes (children of their supervisors: python under python)."""
    return sorted(p for p, (_, pp, c) in procs.items()
                  if pp in procs and pp != launcher and c.startswith("python")
                  and procs[pp][2].startswith("python"))


def _env_of(pid, key):
    with open(f"/proc/{pid}/environ", "rb") as f:
        for kv in f.read().split(b"\0"):
            if kv.startswith(key.encode() + b"="):
                return kv.split(b"=", 1)[1].decode()
    return None


@pytest.fixture
def job(tmp_path):
    """``start(args, k)`` -> (Popen, token) of ``asapgraph ARGS --np k``, its ranks up;
    whatever the test leaves alive is killed afterwards."""
    started = []

    def start(args, k, wait_ranks=True):
        token = f"asapgraph-fault-test-{uuid.uuid4().hex}"
        env = dict(os.environ, ASAPGRAPH_FAULT_TEST_TOKEN=token)
        p = subprocess.Popen([sys.executable, "-m", "asapgraph", *args, "--np", str(k)],
                             cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        started.append((p, token))
        t0 = time.time()
        while wait_ranks and len(_ranks(_job_processes(token), p.pid)) < k:
            assert time.time() - t0 < 60 and p.poll() is None, "the ranks did not start"
            time.sleep(0.1)
        return p, token

    yield start
    for p, token in started:
        for pid in _job_processes(token):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if p.poll() is None:
            p.kill()
        p.communicate()


def _gone_within(token, seconds):
    """Seconds until no process of the job is left (None if some still are)."""
    t0 = time.time()
    while time.time() - t0 < seconds:
        if not _job_processes(token):
            return time.time() - t0
        time.sleep(0.05)
    return None


def _status_sockets(pid):
    with open("/proc/net/unix") as f:
        return [ln for ln in f if f"@asapgraph-ranks-{pid}-" in ln]


def test_sigkill_of_the_launcher_ends_every_rank(job):
    p, token = job(LONG, 2)
    assert len(_status_sockets(p.pid)) == 1
    time.sleep(1.0)  # well into the computation
    p.kill()
    p.wait()
    took = _gone_within(token, 10)
    assert took is not None, f"left after 10 s: {_job_processes(token)}"
    assert _status_sockets(p.pid) == []  # and nothing on disk to leave behind


def test_ranks_end_even_when_mpiexec_cannot_act(job):
    """mpiexec stopped (it cannot clean up): the ranks' own supervisors end them."""
    p, token = job(LONG, 2)
    procs = _job_processes(token)
    mpiexec = [q for q, (_, pp, _) in procs.items() if pp == p.pid]
    assert len(mpiexec) == 1
    os.kill(mpiexec[0], signal.SIGSTOP)
    p.kill()
    p.wait()
    t0 = time.time()
    while time.time() - t0 < 10:
        left = {q: v for q, v in _job_processes(token).items() if v[2].startswith("python")}
        if not left:
            break
        time.sleep(0.05)
    assert not left, f"ranks left after 10 s: {left}"


def test_killed_mpiexec_is_named_and_takes_the_ranks(job):
    p, token = job(LONG, 2)
    mpiexec = [q for q, (_, pp, _) in _job_processes(token).items() if pp == p.pid]
    os.kill(mpiexec[0], signal.SIGKILL)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 4, err
    assert err.splitlines()[-1] == "asapgraph: mpiexec was killed by SIGKILL; the job was stopped"
    assert _gone_within(token, 10) is not None, _job_processes(token)


def test_killed_rank_is_named(job):
    p, token = job(LONG, 3)
    procs = _job_processes(token)
    victim = [q for q in _ranks(procs, p.pid) if _env_of(q, "PMI_RANK") == "1"]
    assert len(victim) == 1, procs
    time.sleep(0.5)
    os.kill(victim[0], signal.SIGKILL)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 4, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    want = (f"asapgraph: rank 1 of 3 (pid {victim[0]} on {os.uname().nodename}) was killed by "
            "SIGKILL; the job was stopped")
    # the launcher's line, last (MPICH may add its own lines before it, never a traceback)
    assert lines[-1] == want and lines.count(want) == 1 and "Traceback" not in err, err
    assert _gone_within(token, 10) is not None


def test_rank_exit_status_is_named(job, tmp_path):
    """A rank that exits with a status of its own (here 7, from a user's program file)."""
    prog = tmp_path / "quits.py"
    prog.write_text("import os\n"
                    "if os.environ.get('PMI_RANK') == '1':\n"
                    "    os._exit(7)\n"
                    "from asapgraph.programs import VertexProgram\n\n\n"
                    "class Quits(VertexProgram):\n"
                    "    combiner = 'min'\n"
                    "    accumulative = True\n\n"
                    "    def init(self, ctx):\n"
                    "        return ctx.ids * 1.0\n")
    p, token = job(["run", f"{prog}:Quits", "rmat:8", "-q"], 2, wait_ranks=False)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 4, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert re.fullmatch(
        r"asapgraph: rank 1 of 2 \(pid \d+ on \S+\) exited with status 7; the job was stopped",
        lines[-1]) and "Traceback" not in err, err


# ----------------------------------------------------------------------------- no mpiexec


def _records(lines_by_rank):
    from asapgraph.comm.watchdog import parse_records

    return parse_records([f"{r} {ln}" for r, lines in lines_by_rank.items() for ln in lines])


def test_explain_names_the_first_failed_rank():
    from asapgraph.comm.watchdog import EXIT_RANK_DIED, explain

    recs = _records({0: ["start 100 h0", "end 2000 signal 15"],
                     1: ["start 101 h1", "end 1000 signal 9"],
                     2: ["start 102 h0"]})
    assert explain(9, recs, 3) == ("asapgraph: rank 1 of 3 (pid 101 on h1) was killed by SIGKILL; "
                                   "the job was stopped", EXIT_RANK_DIED)
    recs = _records({0: ["start 100 h0"], 1: ["start 101 h1", "end 1000 exit 7"]})
    assert explain(7, recs, 2) == ("asapgraph: rank 1 of 2 (pid 101 on h1) exited with status 7; "
                                   "the job was stopped", EXIT_RANK_DIED)


@pytest.mark.parametrize("own", [1, 2, 3, 141])
def test_explain_passes_asapgraphs_own_statuses_through(own):
    from asapgraph.comm.watchdog import explain

    recs = _records({0: ["start 100 h", f"end 1000 exit {own}"],
                     1: ["start 101 h", "end 1500 signal 9"]})
    assert explain(own, recs, 2) == ("", own)  # that rank printed its own line
    recs = _records({0: ["start 100 h"], 1: ["start 101 h"]})
    assert explain(own, recs, 2) == ("", own)  # MPI_Abort: the supervisors were killed
    assert explain(own, None, 2) == ("", own)  # no supervisors (off Linux): nothing to check


@pytest.mark.parametrize("status,stopped", [("exit 3", False), ("exit 2", False),
                                             ("exit 7", True), ("signal 9", True)])
def test_wait_job_gives_an_orderly_end_its_time(status, stopped):
    """A rank that ended with asapgraph's own status (a refused input, a run that did
    not converge: decided on every rank) does not start the short grace: the others
    may take longer than it to tear down (64 ranks on 2 cores: > 6 s), and the job used
    to be killed and reported as "mpiexec was killed by SIGKILL", exit 4.  Any other
    end of a rank stops the job after the grace."""
    import subprocess
    import sys

    from asapgraph.comm.watchdog import wait_job

    class Status:  # rank 0 ended as given; rank 1 is still running
        def records(self):
            return _records({0: ["start 100 h", f"end 1000 {status}"], 1: ["start 101 h"]})

    # the child exits 0 only if nobody stops it: rc says which happened, no timing needed
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    try:
        rc = wait_job(proc, Status(), grace=0.2)
    finally:
        proc.kill()
        proc.wait()
    if stopped:  # SIGTERM after the grace (SIGKILL after twice the grace, on a busy host)
        assert rc in (-signal.SIGTERM, -signal.SIGKILL), rc
    else:
        assert rc == 0, rc  # ran to its end (the orderly grace is 60 s)


def test_explain_without_reports():
    from asapgraph.comm.watchdog import EXIT_RANK_DIED, explain

    assert explain(0, None, 2) == ("", 0)  # no supervisors; explain(0, {}, 2): see below
    assert explain(130, {}, 2) == ("asapgraph: interrupted", 130)  # Ctrl-C
    assert explain(-9, {}, 2) == ("asapgraph: mpiexec was killed by SIGKILL; the job was "
                                  "stopped", EXIT_RANK_DIED)
    line, code = explain(9, {}, 2)
    assert code == EXIT_RANK_DIED and line == ("asapgraph: mpiexec failed with exit status 9 "
                                               "before any rank started")
    line, code = explain(9, _records({0: ["start 100 h"], 1: ["start 101 h"]}), 2)
    assert code == EXIT_RANK_DIED and "no report of how ranks 0, 1 ended" in line, line


def test_explain_does_not_trust_mpiexecs_status_alone():
    """An "mpiexec" that runs no rank: exit 0 is not a success (``--mpiexec /bin/true``
    exited 0 with no output and no line), and asapgraph's own statuses pass through only
    when a rank started, i.e. printed its line (``--mpiexec /bin/false`` exited 1
    silently)."""
    from asapgraph.comm.watchdog import EXIT_RANK_DIED, explain

    line, code = explain(0, {}, 2, "/bin/true")
    assert code == EXIT_RANK_DIED and line == ("asapgraph: mpiexec /bin/true exited with "
                                               "status 0 but started no rank (is it an MPI "
                                               "launcher?)")
    line, code = explain(0, _records({0: ["start 100 h", "end 1000 exit 0"]}), 2, "/x/mpx")
    assert code == EXIT_RANK_DIED and "/x/mpx exited with status 0 but only 1 of 2" in line
    # not started by an MPI launcher (no rank number): the report is keyed by pid
    line, code = explain(0, _records({"pid7": ["start 7 h", "end 1000 exit 0"]}), 1, "/x/m")
    assert code == EXIT_RANK_DIED and "only 0 of 1 ranks" in line, line
    ok = _records({0: ["start 100 h", "end 1000 exit 0"], 1: ["start 101 h", "end 1 exit 0"]})
    assert explain(0, ok, 2, "/x/mpiexec") == ("", 0)
    assert explain(0, None, 2, "/x/mpiexec") == ("", 0)  # no supervisors: nothing to check
    for own in (1, 2, 3):
        line, code = explain(own, {}, 2, "/bin/false")
        assert code == EXIT_RANK_DIED and line == (f"asapgraph: mpiexec /bin/false failed with "
                                                   f"exit status {own} before any rank "
                                                   "started")


@pytest.mark.parametrize("fake,what", [("/bin/true", "exited with status 0 but started no "
                                                      "rank"),
                                        ("/bin/false", "failed with exit status 1 before any "
                                                       "rank started")])
def test_a_bad_mpiexec_is_named(tmp_path, fake, what):
    """``--mpiexec`` that is no MPI launcher: one line naming it and what went wrong, exit
    status 4, no output (it used to exit 0 with no file and no JSON, or 1 silently)."""
    out = tmp_path / "t.csv"
    r = subprocess.run([sys.executable, "-m", "asapgraph", "pagerank", "rmat:8", "--np", "2",
                        "--mpiexec", fake, "-o", str(out), "--json", "-q"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 4 and r.stdout == "" and not out.exists(), r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"asapgraph: mpiexec {fake} {what}"), lines


def test_status_socket_round_trip():
    """The ranks' reports travel through an abstract socket: no file is ever created."""
    from asapgraph.comm import watchdog

    st = watchdog.StatusSocket()
    if st.address is None:
        pytest.skip("no abstract unix sockets here")
    try:
        send = watchdog._sender(st.address, "1")
        send("start 4242 hostA")
        send("end 77 signal 9")
        assert st.records() == {1: {"pid": 4242, "host": "hostA", "end_ns": 77,
                                    "how": "signal", "value": 9}}
    finally:
        st.close()
    send("end 78 exit 0")  # the launcher is gone: silently nobody to tell


def test_supervise_is_a_no_op_without_the_launchers_variables(monkeypatch):
    """Ranks of the user's own mpiexec: no fork, the environment untouched."""
    from asapgraph.comm import watchdog

    def no_fork():
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    env = {"PMI_RANK": "0", watchdog.ENV_STATUS: "x"}  # one of the two: not ours
    watchdog.supervise(env)
    assert env == {"PMI_RANK": "0", watchdog.ENV_STATUS: "x"}
    watchdog.supervise({})


def test_launcher_identity_tells_a_recycled_pid_apart():
    from asapgraph.comm.watchdog import is_alive, process_identity

    me = process_identity()
    assert is_alive(me) is True
    pid, start, boot, ns = me.split(":", 3)
    assert is_alive(f"{pid}:{int(start) + 1}:{boot}:{ns}") is False  # same pid, not the same process
    assert is_alive(f"{pid}:{start}:another-boot:{ns}") is None  # another host: cannot tell
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    ident = process_identity(p.pid)
    t0 = time.time()
    while is_alive(ident) and time.time() - t0 < 30:  # exited, not reaped (a zombie): gone
        time.sleep(0.05)
    assert is_alive(ident) is False and p.poll() is not None
    


# ----------------------------------------------------------------------------- bad input


def _bad_input_case(tmp_path, case):
    good = tmp_path / "good.txt"
    good.write_text("# a small graph\n1 2\n2 3\n3 1\n3 4\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n2 3\n" + "".join(f"{i} {i + 1}\n" for i in range(4, 200)) + "7 x\n")
    (tmp_path / "adir").mkdir(exist_ok=True)
    (tmp_path / "empty.txt").write_text("# only a comment\n")
    return {
        "bad line": ["bad.txt"],
        "missing file": ["missing.txt"],
        "input is a directory": ["adir"],
        "unwritable -o": ["good.txt", "-o", "/proc/asapgraph-out.csv"],  # even root cannot
        "-o dir is a file": ["good.txt", "-o", "good.txt/out.csv"],
        "-o dir missing": ["good.txt", "-o", "nowhere/out.csv"],
        "-o is a directory": ["good.txt", "-o", "adir.csv"],
        "bad --source": ["good.txt", "--source", "99"],
        "no edges": ["empty.txt"],
    }[case]


CASES = [  # every subcommand, every kind of bad input
    ("pagerank", "bad line"), ("pagerank", "unwritable -o"), ("pagerank", "-o dir is a file"),
    ("katz", "missing file"), ("katz", "-o is a directory"), ("hits", "-o dir missing"),
    ("hits", "input is a directory"), ("wcc", "unwritable -o"), ("wcc", "bad line"),
    ("sssp", "bad --source"), ("bfs", "bad --source"), ("bfs", "-o dir is a file"),
    ("labelprop", "missing file"), ("run", "unwritable -o"), ("run", "bad line"),
    ("katz", "no edges"), ("pagerank", "no edges"),
]


@pytest.mark.parametrize("command,case", CASES)
def test_bad_input_reads_the_same_on_1_and_2_ranks(tmp_path, command, case):
    args = _bad_input_case(tmp_path, case)
    if case == "-o is a directory":
        (tmp_path / "adir.csv").mkdir()
    if command in ("sssp", "bfs") and case != "bad --source":
        args += ["--source", "1"]
    cmd = [command] if command != "run" else ["run", "asapgraph.programs:WCCProgram"]
    runs = []
    for np_ in ("1", "2"):
        r = subprocess.run([sys.executable, "-m", "asapgraph", *cmd, *args, "-q", "--np", np_],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
        runs.append((r.returncode, r.stderr, r.stdout))
    (c1, e1, o1), (c2, e2, o2) = runs
    assert c1 == 2 and c2 == 2, runs
    assert e1 == e2 and o1 == o2 == "", runs
    assert len(e1.splitlines()) == 1 and re.match(r"[^ :]+(:\d+)?: ", e1), e1
    for noise in ("Error", "Exception", "Traceback", "Abort", "rank"):
        assert noise not in e1, e1
    assert not list(tmp_path.glob("**/.*.tmp")), "a temporary file was left behind"


@pytest.mark.parametrize("command", ["pagerank", "wcc"])
def test_failed_write_after_the_run_reads_the_same(tmp_path, command):
    """-o passes the early check but the final write fails (a full disk, simulated by a
    sitecustomize in every process): rank 0's failure is agreed, no MPI_Abort."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\n_real = os.replace\n\n\n"
        "def _replace(src, dst, *a, **k):\n"
        "    if str(dst).endswith('full.csv'):\n"
        "        raise OSError(28, os.strerror(28))\n"
        "    return _real(src, dst, *a, **k)\n\n\n"
        "os.replace = _replace\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    runs = []
    for np_ in ("1", "2"):
        r = subprocess.run([sys.executable, "-m", "asapgraph", command, "rmat:8", "-q", "-o",
                            "full.csv", "--np", np_], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
        runs.append((r.returncode, r.stderr))
    assert runs[0] == runs[1] == (2, "full.csv: cannot write: No space left on device\n"), runs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
