"""Serve files below a static root directory."""

import os
from pathlib import Path


class Forbidden(Exception):
    """The request points outside the static root."""


def resolve_static(root: str | os.PathLike, request_path: str) -> Path:
    """The file to send for `request_path` (URL path below /static/, already percent-decoded)."""
    root = os.path.normpath(str(root))
    candidate = os.path.normpath(os.path.join(root, request_path.lstrip("/")))
    if not candidate.startswith(root):
        raise Forbidden(request_path)
    if not os.path.isfile(candidate):
        raise FileNotFoundError(request_path)
    return Path(candidate)
