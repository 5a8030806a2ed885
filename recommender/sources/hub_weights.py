"""Safetensors headers of a hub repository, read with huggingface_hub's range requests (never the weights).

`get_safetensors_metadata` reads the 8-byte header size and the JSON header of `model.safetensors`, or of every
shard listed in `model.safetensors.index.json`. The tables are kept beside the hub cache, keyed by the commit the
config came from, so a model fetched once keeps its exact weights offline.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recommender.sources.safetensors import CheckpointSummary, HeaderTable, summarize_tables

_COMMIT = re.compile(r"[0-9a-f]{40}")


def commit_of(snapshot_file: str) -> str | None:
    """The commit hash of a file in the hub cache (…/snapshots/<commit>/config.json)."""
    parent = Path(snapshot_file).parent.name
    return parent if _COMMIT.fullmatch(parent) else None


def _cache_file(repo_id: str, commit: str) -> Path:
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "vllm-plan" / "safetensors" / repo_id.replace("/", "--") / f"{commit}.json"


def cached_tables(repo_id: str, commit: str | None) -> list[dict[str, Any]] | None:
    """Header tables saved by an earlier online run for this commit, or None."""
    if commit is None:
        return None
    try:
        data = json.loads(_cache_file(repo_id, commit).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    tables = data.get("files") if isinstance(data, dict) else None
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        return None
    return tables


def _save_tables(repo_id: str, commit: str | None, tables: list[dict[str, Any]]) -> None:
    """Write the cache atomically (a temporary file renamed into place); a cache that cannot be written is skipped."""
    if commit is None:
        return
    path = _cache_file(repo_id, commit)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"repo_id": repo_id, "commit": commit, "files": tables}, fh)
        Path(tmp).replace(path)
    except OSError:
        return


def _tables_from_metadata(metadata: Any) -> list[dict[str, Any]]:
    """huggingface_hub's SafetensorsRepoMetadata as one header table per file."""
    tables: list[dict[str, Any]] = []
    for _, file_meta in sorted(metadata.files_metadata.items()):
        tables.append(
            {
                name: {"dtype": str(t.dtype), "shape": [int(d) for d in t.shape], "data_offsets": list(t.data_offsets)}
                for name, t in file_meta.tensors.items()
            }
        )
    return tables


def fetch_tables(repo_id: str, revision: str | None, commit: str | None, timeout: float) -> list[dict[str, Any]]:
    """Read the repository's safetensors headers over HTTP range requests and cache them for `commit`.

    Raises huggingface_hub's errors (NotASafetensorsRepoError when the repository has no safetensors files).
    """
    from huggingface_hub import HfApi

    api = HfApi()
    kwargs: dict[str, Any] = {"revision": commit or revision}
    if "timeout" in inspect.signature(api.get_safetensors_metadata).parameters:  # huggingface_hub >= 1.x
        kwargs["timeout"] = timeout
    tables = _tables_from_metadata(api.get_safetensors_metadata(repo_id, **kwargs))
    _save_tables(repo_id, commit, tables)
    return tables


def summary(tables: Sequence[HeaderTable]) -> CheckpointSummary:
    """The checkpoint summary of header tables (shared with the local-directory path)."""
    return summarize_tables(tables)
