"""Verifier exceptions of the copy dialect: each error carries a note with the fix."""

from __future__ import annotations

from xdsl.utils.exceptions import VerifyException


class CopyVerifyException(VerifyException):
    """A verifier error with a note that tells the user how to fix it.

    `str(exc)` is the message alone (the spec of the invalid IR); `exc.note` is the
    fix, printed by copy-opt as a `note:` line under the error.
    """

    def __init__(self, message: str, note: str | None = None):
        super().__init__(message)
        self.note = note
