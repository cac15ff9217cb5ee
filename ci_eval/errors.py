"""The one user-facing error type.

Anything the user can fix (bad file, bad flag, unknown task) is raised as UserError with a
one-line message naming the file, the field and what was expected. main() prints it and exits 2.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # regression, invalid task, failed verification
EXIT_BAD_INPUT = 2


class UserError(Exception):
    """Bad input or usage. The message is shown as is, on one line."""

    def __init__(self, message: str, *, path: object = None, field: str | None = None):
        parts = []
        if path is not None:
            parts.append(str(path))
        if field:
            parts.append(field)
        prefix = ": ".join(parts)
        text = f"{prefix}: {message}" if prefix else message
        super().__init__(" ".join(text.split("\n")))
        self.path, self.field, self.message = path, field, message

    def __reduce__(self):
        """Pickled with its keywords (a process that read a results file raises it here)."""
        return _user_error, (self.message, self.path, self.field)


def _user_error(message: str, path: object, field: str | None) -> UserError:
    return UserError(message, path=path, field=field)
