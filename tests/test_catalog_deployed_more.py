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


def _ministral3_text(h: int, layers: int, mlp: int, tied: bool) -> int:
    """A Ministral 3 language model by hand: `layers` of `h` with 32 query heads and 8 KV heads of 128 (q/o
    h x 4096, k/v h x 1024), gated MLP 3 x h x mlp, two RMSNorms; a 131,072-row embedding (and a head unless
    tied), final norm."""
    per_layer = 2 * h * 4096 + 2 * h * 1024 + 3 * h * mlp + 2 * h
    return layers * per_layer + (1 if tied else 2) * 131072 * h + h


def test_ministral_3_family_by_hand() -> None:
    """Ministral 3 Instruct/Reasoning 2512 (reconstructed from NVIDIA's Megatron-Bridge providers in the keys of the
    bundled 3B Reasoning's real config.json, whose widths that file's 3B provider reproduces): text models of
    3,429,006,336 (3B, 26 x 3072, MLP 9216, tied), 8,489,553,920 (8B, 34 x 4096, MLP 14336) and 13,506,073,600
    (14B, 40 x 5120, MLP 16384) parameters, Mistral's cards' 3.4B, 8.4B and 13.5B language models. The Instruct
    checkpoints are FP8 (vLLM's recipe), the vision tower, projector and head kept; the Reasoning ones BF16."""
    sizes = {
        "3B": _ministral3_text(3072, 26, 9216, tied=True),
        "8B": _ministral3_text(4096, 34, 14336, tied=False),
        "14B": _ministral3_text(5120, 40, 16384, tied=False),
    }
    assert sizes == {"3B": 3_429_006_336, "8B": 8_489_553_920, "14B": 13_506_073_600}
    real = resolve_model("mistralai/Ministral-3-3B-Reasoning-2512")
    assert real.params is not None and real.params.total - real.params.vision == sizes["3B"]
    for suffix, fp8 in (
        ("3B-Instruct-2512", True),
        ("8B-Instruct-2512", True),
        ("8B-Reasoning-2512", False),
        ("14B-Instruct-2512", True),
        ("14B-Instruct-2512-FP8", True),
        ("14B-Reasoning-2512", False),
    ):
        model_id = f"mistralai/Ministral-3-{suffix}"
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total - spec.params.vision == sizes[suffix.split("-")[0]]
        assert 0.3e9 < spec.params.vision < 0.45e9, model_id
        assert (spec.quant is not None and spec.quant.method == "fp8") is fp8, model_id
        assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 262144)
        assert reconstructed(model_id)
