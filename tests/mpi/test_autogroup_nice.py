"""A niced command's ranks keep its priority under autogroup scheduling
(:func:`asapgraph.comm.mpi.keep_autogroup_nice`): hydra starts every rank in a session of
its own, whose autogroup began at nice 0, so ``nice -n 19 ... --np K`` ranks competed with
every other session at normal priority (benchmarks/REPORT.md, eighteenth session)."""
import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.mpi


def _autogroups_on():
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            on = f.read().strip() == "1"
        with open("/proc/self/autogroup") as f:
            f.read()
        return on
    except OSError:
        return False


needs_autogroup = pytest.mark.skipif(not _autogroups_on(), reason="no autogroup scheduling")

#: each rank writes its line to a file of its own: the ranks' stdout lines, forwarded by
#: mpiexec, can interleave on a busy host ("01 /autogroup-1 nice 19 /autogroup-2 ...")
SHOW = ("from asapgraph.comm.mpi import mpi; MPI = mpi(); r = MPI.COMM_WORLD.Get_rank(); "
        "open(f'rank{r}.txt', 'w').write(' '.join(map(str, (r, "
        "open('/proc/self/autogroup').read().strip(), os.getpriority(os.PRIO_PROCESS, 0)))))")


@needs_autogroup
def test_niced_process_in_a_new_session_gets_its_autogroup_niced(tmp_path):
    """One process in a new session (as hydra starts a rank): without the fix its
    autogroup reads nice 0 whatever the process's nice."""
    code = ("import os; os.nice(19 - os.getpriority(os.PRIO_PROCESS, 0)); "
            "before = open('/proc/self/autogroup').read().strip(); "
            "from asapgraph.comm.mpi import keep_autogroup_nice; "
            "print(before, '|', keep_autogroup_nice(), '|', "
            "open('/proc/self/autogroup').read().strip())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       start_new_session=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    before, got, after = (x.strip() for x in r.stdout.split("|"))
    assert before.endswith("nice 0"), before  # what a new session starts with
    assert got == "19" and after.endswith("nice 19"), r.stdout


@needs_autogroup
def test_autogroup_nice_is_never_lowered(tmp_path):
    """An autogroup already niced beyond the process (here 19, the process at most 19)
    keeps its nice: the function only ever lowers the priority."""
    code = ("import os; open('/proc/self/autogroup', 'w').write('19'); "
            "from asapgraph.comm.mpi import keep_autogroup_nice; "
            "print(os.getpriority(os.PRIO_PROCESS, 0), keep_autogroup_nice(), "
            "open('/proc/self/autogroup').read().strip())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       start_new_session=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert int(out[0]) <= 19 and out[1] == "19" and out[-1] == "19", r.stdout


@needs_autogroup
def test_a_process_that_does_not_lead_its_session_changes_nothing(tmp_path):
    """A niced command started from a shell shares the shell's session (and autogroup):
    the shell's autogroup must not be reniced.  Here the session leader is a process at
    its autogroup's nice, its child is niced 19 further and calls the function."""
    child = ("import os; os.nice(19 - os.getpriority(os.PRIO_PROCESS, 0)); "
             "from asapgraph.comm.mpi import keep_autogroup_nice; "
             "print(keep_autogroup_nice(), flush=True)")
    code = ("import os, subprocess, sys; "
            "before = open('/proc/self/autogroup').read().strip(); "
            f"out = subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, "
            "text=True).stdout.strip(); "
            "print(before, '|', out, '|', open('/proc/self/autogroup').read().strip())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       start_new_session=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    before, got, after = (x.strip() for x in r.stdout.split("|"))
    assert got == "None" and after == before, r.stdout


@needs_autogroup
def test_ranks_of_a_niced_mpiexec_run_at_its_nice(tmp_path):
    """``nice -n 19 mpiexec -n 2 ...``: every rank's autogroup reads nice 19 once the rank
    imported MPI through the engine (:func:`asapgraph.comm.mpi.mpi`)."""
    exe = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    exe = exe if os.access(exe, os.X_OK) else shutil.which("mpiexec")
    if exe is None:
        pytest.skip("no mpiexec available")
    r = subprocess.run(["nice", "-n", "19", exe, "-n", "2", sys.executable, "-c",
                        "import os; " + SHOW], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path, start_new_session=True)
    assert r.returncode == 0, r.stderr
    lines = sorted((tmp_path / f).read_text().split() for f in ("rank0.txt", "rank1.txt"))
    assert [ln[0] for ln in lines] == ["0", "1"], r.stdout
    for ln in lines:
        assert ln[-1] == "19" and ln[-2] == "19" and ln[-3] == "nice", r.stdout


@needs_autogroup
def test_ranks_of_the_np_launcher_run_at_its_nice(tmp_path):
    """``nice -n 19 asapgraph ... --np K``: hydra starts each rank's supervisor
    (:mod:`asapgraph.comm.watchdog`) in a session of its own and the rank is its child,
    so the rank cannot renice the session's autogroup; the supervisor does, before it
    forks.  Here a niced process in a new session with the launcher's variables set calls
    ``supervise()``; the rank (its child) reports its autogroup."""
    from asapgraph.comm import watchdog

    top = os.path.dirname(os.path.dirname(os.path.abspath(watchdog.__file__)))
    status = watchdog.StatusSocket()
    if status.address is None:
        pytest.skip("no abstract-namespace socket")
    code = ("import os, sys; os.nice(19 - os.getpriority(os.PRIO_PROCESS, 0)); "
            f"sys.path.insert(0, {os.path.dirname(top)!r}); "
            "from asapgraph.comm import watchdog; me = os.getpid(); watchdog.supervise(); "
            "print(os.getpid() != me, os.getsid(0) != os.getpid(), "
            "open('/proc/self/autogroup').read().strip(), flush=True)")
    env = dict(os.environ, **{watchdog.ENV_STATUS: status.address,
                              watchdog.ENV_LAUNCHER: watchdog.process_identity()})
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           start_new_session=True, timeout=60, cwd=tmp_path, env=env)
    finally:
        status.close()
    assert r.returncode == 0, r.stderr
    forked, not_leader, *group = r.stdout.split()
    assert forked == "True" and not_leader == "True", r.stdout  # the rank, under a supervisor
    assert group[-2:] == ["nice", "19"], r.stdout
