"""Audit 31: a differential fuzz of edge lists on 1 and K ranks (one process:
tests/test_audit31.py).  With ``--labels`` rank 0 reads the file with one process's
reader, whose line numbering and bare-CR refusal now match the integer reader's: the same
line on every configuration and with or without ``--labels``."""
import pytest

pytestmark = [pytest.mark.mpi, pytest.mark.timeout(900)]

CONFIGS = [[], ["--np", "2", "--mode", "bsp"], ["--np", "3", "--mode", "asap"]]


@pytest.mark.parametrize("data,line,words", [
    (b"1 2\r2 3\n3\n", 1, "bare CR"),             # was read as a line end (line 3 named)
    (b"1 2\r\n\r\n \r\n2 3\r\n3\r\n", 5, "missing column 2"),   # was line 3
])
def test_labels_and_integer_refused_at_the_same_line(tmp_path, refused_alike, data, line,
                                                     words):
    (tmp_path / "g.txt").write_bytes(data)
    got = {refused_alike(tmp_path, ["wcc", "g.txt", *lab], f"g.txt:{line}:", words,
                         configs=CONFIGS, output="o.csv")
           for lab in ([], ["--labels"])}
    assert len(got) == 1, got
