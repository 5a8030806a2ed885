"""Write one report file atomically (a temporary file beside it, then a rename): never a partial file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from recommender.errors import InputError
from recommender.safe_load import path_kind


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one step; a one-line InputError when the folder is missing or read-only."""
    path = path.expanduser()
    if path_kind(path) == "dir":
        raise InputError(f"{path} is a directory; give a file name")
    if path_kind(path.parent) != "dir":
        raise InputError(f"cannot write {path}: folder {path.parent} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        Path(tmp).chmod(0o644)
        Path(tmp).replace(path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {exc.strerror}") from exc
