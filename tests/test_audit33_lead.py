"""The lead's fixes of the thirty-third session."""
import io

from asapgraph.progress import Progress


class _Writes(io.StringIO):
    """A stream that records each ``write`` call."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def write(self, s):
        self.calls.append(s)
        return super().write(s)


def test_progress_writes_each_line_in_one_call():
    """A progress line reaches the stream in one write, newline included.  print() wrote
    the text and the newline apart: a Ctrl-C between the two left the text in the
    stream's buffer, the interrupted rank's exit flushed it, and the job's one line was
    glued to it ("asapgraph: wave 12, bound 1.2e-03asapgraph: interrupted"; CI failed
    on it once, tests/mpi/test_audit29_mpi.py)."""
    s = _Writes()
    p = Progress(stream=s, interval=0.0)
    p.stage("loading g.txt")
    p.iteration(3, 1.5e-3, what=("wave", "bound"), sent="1 MB")
    p.bytes(10_000_000, 20_000_000, edges=5)
    p.done("converged after 3 iterations")
    assert len(s.calls) == 4, s.calls
    assert all(c.endswith("\n") and c.count("\n") == 1 for c in s.calls), s.calls
    assert s.calls[1] == "asapgraph: wave 3, bound 1.500e-03, sent 1 MB\n"
