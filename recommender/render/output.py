"""Write rendered files: all validated in memory first, each written atomically, changed files protected."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from recommender.errors import InputError


def write_files(files: dict[str, str], out_dir: Path, *, force: bool) -> list[tuple[Path, str]]:
    """Write every file or none: refuse (before writing anything) when a changed file exists without --force."""
    out_dir = out_dir.expanduser()
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"-o {out_dir}: not a directory")
    plan: list[tuple[Path, str, str]] = []
    for name, content in sorted(files.items()):
        path = out_dir / name
        if path.exists():
            try:
                current = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise InputError(f"cannot read existing {path}: {exc.strerror}") from exc
            if current == content:
                plan.append((path, content, "unchanged"))
                continue
            if not force:
                raise InputError(f"{path} exists and differs from the new rendering; pass --force to overwrite it")
            plan.append((path, content, "overwritten"))
        else:
            plan.append((path, content, "written"))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out_dir}: {exc.strerror}") from exc
    done: list[tuple[Path, str]] = []
    for path, content, status in plan:
        if status != "unchanged":
            _atomic_write(path, content)
        done.append((path, status))
    return done


def _atomic_write(path: Path, content: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(content)
        mode = 0o755 if path.suffix == ".sh" else 0o644
        Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {exc.strerror}") from exc
