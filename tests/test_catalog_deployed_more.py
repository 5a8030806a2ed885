"""More catalog entries for ids benchmarks/data/deployed_models.txt names (issue 11): each checked by hand against
its config.json and the publisher's parameter count (the docstring says which)."""

from __future__ import annotations

from recommender.sources.resolve import resolve_model

from .catalog_support import reconstructed


def _kimi_linear_48b() -> int:
    """Kimi-Linear-48B-A3B by hand (vLLM's KimiLinearForCausalLM): 27 layers of 2304. 20 KDA layers: q/k/v
    2304 x 4096 (32 heads of 128), three 4-wide depthwise convolutions over 4096 channels, A_log (32) and dt_bias
    (4096), the low-rank forget and output gates f_a/g_a 2304 x 128 and f_b/g_b 128 x 4096, the beta projection
    2304 x 32, an output norm of 128 and o_proj 4096 x 2304. 7 MLA layers: q_proj 2304 x 32 x 192, kv_a 2304 x
    (512 + 64) with a norm of 512, kv_b 512 x 32 x 256, o_proj 4096 x 2304. Layer 0 a gated MLP 3 x 2304 x 9216, the
    other 26 a router of 256 with a correction bias, 256 experts and one shared expert of 3 x 2304 x 1024. Two
    norms a layer, untied 163,840-row embedding and head, final norm."""
    h, width, vocab = 2304, 32 * 128, 163840
    kda = 3 * h * width + 3 * width * 4 + 32 + width + 2 * (h * 128 + 128 * width) + h * 32 + 128 + width * h
    mla = h * 32 * 192 + h * (512 + 64) + 512 + 512 * 32 * 256 + width * h
    expert = 3 * h * 1024
    moe = 256 * h + 256 + 257 * expert
    return 20 * kda + 7 * mla + 3 * h * 9216 + 26 * moe + 27 * 2 * h + 2 * vocab * h + h


def test_kimi_linear_48b_a3b_by_hand() -> None:
    """Kimi-Linear-48B-A3B-Instruct (reconstructed: a re-quantization's copy of its config.json): 49,122,681,728
    parameters by hand (Moonshot's table: 48B total, 3B activated), KDA on the 20 layers linear_attn_config names
    and MLA on the other 7, up to 1,048,576 tokens (model_max_length; the recipe serves --max-model-len 1048576).
    The Base checkpoint is the same network."""
    total = _kimi_linear_48b()
    assert total == 49_122_681_728
    for model_id in ("moonshotai/Kimi-Linear-48B-A3B-Instruct", "moonshotai/Kimi-Linear-48B-A3B-Base"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.layer_kinds.count("linear_attention") == 20 and spec.layer_kinds.count("mla") == 7
        assert [i + 1 for i, kind in enumerate(spec.layer_kinds) if kind == "mla"] == [4, 8, 12, 16, 20, 24, 27]
        assert spec.max_model_len == 1_048_576 and reconstructed(model_id)
