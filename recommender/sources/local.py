"""Read a model from a local directory (or a config.json path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recommender.errors import ModelConfigError, UnknownModelError
from recommender.quoting import clipped
from recommender.safe_load import path_kind
from recommender.sources.not_models import adapter_error, deployment_file_error, gguf_folder_error
from recommender.sources.safetensors import CheckpointSummary, summarize

MAX_CONFIG_BYTES = 64 << 20  # config.json and the index: the largest real ones are a few MiB


def _read_json(path: Path, what: str) -> Any:
    from recommender.safe_load import UntrustedDocumentError, load_json, read_text

    try:
        return load_json(read_text(path, MAX_CONFIG_BYTES))
    except UntrustedDocumentError as exc:
        raise ModelConfigError(f"{path} ({what}): {exc}") from None


def read_local(path: Path) -> tuple[dict[str, Any], dict[str, Any] | None, CheckpointSummary | None]:
    """(config, hf_quant_config or None, what the safetensors headers hold or None)."""
    kind = path_kind(path)
    if kind == "file":
        config_path, folder = path, path.parent
    elif kind == "dir":
        config_path, folder = path / "config.json", path
        if path_kind(config_path) == "missing":
            raise (
                adapter_error(path)
                or gguf_folder_error(path)
                or UnknownModelError(
                    f"{clipped(str(path))} has no config.json; give a model directory or a config.json file"
                )
            )
    elif kind == "other":  # a device, FIFO or socket: reading it could block or never end
        raise UnknownModelError(f"{clipped(str(path))} is not a regular file (a device, FIFO or socket)")
    else:
        raise UnknownModelError(f"{clipped(str(path))} does not exist")
    try:
        config = _read_json(config_path, "config.json")
        if not isinstance(config, dict):
            raise ModelConfigError(f"{config_path} must hold a JSON object")
    except ModelConfigError as exc:  # a manifest, a script or a plan given where a model goes
        if kind == "file" and path.suffix.lower() != ".json":
            raise deployment_file_error(path, exc) from None
        raise
    hq_path = folder / "hf_quant_config.json"
    hf_quant = _read_json(hq_path, "hf_quant_config.json") if hq_path.exists() else None
    index_path = folder / "model.safetensors.index.json"
    shards = sorted(folder.glob("*.safetensors")) if kind == "dir" else []
    if index_path.exists():
        index = _read_json(index_path, "safetensors index")
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if isinstance(weight_map, dict):
            named = sorted({folder / str(f) for f in weight_map.values()})
            shards = [p for p in named if p.exists()] or shards
    return config, hf_quant if isinstance(hf_quant, dict) else None, summarize(shards)
