"""Write report files atomically (a temporary file beside each, then a rename): never a partial file, and with
several (a report and its --plot) none in place unless all could be written."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from recommender.errors import InputError
from recommender.safe_load import path_kind


@dataclass(frozen=True, slots=True)
class Staged:
    """A file written in full beside its destination, not yet in place."""

    path: Path
    tmp: Path

    def commit(self) -> None:
        """Move it into place in one step."""
        try:
            self.tmp.replace(self.path)
        except OSError as exc:
            self.discard()
            raise InputError(f"cannot write {self.path}: {exc.strerror}") from exc

    def discard(self) -> None:
        self.tmp.unlink(missing_ok=True)


def stage(path: Path, data: bytes, *, keep_changed: bool = False) -> Staged:
    """Write `data` to a temporary file in `path`'s folder; a one-line InputError when the folder is missing or
    read-only (nothing is left behind). `keep_changed`: refuse to replace a file that differs from `data`."""
    path = path.expanduser()
    if path_kind(path) == "dir":
        raise InputError(f"{path} is a directory; give a file name")
    if keep_changed:
        refuse_changed(path, data)
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
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {exc.strerror}") from exc
    return Staged(path, Path(tmp))


def refuse_changed(path: Path, data: bytes) -> None:
    """`--force`'s rule, as `render` applies it (render/output.py): an existing file is replaced only when it
    already holds `data`; one that differs is refused with a one-line InputError."""
    if path_kind(path) != "file":
        return  # missing (written), or not a regular file (the write reports it)
    try:
        same = path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError as exc:
        raise InputError(f"cannot read existing {path}: {exc.strerror}") from exc
    if not same:
        raise InputError(f"{path} exists and differs from the new output; pass --force to overwrite it")


def write_atomic(path: Path, data: bytes, *, keep_changed: bool = False) -> None:
    """Replace `path` with `data` in one step; a one-line InputError when the folder is missing or read-only, or
    (`keep_changed`) when `path` holds something else."""
    stage(path, data, keep_changed=keep_changed).commit()
