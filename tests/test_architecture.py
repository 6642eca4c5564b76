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
