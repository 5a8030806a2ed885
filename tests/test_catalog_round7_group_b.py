"""Catalog round 7, group B and community builds (session 8): entries and aliases checked against their sources."""

from __future__ import annotations

from recommender.catalog import find_model
from recommender.sources.resolve import resolve_model


def test_unsloth_llama_3_2_vision_is_meta_checkpoint() -> None:
    """unsloth's Llama-3.2-11B-Vision-Instruct (field5 K014) is Meta's checkpoint re-uploaded: it plans as the bundled
    Meta config, 40 text layers of which 8 cross-attention, and the 32-layer vision encoder."""
    match = find_model("unsloth/Llama-3.2-11B-Vision-Instruct")
    assert match is not None and match.entry.id == "meta-llama/Llama-3.2-11B-Vision-Instruct"
    spec = resolve_model("unsloth/Llama-3.2-11B-Vision-Instruct")
    assert spec.params == resolve_model("meta-llama/Llama-3.2-11B-Vision-Instruct").params
    assert spec.num_layers == 40 and spec.vocab_size == 128256
