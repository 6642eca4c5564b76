"""User-facing errors.

Every problem with the user's input is an :class:`InputError`; the CLI prints
``str(err)`` as one line on stderr and exits with status 2.
"""


class InputError(ValueError):
    """Bad input: a file, a line in it (optional) and what is wrong.

    ``str(err)`` is ``FILE:LINE: message`` (or ``FILE: message``).
    """

    def __init__(self, path, line, message):
        self.path = str(path) if path is not None else None
        self.line = line
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        where = (self.path or "'' (an empty path)") if self.path is not None else "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"


class NotConvergedError(RuntimeError):
    """An iterative algorithm hit ``max_iter`` before reaching ``tol``."""


#: a named pipe / socket as INPUT (``<(zcat g.gz)``, ``/dev/stdin`` fed by a pipe): the
#: input is opened more than once (format sniffing, then the read; K ranks each open it),
#: and the second open of a drained FIFO waited for a writer forever
PIPE_REFUSAL = ("a pipe, not a regular file: asapgraph opens its input more than once; "
                "save it to a file, or give it as standard input '-' (one process)")


def refuse_pipe(path):
    """Raise InputError when ``path`` (not ``'-'``) is a FIFO or a socket."""
    import os
    import stat

    if path == "-" or not isinstance(path, (str, bytes, os.PathLike)):
        return
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return   # the opener's own message
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        raise InputError(os.fspath(path), None, PIPE_REFUSAL)


def first_bad_line(parse, data, *args):
    """``parse(data, *args)`` of a text's bytes, naming the first bad line of several as
    the edge-list reader does: ``parse`` runs its checks in turn, each raising at its own
    first bad line, so a refusal at line ``L`` gives way to a bad line before ``L`` (the
    lines before ``L`` are parsed again: on the error path only)."""
    try:
        return parse(data, *args)
    except InputError as exc:
        if exc.line is None or exc.line <= 1:
            raise
        cut = 0
        for _ in range(exc.line - 1):   # the start of line exc.line
            cut = data.index(b"\n", cut) + 1
        try:   # (at most one pass per check: the checks before the one that refused
            # line L passed, and its own first bad line is L)
            first_bad_line(parse, data[:cut], *args)
        except InputError as first:
            if first.line is not None:
                raise first from None
        raise
