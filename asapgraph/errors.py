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
        where = self.path if self.path is not None else "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"


class NotConvergedError(RuntimeError):
    """An iterative algorithm hit ``max_iter`` before reaching ``tol``."""
