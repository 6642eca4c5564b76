"""Atomic output files: a temporary file next to the target, renamed over it on success.

Rationale
---------
:func:`atomic_write` writes to a temporary file in the target's directory and
``os.replace``-s it over the target only on success, so a failed or interrupted run
never leaves a half-written file and never touches a pre-existing one (the rename is
atomic within one file system, hence the temporary file beside the target, not in
``/tmp``).  :func:`check_output_dir` makes the same checks up front (the CLI calls it
before a long run), so a bad ``-o`` fails in a second with the message the write would
give: ``PATH: reason`` as an :class:`asapgraph.errors.InputError`.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import tempfile

from asapgraph.errors import InputError

__all__ = ["atomic_write", "check_output_dir", "output_format", "refuse_directory", "FORMATS"]

#: Output formats chosen by extension (a trailing ``.gz`` means gzip for text formats).
FORMATS = (".csv", ".tsv", ".npy", ".parquet")


def output_format(path):
    """``(format, gzipped)`` for an output path, from its extension.

    Raises
    ------
    InputError
        For an unknown extension, or ``.parquet`` without pyarrow.
    """
    p = os.fspath(path)
    refuse_directory(p)
    low = p.lower()
    gz = low.endswith(".gz")
    if gz:
        low = low[:-3]
    ext = os.path.splitext(low)[1]
    if ext not in FORMATS:
        raise InputError(p, None, f"unknown output format {ext or '(no extension)'!r}; "
                         "use .csv, .tsv, .npy or .parquet (.csv.gz/.tsv.gz for gzip)")
    if gz and ext not in (".csv", ".tsv"):
        raise InputError(p, None, f"gzip output is only supported for .csv and .tsv, not {ext}")
    if ext == ".parquet":
        try:
            importlib.import_module("pyarrow")
            importlib.import_module("pyarrow.parquet")
        except ImportError:
            raise InputError(p, None, "writing .parquet needs pyarrow (pip install pyarrow); "
                             "use .csv, .tsv or .npy instead") from None
    return ext[1:], gz


def refuse_directory(path, example="out.csv"):
    """``-o /tmp`` (or ``out/``): a directory, not an output file; refused before the
    extension is looked at (it read "unknown output format '(no extension)'", and
    ``convert``/``generate`` "needs the extension .asg" / "unknown output format")."""
    path = os.fspath(path)
    if os.path.isdir(path) or path.endswith(("/", os.sep)):
        what = "is a directory" if os.path.isdir(path) else "names a directory"
        example = os.path.join(path, example)
        raise InputError(path, None, f"{what}, not an output file: give a file name, such "
                                     f"as {example}")


def _temp_in(path):
    """``(fd, name)`` of a new temporary file next to ``path``; an unusable directory is
    an :class:`InputError` naming ``path`` and the reason (:func:`check_output_dir`)."""
    d = os.path.dirname(os.path.abspath(path))
    try:
        return tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                                dir=d)
    except OSError as exc:
        shown = os.path.dirname(path) or "."
        probe = shown  # the deepest existing ancestor, spelled as the user did
        while probe and not os.path.lexists(probe) and os.path.dirname(probe) != probe:
            probe = os.path.dirname(probe)
        if probe and os.path.lexists(probe) and not os.path.isdir(probe):
            raise InputError(path, None, f"{probe} is not a directory") from None
        if not os.path.isdir(d):
            raise InputError(path, None, f"directory {shown} does not exist") from None
        raise InputError(path, None, f"cannot create a file in directory {shown}: "
                                     f"{exc.strerror or exc}") from None


def check_output_dir(path):
    """Fail now, as writing ``path`` would: its directory is missing, is not a
    directory or refuses a new file (read-only, no permission), or ``path`` is a
    directory.  Creates and removes a temporary file next to ``path``.

    Raises
    ------
    InputError
        ``PATH: reason``, the same text as :func:`atomic_write` would give.
    """
    path = os.fspath(path)
    refuse_directory(path)
    fd, tmp = _temp_in(path)
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


class _Terminated(BaseException):
    """SIGTERM/SIGHUP arrived while a temporary output file existed."""

    def __init__(self, sig):
        super().__init__(sig)
        self.sig = sig


def _raise_terminated(sig, frame):
    raise _Terminated(sig)


def _catch_termination():
    """Make SIGTERM and SIGHUP raise (so that the temporary file is removed) where they
    would kill the process outright (default action, main thread); returns the handlers
    to restore.  Without this, ``kill`` or a closed terminal during the write left a
    hidden ``.NAME.XXXX.tmp`` next to the output."""
    import signal
    import threading

    old = {}
    if threading.current_thread() is not threading.main_thread():
        return old
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None and signal.getsignal(sig) is signal.SIG_DFL:
            old[sig] = signal.signal(sig, _raise_terminated)
    return old


def _restore(old):
    import signal

    for sig, h in old.items():
        signal.signal(sig, h)


def _die_of(sig):
    """End the process by signal ``sig`` after the cleanup, as it would have ended."""
    import signal

    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    raise SystemExit(128 + sig)   # (not reached where the signal kills)


@contextlib.contextmanager
def atomic_write(path, mode="wb", fsync=False):
    """Open a temporary file next to ``path``; rename it over ``path`` on success.

    Parameters
    ----------
    path : str or path-like
        Final destination.  Its directory must exist.
    mode : {"wb", "w"}
        Binary or text mode of the yielded file object.
    fsync : bool
        Flush the file to stable storage before the rename.

    Yields
    ------
    file object
        Write the whole content to it.  If the ``with`` block raises (including
        ``KeyboardInterrupt``) the temporary file is removed and ``path`` is left
        exactly as it was.
    """
    path = os.fspath(path)
    old_handlers = _catch_termination()
    try:
        fd, tmp = _temp_in(path)
    except BaseException as exc:
        _restore(old_handlers)
        if isinstance(exc, _Terminated):
            _die_of(exc.sig)
        raise
    try:
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        try:  # mkstemp creates 0600; give the file the usual umask-derived mode
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _restore(old_handlers)
        old_handlers = {}
        if isinstance(exc, _Terminated):
            _die_of(exc.sig)
        if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            raise InputError(path, None, f"cannot write: {exc.strerror or exc}") from None
        raise
    finally:
        _restore(old_handlers)
