"""The one exception type for mistakes a user can fix: a bad file, an unknown name, a missing resource.

The command line prints a :class:`BodegaError` as one line (``bodega attack: error: ...``) and
exits with status 2; any other exception is a bug and propagates with its traceback. It is its own type, not a
:class:`ValueError`, so that ``except ValueError`` around a parse never swallows a user's mistake by accident.
"""
from __future__ import annotations


class BodegaError(Exception):
    """A user mistake; the message names the file or option at fault and how to fix it."""


class MissingFileError(BodegaError, FileNotFoundError):
    """A file or folder the user must provide (or make with a named command) is not there.

    Also a :class:`FileNotFoundError`, so code that tests for a missing file keeps working.
    """


class UnknownNameError(BodegaError, KeyError):
    """A task, attacker, profile, resource role or other name that the package does not know.

    Also a :class:`KeyError`, as a failed look-up in a registry was before.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
