"""asapgraph.graph.io.output: exact %.17g text, every file format round-trips, atomic writes."""
import gzip
import json
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asapgraph.graph.io import rowformat
from asapgraph.errors import InputError
from asapgraph.graph.io.output import (atomic_write,
    format_rows,
    format_top,
    json_dumps,
    top_order,
    write_values)


def py_rows(cols, sep=","):
    """The reference: Python's own int and '%.17g' formatting, one row at a time."""
    out = []
    for row in zip(*(c.tolist() for c in cols)):
        out.append(sep.join(str(x) if isinstance(x, int) else "%.17g" % x for x in row) + "\n")
    return "".join(out).encode()


def adversarial_floats():
    p = 10.0 ** np.arange(-30, 31)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, 2.5, 1e16,
               1e17, 9.999999999999999e16, 123456789012345678.0, 1e-4, 9.99999999999999e-5,
               1e-5, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e22, 1e21,
               0.30000000000000004, 1e100, 1.5e-300, 4503599627370496.5, 9007199254740993.0,
               12345678901234567890.0, 0.000123, 99999.999999999985, 1e15 + 0.5]
    return np.concatenate([p, np.nextafter(p, 0), np.nextafter(p, np.inf), -p, special])


@pytest.fixture(params=["words", "slots"])
def layout(request, monkeypatch):
    """Run a test with the fast word layout and with the general byte-slot layout."""
    monkeypatch.setattr(rowformat, "_force_slots", request.param == "slots")
    return request.param


def test_format_rows_matches_printf_adversarial(layout):
    v = adversarial_floats()
    ids = np.arange(v.size, dtype=np.int64) * 7919 - 13
    assert format_rows([ids, v]) == py_rows([ids, v])
    assert format_rows([v, ids, v], sep="\t") == py_rows([v, ids, v], sep="\t")
    big = np.array([0, -1, 9, 10, 9999, 10000, 2**63 - 1, -2**63, -(2**62)], dtype=np.int64)
    assert format_rows([big]) == py_rows([big])
    assert format_rows([big[big != -2**63], big[:8].astype(float)]) == \
        py_rows([big[big != -2**63], big[:8].astype(float)])


def test_format_rows_matches_printf_random(rng, layout):
    n = 20000
    v = np.concatenate([rng.random(n) / rng.integers(1, 10**7, n),
                        rng.standard_normal(n) * 10.0 ** rng.integers(-40, 40, n),
                        rng.integers(-2**62, 2**62, n).view(np.float64)])  # random bit patterns
    ids = rng.integers(0, 2**62, v.size)
    assert format_rows([ids, v], sep="\t") == py_rows([ids, v], sep="\t")
    back = np.array([float(line.split(b"\t")[1]) for line in format_rows([ids, v], "\t").splitlines()])
    fin = np.isfinite(v)
    assert np.array_equal(back[fin].view(np.int64), v[fin].view(np.int64))  # bit-exact


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=50),
       st.integers(min_value=-2**63 + 1, max_value=2**63 - 1))
def test_format_rows_hypothesis(vals, i0):
    v = np.array(vals, dtype=np.float64)
    ids = np.full(v.size, i0, dtype=np.int64)
    assert format_rows([ids, v]) == py_rows([ids, v])


def test_format_rows_chunks_and_threads(monkeypatch, rng, layout):
    monkeypatch.setattr(rowformat, "_CHUNK", 1000)
    v = rng.random(4321) * 1e-3
    ids = rng.permutation(4321)
    ref = py_rows([ids, v])
    assert format_rows([ids, v], threads=1) == ref
    assert format_rows([ids, v], threads=2) == ref
    assert format_rows([ids], threads=2) == "".join(f"{i}\n" for i in ids.tolist()).encode()


def test_format_rows_empty_and_errors():
    assert format_rows([np.zeros(0, np.int64), np.zeros(0)]) == b""
    with pytest.raises(ValueError):
        format_rows([np.zeros(3, np.int64), np.zeros(2)])
    with pytest.raises(ValueError):
        format_rows([np.zeros(3, np.int64)], sep=";;")


def _read_text(path):
    op = gzip.open if str(path).endswith(".gz") else open
    with op(path, "rt") as f:
        lines = f.read().splitlines()
    sep = "\t" if ".tsv" in str(path).lower() else ","
    head = lines[0].split(sep)
    rows = [ln.split(sep) for ln in lines[1:]]
    ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
    vals = np.array([float(r[1]) for r in rows])
    return head, ids, vals


