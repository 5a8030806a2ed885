"""Write rendered files all or nothing (I/O edge).

Every check happens before the first write (a changed file is never overwritten without --force). Then every
file is staged as a temporary file beside its target, flushed to disk, and only when all are staged are they
renamed into place; existing files are kept as hard-linked backups until the end. A failure at any step (disk
full, read-only directory, permissions) removes the temporary files, restores what was renamed, removes the
directories it created, and reports one line: nothing is left behind.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from recommender.errors import InputError
from recommender.safe_load import path_kind

CHUNK = 1 << 16


class LocalDisk:
    """The file operations `write_files` needs; a test subclasses it to inject failures (e.g. ENOSPC)."""

    def read_text(self, path: Path) -> str | None:
        """The file's text, or None when it does not exist."""
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def mkdir(self, path: Path) -> None:
        """Create one directory (its parent exists)."""
        path.mkdir()

    def write_chunk(self, fd: int, data: bytes) -> None:
        """Write all of `data` to an open file."""
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    def write_temp(self, directory: Path, name: str, data: bytes, mode: int) -> Path:
        """A new temporary file in `directory` holding `data`, flushed to disk (removed again on failure)."""
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        try:
            try:
                for start in range(0, len(data), CHUNK):
                    self.write_chunk(fd, data[start : start + CHUNK])
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return Path(tmp)

    def backup(self, path: Path) -> Path:
        """A hard link to `path` under a new temporary name (no data copied; a copy where links fail)."""
        for _ in range(100):
            tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.bak")
            try:
                os.link(path, tmp)
                return tmp
            except FileExistsError:
                continue
            except OSError:  # a file system without hard links
                return self.write_temp(path.parent, path.name, path.read_bytes(), path.stat().st_mode & 0o777)
        raise FileExistsError(f"no free backup name beside {path}")  # pragma: no cover - 100 random collisions

    def replace(self, src: Path, dst: Path) -> None:
        """Rename `src` over `dst` (atomic within a directory)."""
        src.replace(dst)

    def remove(self, path: Path) -> None:
        """Remove a file if it exists."""
        path.unlink(missing_ok=True)

    def rmdir(self, path: Path) -> None:
        """Remove an empty directory."""
        path.rmdir()


@dataclass
class _Transaction:
    """What a write has done so far, to undo it."""

    disk: LocalDisk
    created_dirs: list[Path] = field(default_factory=list)
    staged: dict[Path, Path] = field(default_factory=dict)  # target -> temporary file
    backups: dict[Path, Path] = field(default_factory=dict)  # target -> hard link to its old content
    committed: list[Path] = field(default_factory=list)

    def rollback(self) -> None:
        """Undo everything, best effort (each step independent of the others)."""
        for target in reversed(self.committed):
            if target in self.backups:
                _quietly(self.disk.replace, self.backups.pop(target), target)
            else:
                _quietly(self.disk.remove, target)
        for path in [*self.staged.values(), *self.backups.values()]:
            _quietly(self.disk.remove, path)
        for directory in reversed(self.created_dirs):
            _quietly(self.disk.rmdir, directory)


def _quietly(step: Callable[..., None], *args: Path) -> None:
    try:
        step(*args)
    except OSError:
        pass


def _plan(files: dict[str, str], out_dir: Path, force: bool, disk: LocalDisk) -> list[tuple[Path, bytes, str]]:
    """(path, content, status) per file, refusing (before anything is written) to overwrite a changed file."""
    if path_kind(out_dir) not in ("dir", "missing"):
        raise InputError(f"-o {out_dir}: not a directory")
    out: list[tuple[Path, bytes, str]] = []
    for name, content in sorted(files.items()):
        path = out_dir / name
        try:
            current = disk.read_text(path) if path_kind(out_dir) == "dir" else None
            data = content.encode("utf-8")
        except (OSError, UnicodeError) as exc:
            raise InputError(f"cannot read existing {path}: {getattr(exc, 'strerror', None) or exc}") from exc
        if current is None:
            out.append((path, data, "written"))
        elif current == content:
            out.append((path, data, "unchanged"))
        elif force:
            out.append((path, data, "overwritten"))
        else:
            raise InputError(f"{path} exists and differs from the new rendering; pass --force to overwrite it")
    return out


def _missing_dirs(out_dir: Path) -> list[Path]:
    """The directories to create, outermost first."""
    missing: list[Path] = []
    here = out_dir
    while path_kind(here) == "missing" and here != here.parent:
        missing.append(here)
        here = here.parent
    return missing[::-1]


def write_files(
    files: dict[str, str], out_dir: Path, *, force: bool, disk: LocalDisk | None = None
) -> list[tuple[Path, str]]:
    """Write every file or none; (path, written | overwritten | unchanged) per file."""
    disk = disk or LocalDisk()
    out_dir = out_dir.expanduser()
    planned = _plan(files, out_dir, force, disk)
    tx = _Transaction(disk)
    where = out_dir
    try:
        for directory in _missing_dirs(out_dir):
            where = directory
            disk.mkdir(directory)
            tx.created_dirs.append(directory)
        changes = [(path, data, status) for path, data, status in planned if status != "unchanged"]
        for path, data, _ in changes:
            where = path
            tx.staged[path] = disk.write_temp(path.parent, path.name, data, 0o755 if path.suffix == ".sh" else 0o644)
        for path, _, status in changes:
            where = path
            if status == "overwritten":
                tx.backups[path] = disk.backup(path)
        for path, _, _ in changes:
            where = path
            disk.replace(tx.staged[path], path)
            del tx.staged[path]
            tx.committed.append(path)
    except OSError as exc:
        tx.rollback()
        raise InputError(f"cannot write {where}: {exc.strerror or exc}; nothing was written") from exc
    for backup in tx.backups.values():
        _quietly(disk.remove, backup)  # the new files are in place; a leftover link would only be clutter
    return [(path, status) for path, _, status in planned]
