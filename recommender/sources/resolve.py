"""Resolve a model reference to a ModelSpec: local path, then bundled catalog, then the hub."""

from __future__ import annotations

import difflib
from pathlib import Path

from recommender.catalog import load_models
from recommender.errors import UnknownModelError
from recommender.model.parse import parse_config
from recommender.model.spec import ModelSpec
from recommender.sources.local import read_local


def _looks_like_path(ref: str) -> bool:
    return ref.startswith((".", "/", "~")) or ref.endswith(".json") or Path(ref).expanduser().exists()


def resolve_model(ref: str) -> ModelSpec:
    """A ModelSpec for `ref` (a directory, a config.json, or a Hugging Face id in the catalog)."""
    ref = ref.strip()
    if not ref:
        raise UnknownModelError("no model given")
    if _looks_like_path(ref):
        path = Path(ref).expanduser()
        config, hf_quant, _total = read_local(path)
        return parse_config(config, name=str(path), source=f"local: {path}", hf_quant_config=hf_quant)
    models = load_models()
    entry = models.get(ref.lower())
    if entry is None:
        close = difflib.get_close_matches(ref.lower(), list(models), n=3, cutoff=0.6)
        hint = f"; closest in the catalog: {', '.join(models[c].id for c in close)}" if close else ""
        raise UnknownModelError(
            f"model {ref!r} is not a local directory and not in the bundled catalog{hint} "
            "(run `vllm-plan models`, or give a directory holding its config.json)"
        )
    return parse_config(
        entry.config, name=entry.id, source=entry.source, hf_quant_config=entry.hf_quant_config,
        published_params=entry.published_params,
    )