@pytest.mark.parametrize("name", ["r.csv", "r.tsv", "r.csv.gz", "r.TSV.gz", "r.npy", "r.parquet"])
def test_write_values_round_trip(tmp_path, rng, name):
    n = 3000
    ids = rng.choice(10**12, n, replace=False).astype(np.int64)
    vals = rng.random(n) ** 7
    vals[:3] = [0.0, 1e-300, 1.0]
    p = tmp_path / name
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    write_values(p, ids, {"rank": vals})
    if name.endswith(".npy"):
        rec = np.load(p, allow_pickle=False)
        assert rec.dtype.names == ("node", "rank")
        got_ids, got = rec["node"], rec["rank"]
    elif name.endswith(".parquet"):
        import pyarrow.parquet as pq

        t = pq.read_table(p)
        assert t.column_names == ["node", "rank"]
        got_ids, got = t["node"].to_numpy(), t["rank"].to_numpy()
    else:
        head, got_ids, got = _read_text(p)
        assert head == ["node", "rank"]
    np.testing.assert_array_equal(got_ids, ids)
    np.testing.assert_array_equal(got, vals)  # exact: %.17g round-trips
    assert [f for f in os.listdir(tmp_path) if f != name] == []  # no temp file left


def test_write_values_gzip_is_reproducible(tmp_path):
    ids, v = np.arange(10), np.linspace(0, 1, 10)
    write_values(tmp_path / "a.csv.gz", ids, {"x": v})
    write_values(tmp_path / "b.csv.gz", ids, {"x": v})
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()


@pytest.mark.parametrize("name", ["r.txt", "r", "r.npy.gz", "r.json"])
def test_write_values_bad_extension(tmp_path, name):
    with pytest.raises(InputError, match="format|gzip"):
        write_values(tmp_path / name, np.arange(3), {"rank": np.ones(3)})
    assert os.listdir(tmp_path) == []


def test_parquet_without_pyarrow(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(InputError, match="pyarrow"):
        write_values(tmp_path / "r.parquet", np.arange(3), {"rank": np.ones(3)})
    assert os.listdir(tmp_path) == []


def test_atomic_write_failure_keeps_old_file(tmp_path):
    p = tmp_path / "out.csv"
    p.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(p) as f:
            f.write(b"partial")
            raise RuntimeError("boom")
    assert p.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.csv"]
    with atomic_write(p, "w", fsync=True) as f:
        f.write("new\n")
    assert p.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["out.csv"]
    umask = os.umask(0)
    os.umask(umask)
    assert (p.stat().st_mode & 0o777) == (0o666 & ~umask)


def test_write_values_failure_midway_leaves_nothing(tmp_path, monkeypatch):
    p = tmp_path / "out.csv"
    p.write_text("precious\n")

    def boom(*a, **k):
        raise KeyboardInterrupt

    from asapgraph.graph.io import rowformat

    monkeypatch.setattr(rowformat, "format_rows", boom)  # write_values imports it on use
    with pytest.raises(KeyboardInterrupt):
        write_values(p, np.arange(5), {"rank": np.ones(5)})
    assert p.read_text() == "precious\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_output_directory_problems_say_what_is_wrong(tmp_path, monkeypatch):
    from asapgraph.graph.io.output import check_output_dir

    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.txt").write_text("x\n")
    (tmp_path / "d.csv").mkdir()
    cases = {  # path as typed -> message
        "f.txt/o.csv": "f.txt/o.csv: f.txt is not a directory",
        "f.txt/a/b/o.csv": "f.txt/a/b/o.csv: f.txt is not a directory",
        "no/o.csv": "no/o.csv: directory no does not exist",
        "d.csv": "d.csv: is a directory",
        "/proc/o.csv": "/proc/o.csv: cannot create a file in directory /proc: ",
    }
    for path, msg in cases.items():
        with pytest.raises(InputError) as e:
            check_output_dir(path)
        assert str(e.value).startswith(msg), (path, str(e.value))
        if path != "d.csv":  # writing says the same
            with pytest.raises(InputError) as w:
                write_values(path, np.arange(2), {"rank": np.ones(2)})
            assert str(w.value) == str(e.value)
    check_output_dir("ok.csv")  # fine: nothing left behind
    assert sorted(os.listdir(tmp_path)) == ["d.csv", "f.txt"]


def test_atomic_write_os_error_is_one_input_line(tmp_path, monkeypatch):
    import errno

    p = tmp_path / "out.csv"

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)  # the rename of atomic_write
    with pytest.raises(InputError) as e:
        write_values(p, np.arange(3), {"rank": np.ones(3)})
    assert str(e.value) == f"{p}: cannot write: No space left on device"
    assert os.listdir(tmp_path) == []


def test_top_order_and_format_top(rng):
    n = 500
    ids = rng.permutation(10 * n)[:n].astype(np.int64)
    vals = rng.integers(0, 20, n).astype(float)  # many ties
    for k in (0, 1, 7, n, n + 5):
        ref = sorted(range(n), key=lambda i: (-vals[i], ids[i]))[:k]
        assert top_order(ids, vals, k).tolist() == ref
    tab = format_top(ids, vals, 5, name="score").splitlines()
    assert tab[0].split() == ["rank", "node", "score"]
    ref = sorted(range(n), key=lambda i: (-vals[i], ids[i]))[:5]
    assert [(int(r.split()[1]), float(r.split()[2])) for r in tab[1:]] == \
        [(int(ids[i]), vals[i]) for i in ref]
    assert [int(r.split()[0]) for r in tab[1:]] == [1, 2, 3, 4, 5]
    assert format_top(ids, vals, 0) == ""


