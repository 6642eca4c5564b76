"""Load a user's program from ``module:Class`` or ``path/to/file.py:Class`` (for the CLI)."""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys


def load_program(spec, **params):
    """Import a vertex program named by ``spec`` and instantiate it with ``params``.

    Parameters
    ----------
    spec : str
        ``package.module:ClassName`` (imported normally, so the module must be on
        ``sys.path``) or ``some/file.py:ClassName`` (imported from the file).  An object
        that is not a class (e.g. an instance) is returned as is.

    Raises
    ------
    ValueError
        Malformed spec, or the module has no such attribute.
    """
    if ":" not in spec:
        raise ValueError(f"program spec must be MODULE:CLASS or FILE.py:CLASS, got {spec!r}")
    mod_name, _, attr = spec.rpartition(":")
    if mod_name.endswith(".py") or os.sep in mod_name:
        path = os.path.abspath(mod_name)
        if not os.path.exists(path):
            raise ValueError(f"program file {mod_name!r} does not exist")
        name = "asapgraph_user_" + os.path.splitext(os.path.basename(path))[0]
        s = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(s)
        sys.modules[name] = module
        s.loader.exec_module(module)
    else:
        module = importlib.import_module(mod_name)
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise ValueError(f"{mod_name} has no attribute {attr!r}") from None
    return obj(**params) if isinstance(obj, type) else obj
