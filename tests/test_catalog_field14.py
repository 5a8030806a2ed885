"""Catalog entries the field14 startup logs (benchmarks/data/calibration/vllm_startup_logs_field14.jsonl) needed,
each checked by hand and against the weights its log printed."""

from __future__ import annotations

from recommender.sources.resolve import resolve_model

from .catalog_support import reconstructed


def test_granite_3_3_2b_instruct_by_hand() -> None:
    """ibm-granite/granite-3.3-2b-instruct (reconstructed: three public copies of its config.json keys): 40 layers of
    2048 with 32 query heads and 8 KV heads of 64 (q/o 2048 x 2048, k/v 2048 x 512), gated MLP 3 x 2048 x 8192, two
    RMSNorms a layer, a tied 49,159-row embedding and a final norm: 2,533,539,840 parameters, 4.72 GiB in bfloat16
    (U018's vLLM 0.10.2 log: 'Actual usage is 4.74 GiB for weight')."""
    h, layers, vocab = 2048, 40, 49159
    per_layer = 2 * h * h + 2 * h * 512 + 3 * h * 8192 + 2 * h
    total = layers * per_layer + vocab * h + h
    assert total == 2_533_539_840
    spec = resolve_model("ibm-granite/granite-3.3-2b-instruct")
    assert spec.params is not None and spec.params.total == total
    assert spec.max_model_len == 131072 and reconstructed("ibm-granite/granite-3.3-2b-instruct")
    assert round(total * 2 / 2**30, 2) == 4.72