def test_json_dumps():
    s = json_dumps({"a": np.int64(3), "b": np.float32(0.5), "c": np.arange(3), "d": float("nan"),
                    "e": [np.inf, 1.0], "f": np.bool_(True)})
    assert "\n" not in s
    assert json.loads(s) == {"a": 3, "b": 0.5, "c": [0, 1, 2], "d": None, "e": [None, 1.0],
                             "f": True}


@pytest.mark.parametrize("ext", ["csv", "tsv", "csv.gz", "npy"])
def test_labels_written_as_they_read_back(tmp_path, ext):
    """``write_values(path, res.vertices(), ...)`` of a labelled graph: tuple labels raised
    TypeError (cast to int64), float labels were truncated (4.5 written as 4), ints past
    int64 raised, and names with a separator or a quote were written bare, so csv/pandas
    read back other names ('"a"' as 'a', 'a,b' as two fields)."""
    pd = pytest.importorskip("pandas")
    from asapgraph import write_values

    labels = np.array([("t", 1), "a,b", 'q"x', 4.5, 2**70, '"a"', " sp"], dtype=object)
    labels[0] = ("t", 1)
    ranks = np.linspace(0.1, 0.7, labels.size)
    p = tmp_path / f"r.{ext}"
    write_values(p, labels, {"rank": ranks})
    want = ["('t', 1)", "a,b", 'q"x', "4.5", str(2**70), '"a"', " sp"]
    if ext == "npy":
        got = np.load(p)
        assert got["node"].tolist() == want and np.array_equal(got["rank"], ranks)
    else:
        df = pd.read_csv(p, sep="\t" if ext == "tsv" else ",", dtype={"node": str},
                         skipinitialspace=False, keep_default_na=False)
        assert df["node"].tolist() == want and np.array_equal(df["rank"].to_numpy(), ranks)
    # integer ids (also as an object array of small ints) stay integers
    write_values(p, np.array([3, 1, 2], dtype=object), {"rank": ranks[:3]})
    if ext == "npy":
        assert np.load(p)["node"].dtype == np.int64


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_atomic_write_killed_leaves_no_temp(tmp_path, signame):
    """kill (SIGTERM) or a closed terminal (SIGHUP) during the write left the hidden
    temporary '.out.csv.XXXX.tmp' behind (the default action ends the process without
    the cleanup); now it is removed, the old file kept, and the process still ends by
    that signal."""
    import signal
    import subprocess

    code = ("import sys, time\n"
            "from asapgraph.graph.io.atomic import atomic_write\n"
            "with atomic_write('out.csv') as f:\n"
            "    f.write(b'partial')\n"
            "    print('ready', flush=True)\n"
            "    time.sleep(60)\n")
    (tmp_path / "out.csv").write_text("old\n")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        sig = getattr(signal, signame)
        p.send_signal(sig)
        assert p.wait(30) == -sig
    finally:
        p.kill()
        p.wait()
    assert (tmp_path / "out.csv").read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["out.csv"]


def test_top_order_ties_as_printed():
    """Values equal to the printed precision are ties, broken by the smaller id: a
    PageRank on a cycle gives every vertex 1/n up to the last bits, which differ between
    modes and rank counts (the 4-rank ASAP run listed a 3-cycle as 2, 1, 0 and BSP as
    0, 1, 2).  Values that print differently keep their order."""
    from asapgraph.graph.io.tables import top_order

    ids = np.array([2, 1, 0, 5, 6])
    v = np.array([1 / 3 + 1e-16, 1 / 3, 1 / 3 - 5e-17, 0.1, 0.3333333334])
    assert ids[top_order(ids, v, 5)].tolist() == [6, 0, 1, 2, 5]
    # the k-th value's ties at the boundary are all candidates, the smaller ids win
    assert ids[top_order(ids, v, 2)].tolist() == [6, 0]
    assert ids[top_order(ids, v[::-1].copy(), 3)].tolist() == [2, 0, 5]
    # non-finite and zero values keep their places
    w = np.array([0.0, -np.inf, np.nan, 1e-300, -1e-300])
    assert top_order(np.arange(5), w, 5).tolist() == [3, 0, 4, 1, 2]
    # fewer numbers than k: every number, then the NaN (an empty list before)
    assert top_order(np.arange(3), np.array([np.nan, np.nan, 1.0]), 2).tolist() == [2, 0]
    assert top_order(np.arange(4), np.array([np.nan, 0.5, np.nan, 1.0]), 3).tolist() == [3, 1, 0]
