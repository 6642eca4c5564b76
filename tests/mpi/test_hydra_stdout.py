"""Standard output of ``--np K`` holds the ranks' output alone, not Hydra's own lines.

mpiexec (Hydra) prints its own diagnostics on its standard output -- on a SIGINT
"[mpiexec@host] Sending Ctrl-C to processes as requested" and "Press Ctrl-C again to force
abort", for a rank that died the "BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
banner -- and mpiexec's standard output was the launcher's: they landed in the stdout of
``--json``/``--top`` consumers.  Now every rank writes to the launcher's stdout directly
(rank 0 did already), and mpiexec's own stdout is /dev/null; the launcher says what
happened in its one line on stderr, as before.  The SIGINT case: the Ctrl-C tests of
tests/mpi/test_audit29_mpi.py (stdout empty).
"""
import subprocess
import sys

import pytest

pytestmark = pytest.mark.mpi

PROGRAM = '''import os
if os.environ.get("PMI_RANK") == "1":
    print("hello from rank 1", flush=True)
    os._exit(7)
from asapgraph.programs import VertexProgram


class Quits(VertexProgram):
    combiner = "min"
    accumulative = True

    def init(self, ctx):
        return ctx.ids * 1.0
'''


def test_a_rank_that_died_leaves_no_banner_on_stdout(tmp_path):
    """Rank 1 prints a line and exits with status 7: its line reaches stdout (the other
    ranks' output still does), Hydra's banner does not; stderr names the rank."""
    (tmp_path / "quits.py").write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-m", "asapgraph", "run", "quits.py:Quits", "rmat:8",
                        "-q", "--np", "2"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=180)
    assert r.returncode == 4, r.stderr
    assert r.stdout == "hello from rank 1\n", r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "rank 1 of 2" in lines[0] and "status 7" in lines[0], lines
