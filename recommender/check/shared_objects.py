"""The objects one file of a folder shares with the files read beside it (I/O edge): KServe InferenceServices and
ServingRuntimes in different files are combined as KServe does, and a chart's templates share their ConfigMaps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recommender.check import kserve_runtimes
from recommender.check.load import MAX_BYTES, yaml_docs
from recommender.errors import InputError

KSERVE_KINDS = ("InferenceService", *kserve_runtimes.RUNTIME_KINDS)


def kserve_objects(files: Sequence[Path]) -> dict[Path, list[dict[str, Any]]]:
    """The KServe InferenceServices and (Cluster)ServingRuntimes of each YAML file of a folder, so that one whose
    runtime is in another file is combined with it as KServe does (unreadable files give none: read later)."""
    out: dict[Path, list[dict[str, Any]]] = {}
    for f in files:
        if f.suffix not in (".yaml", ".yml", ".json") or f.stat().st_size > MAX_BYTES:
            continue
        docs = objects_of_kinds(f.read_text(encoding="utf-8", errors="replace"), str(f), KSERVE_KINDS)
        got = [d for d in docs if str(d.get("apiVersion", "")).startswith("serving.kserve.io/")]
        if got:
            out[f] = got
    return out


def objects_of_kinds(text: str, source: str, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
    """The objects of those kinds in a YAML text, for sharing with the other texts read beside it (a malformed text
    gives none here: it is reported where it is read)."""
    if not any(k in text for k in kinds):
        return []
    try:
        docs = yaml_docs(text, source, [])
    except InputError:
        return []
    return [d for d in docs if isinstance(d, dict) and d.get("kind") in kinds]
