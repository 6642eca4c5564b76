"""The layering of the package (ARCHITECTURE.md), checked by import-linter.

Contracts live in ``pyproject.toml`` (``[tool.importlinter]``): imports go one way,
cli > interop > bench > programs > engine > partition > comm > graph > kernels, and only
``asapgraph.comm`` imports mpi4py.  Function-level (lazy) imports count too.
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(ROOT, "pyproject.toml")


def test_import_contracts_hold():
    pytest.importorskip("importlinter", reason="import-linter is in the test extra")
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    if not os.path.exists(exe):
        pytest.fail("lint-imports is not installed beside this Python (pip install '.[test]')")
    r = subprocess.run([exe, "--config", PYPROJECT, "--no-cache"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "2 kept, 0 broken" in r.stdout, r.stdout[-2000:]


def test_importing_asapgraph_does_not_import_mpi4py():
    code = ("import sys, asapgraph, asapgraph.engine, asapgraph.partition, asapgraph.cli;"
            "print('mpi4py' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, cwd=os.path.dirname(ROOT))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


# ----------------------------------------------------------------------------- source tree


def _source_copy(tmp_path, built):
    """A copy of the source package under ``tmp_path`` (sources only; with ``built`` an
    empty file named like the in-place ``_graph`` extension module)."""
    import shutil
    from importlib.machinery import EXTENSION_SUFFIXES

    shutil.copytree(os.path.join(ROOT, "asapgraph"), tmp_path / "asapgraph",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
    if built:
        (tmp_path / "asapgraph" / "kernels" / ("_graph" + EXTENSION_SUFFIXES[0])).write_bytes(b"")
    return tmp_path


def _py(args, cwd):
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_unbuilt_source_tree_is_refused_at_import(tmp_path):
    """Python run from a clone whose kernels are not built imports the source tree first
    (cwd is on sys.path): ``import asapgraph`` raises one clear ImportError, ``python -m
    asapgraph`` prints that line alone and exits 1 (it was "internal error: No module named
    'asapgraph.kernels._graph' (this is a bug)" and "cannot import name '_parse'")."""
    root = _source_copy(tmp_path, built=False)
    want = f"asapgraph is being imported from its source tree at {root}, whose compiled " \
           "kernels are not built: run from another directory, or install with " \
           "`pip install -e .`"
    for args in (["-m", "asapgraph", "pagerank", "rmat:8"], ["-m", "asapgraph.bench.commands",
                                                             "--list"]):
        r = _py(args, root)
        assert r.returncode == 1 and r.stdout == "" and r.stderr == want + "\n", r.stderr
    r = _py(["-c", "from asapgraph import pagerank"], root)
    assert r.returncode == 1 and r.stderr.splitlines()[-1] == "ImportError: " + want, r.stderr


def test_built_source_tree_and_other_directories_import(tmp_path):
    """In-place extension modules (an editable install, ``build_ext --inplace``) pass the
    check; from another directory the installed package is imported."""
    root = _source_copy(tmp_path / "clone", built=True)
    r = _py(["-c", "import asapgraph; print(asapgraph.__file__)"], root)
    assert r.returncode == 0 and r.stdout.strip() == str(root / "asapgraph" / "__init__.py"), \
        r.stderr
    r = _py(["-c", "import asapgraph; print(asapgraph.__file__)"], tmp_path)
    # (not the copy: the installed package, wherever the checkout lives)
    assert r.returncode == 0 and not r.stdout.strip().startswith(str(root)), r.stderr
