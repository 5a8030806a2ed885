"""What the catalog tests share: the vLLM release and card most weight checks plan on, whether an entry's config was
reconstructed, and the byte count of a config.json page."""

from __future__ import annotations

import json
from collections.abc import Mapping

from recommender.catalog import load_gpus, load_model
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import VllmVersion
from recommender.sources.resolve import resolve_model

V033 = VllmVersion.parse("0.33.0")
H100 = resolve_gpu("h100", load_gpus())


def reconstructed(model_id: str) -> bool:
    """The model's config.json was reconstructed from other sources (and the resolver says so)."""
    spec = resolve_model(model_id)
    return any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


def config_bytes(config: Mapping[str, object]) -> int:
    """The size of a config.json as transformers writes it (indent 2, final newline): what the hub page prints."""
    return len(json.dumps(config, indent=2)) + 1


def page_bytes(model_id: str, newline: bool = True) -> int:
    """The size of a bundled entry's config.json at indent 2, with or without the final newline its page has."""
    entry = load_model(model_id)
    assert entry is not None, model_id
    return len(json.dumps(entry.config, indent=2)) + (1 if newline else 0)
