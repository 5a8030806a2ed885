"""Catalog entries of Microsoft's Phi-3 and Phi-4 releases. Entries and aliases are checked against their sources by
hand; each test's docstring names them (and the field set or issue that brought the model in)."""

from __future__ import annotations

from recommender.sources.resolve import resolve_model


def test_phi_3_medium_128k_has_the_4k_shapes_and_a_131k_context() -> None:
    """Phi-3-medium-128k-instruct (reconstructed, and said so): the 4k sibling's 13,960,238,080 parameters (40
    layers of 5120: q/o 5120^2, k/v 5120 x 1280, gated MLP 3 x 5120 x 17920; untied 32,064-row embedding and head)
    with full attention over 131,072 positions."""
    h, layers, vocab = 5120, 40, 32064
    total = layers * (2 * h * h + 2 * h * 1280 + 3 * h * 17920 + 2 * h) + 2 * vocab * h + h
    assert total == 13_960_238_080
    spec = resolve_model("microsoft/Phi-3-medium-128k-instruct")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 131072
    assert spec.sliding_window is None and set(spec.layer_kinds) == {"full"}


def test_phi_4_reasoning_is_phi_4_with_a_32k_context() -> None:
    """Phi-4-reasoning (reconstructed, and said so): phi-4's 14,659,507,200 parameters (40 layers of 5120: q/o 5120^2,
    k/v 5120 x 1280, gated MLP 3 x 5120 x 17920; untied 100,352-row embedding and head), 32,768 positions (its card)."""
    h, vocab = 5120, 100352
    total = 40 * (2 * h * h + 2 * h * 1280 + 3 * h * 17920 + 2 * h) + 2 * vocab * h + h
    assert total == 14_659_507_200
    spec, phi4 = resolve_model("microsoft/Phi-4-reasoning"), resolve_model("microsoft/phi-4")
    assert spec.params is not None and spec.params == phi4.params and spec.params.total == total
    assert (spec.max_model_len, phi4.max_model_len) == (32768, 16384)
    assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)
