"""More catalog entries for ids benchmarks/data/deployed_models.txt names (issue 11): each checked by hand against
its config.json and the publisher's parameter count (the docstring says which)."""

from __future__ import annotations

from recommender.catalog import load_model
from recommender.model.parse import parse_config
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


def test_mimo_7b_rl_is_the_base_network_by_hand() -> None:
    """MiMo-7B-RL (reconstructed: Xiaomi's table gives it as an RL checkpoint of the MiMo-7B series): 36 layers of
    4096 (q/o 4096^2 with a q bias, k/v 4096 x 1024 with biases, gated MLP 3 x 4096 x 11008, two RMSNorms), untied
    151,680-row embedding and head, final norm: 7,622,619,136 parameters (the MTP head is not loaded for serving)."""
    h = 4096
    layer = 2 * h * h + h + 2 * (h * 1024 + 1024) + 3 * h * 11008 + 2 * h
    total = 36 * layer + 2 * 151680 * h + h
    assert total == 7_622_619_136
    rl, base = resolve_model("XiaomiMiMo/MiMo-7B-RL"), resolve_model("XiaomiMiMo/MiMo-7B-Base")
    assert rl.params is not None and rl.params == base.params and rl.params.total == total
    assert rl.max_model_len == 32768 and reconstructed("XiaomiMiMo/MiMo-7B-RL")


def test_chatglm2_6b_by_hand() -> None:
    """ChatGLM2-6B (reconstructed from a re-save of its 32k sibling): 28 layers of 4096, a fused QKV of 4096 x (4096 +
    2 x 2 x 128) with a bias, dense 4096^2, gated MLP 3 x 4096 x 13696, two RMSNorms; untied 65,024-row embedding and
    output layer, final norm: 6,243,584,000 parameters (THUDM's "6B"), the bundled ChatGLM3-6B's count, with 32,768
    positions where ChatGLM3-6B has 8,192."""
    h = 4096
    layer = h * (h + 2 * 2 * 128) + (h + 512) + h * h + 3 * h * 13696 + 2 * h
    total = 28 * layer + 2 * 65024 * h + h
    assert total == 6_243_584_000
    glm2, glm3 = resolve_model("zai-org/chatglm2-6b"), resolve_model("THUDM/chatglm3-6b")
    assert glm2.params is not None and glm2.params == glm3.params and glm2.params.total == total
    assert (glm2.max_model_len, glm3.max_model_len, glm2.num_kv_heads) == (32768, 8192, 2)
    assert reconstructed("zai-org/chatglm2-6b")


def test_glm_4_9b_hf_by_hand() -> None:
    """glm-4-9b-hf (reconstructed: the bundled chat-hf keys with the base's 8,192 positions): 40 layers of 4096,
    q 4096 x 4096 and k/v 4096 x 256 with biases, o 4096^2, gated MLP 3 x 4096 x 13696, two RMSNorms; untied
    151,552-row embedding and head, final norm: 9,399,951,360 parameters, the count of the bundled ChatGLMModel
    release of the same base model (THUDM/glm-4-9b)."""
    h = 4096
    layer = h * (h + 512) + (h + 512) + h * h + 3 * h * 13696 + 2 * h
    total = 40 * layer + 2 * 151552 * h + h
    assert total == 9_399_951_360
    hf, original = resolve_model("zai-org/glm-4-9b-hf"), resolve_model("THUDM/glm-4-9b")
    assert hf.params is not None and original.params is not None
    assert hf.params.total == original.params.total == total
    assert (hf.max_model_len, original.max_model_len, hf.num_kv_heads) == (8192, 8192, 2)
    assert reconstructed("zai-org/glm-4-9b-hf")


def _ernie45_21b() -> int:
    """ERNIE-4.5-21B-A3B by hand (vllm/model_executor/models/ernie45_moe.py): 28 layers of 2560, q/o 2560^2 and k/v
    2560 x 512 without biases, two RMSNorms; layer 0 a gated MLP 3 x 2560 x 12288; layers 1-27 a gate of 64 without
    bias plus a 64-wide e_score_correction_bias, 64 experts of 3 x 2560 x 1536 and a shared MLP of 3 x 2560 x 3072;
    tied 103,424-row embedding, final norm."""
    h = 2560
    attention = 2 * h * h + 2 * h * 512 + 2 * h
    moe = 64 * h + 64 + 64 * 3 * h * 1536 + 3 * h * 3072
    return 28 * attention + 3 * h * 12288 + 27 * moe + 103424 * h + h


def test_ernie_4_5_21b_a3b_by_hand() -> None:
    """ERNIE-4.5-21B-A3B-PT and -Thinking (reconstructed: transformers' Ernie4_5_MoeConfig defaults, documented as
    the PT checkpoint's): 21,825,437,888 parameters (Baidu's "21B", 3B activated: 6 of 64 experts), one dense layer
    then 27 MoE layers, 4 KV heads of 128, 131,072 positions."""
    total = _ernie45_21b()
    assert total == 21_825_437_888
    for model_id in ("baidu/ERNIE-4.5-21B-A3B-PT", "baidu/ERNIE-4.5-21B-A3B-Thinking"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.moe is not None and (spec.moe.num_experts, spec.moe.top_k) == (64, 6)
        assert spec.moe.shared_intermediate == 2 * 1536 and spec.moe.score_correction_bias
        assert spec.mlp_kinds == ("dense",) + ("moe",) * 27
        assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (4, 128, 131072)
        assert reconstructed(model_id)


def test_ernie_moe_layer_range_follows_vllm() -> None:
    """ernie45_moe.py puts experts on layer i when moe_layer_start_index <= i <= moe_layer_end_index and (i + 1) %
    moe_layer_interval == 0: a start of 3, an end of 24 and an interval of 2 leave experts on layers 3, 5, ..., 23."""
    entry = load_model("baidu/ERNIE-4.5-21B-A3B-PT")
    assert entry is not None
    config = {**entry.config, "moe_layer_start_index": 3, "moe_layer_end_index": 24, "moe_layer_interval": 2}
    spec = parse_config(config, name="ernie-range", source="test")
    assert [i for i, kind in enumerate(spec.mlp_kinds) if kind == "moe"] == list(range(3, 24, 2))


def test_ernie_4_5_0_3b_by_hand() -> None:
    """ERNIE-4.5-0.3B-PT (reconstructed: transformers' Ernie4_5Config defaults, documented as this checkpoint's): 18
    layers of 1024 with 16 query heads of 128 (q 1024 x 2048, o 2048 x 1024) and 2 KV heads (k/v 1024 x 256), gated
    MLP 3 x 1024 x 3072, two RMSNorms; tied 103,424-row embedding, final norm: 360,748,032 parameters (Baidu's
    "0.3B", 0.36B)."""
    h = 1024
    total = 18 * (2 * h * 2048 + 2 * h * 256 + 3 * h * 3072 + 2 * h) + 103424 * h + h
    assert total == 360_748_032
    spec = resolve_model("baidu/ERNIE-4.5-0.3B-PT")
    assert spec.params is not None and spec.params.total == total and spec.moe is None
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (2, 128, 131072)
    assert reconstructed("baidu/ERNIE-4.5-0.3B-PT")


def test_hunyuan_a13b_by_hand() -> None:
    """Hunyuan-A13B-Instruct and -Pretrain (reconstructed from test fixtures' copies of the config; hunyuan_v1.py):
    32 layers of 4096, a fused QKV of 4096 x (4096 + 2 x 1024) and o 4096^2 without biases, q/k RMSNorms of 128,
    two RMSNorms; every layer a gate of 64 without bias, 64 experts of 3 x 4096 x 3072 and a shared MLP of the same
    width; tied 128,167-row embedding, final norm: 80,393,183,232 parameters (Tencent's 80B; 13B active: 8 experts
    + the shared MLP + attention, 12.2B, plus the 0.5B embedding)."""
    h = 4096
    attention = h * (h + 2 * 1024) + h * h + 2 * 128 + 2 * h
    moe = 64 * h + 65 * 3 * h * 3072
    total = 32 * (attention + moe) + 128167 * h + h
    assert total == 80_393_183_232
    active = 32 * (attention + 64 * h + 9 * 3 * h * 3072) + 128167 * h + h
    assert 12.5e9 < active < 13.5e9
    for model_id in ("tencent/Hunyuan-A13B-Instruct", "tencent/Hunyuan-A13B-Pretrain"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.moe is not None and (spec.moe.num_experts, spec.moe.top_k, spec.moe.shared_intermediate) == (
            64,
            8,
            3072,
        )
        assert spec.qk_norm and set(spec.mlp_kinds) == {"moe"} and spec.max_model_len == 32768
        assert (spec.num_kv_heads, spec.head_dim) == (8, 128) and reconstructed(model_id)


def test_hunyuan_per_layer_lists_and_cla_are_marked_approximate() -> None:
    """hunyuan_v1.py reads moe_topk / moe_intermediate_size / num_shared_expert per layer and shares K/V across
    layers with use_cla: a config whose lists differ by layer, or with CLA, is read at layer 0 and said so."""
    entry = load_model("tencent/Hunyuan-A13B-Instruct")
    assert entry is not None
    exact = parse_config(entry.config, name="hy", source="test")
    assert not any("per-layer" in r or "use_cla" in r for r in exact.approximate)
    mixed = parse_config({**entry.config, "moe_topk": [8] * 31 + [4]}, name="hy", source="test")
    assert any("per-layer" in reason for reason in mixed.approximate)
    cla = parse_config({**entry.config, "use_cla": True, "cla_share_factor": 2}, name="hy", source="test")
    assert any("use_cla" in reason for reason in cla.approximate)


def test_kimi_vl_a3b_thinking_is_the_instruct_network() -> None:
    """Kimi-VL-A3B-Thinking (reconstructed: Moonshot's table gives it the Instruct model's 16B / 3B / 128K): the
    bundled Instruct's 15,960,110,208 text parameters (counted by hand in test_catalog_field_models.py) plus MoonViT,
    16.4B in all, 131,072 positions."""
    thinking, instruct = (
        resolve_model("moonshotai/Kimi-VL-A3B-Thinking"),
        resolve_model("moonshotai/Kimi-VL-A3B-Instruct"),
    )
    assert thinking.params is not None and thinking.params == instruct.params
    assert thinking.params.total - thinking.params.vision == 15_960_110_208
    assert 16.0e9 < thinking.params.total < 16.5e9 and thinking.max_model_len == 131072
    assert reconstructed("moonshotai/Kimi-VL-A3B-Thinking") and not instruct.approximate


def test_internlm2_7b_reward_by_hand() -> None:
    """internlm2-7b-reward (reconstructed: an unnamed InternLM2ForRewardModel config ome's test data copies, with the
    7B's widths): 32 layers of 4096, q/o 4096^2 and k/v 4096 x 1024 without biases, gated MLP 3 x 4096 x 14336, two
    RMSNorms; a 92,544-row embedding and no LM head (vLLM pools it; its 4,096-weight reward head is not counted),
    final norm: 7,358,648,320 parameters, the bundled internlm2-chat-7b's less its head."""
    h = 4096
    total = 32 * (2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h) + 92544 * h + h
    assert total == 7_358_648_320
    reward, chat = resolve_model("internlm/internlm2-7b-reward"), resolve_model("internlm/internlm2-chat-7b")
    assert reward.params is not None and chat.params is not None
    assert reward.params.total == total == chat.params.total - 92544 * h
    assert reward.pooling and reward.max_model_len == 32768 and reconstructed("internlm/internlm2-7b-reward")


def test_ernie_4_5_300b_a47b_by_hand() -> None:
    """ERNIE-4.5-300B-A47B-PT (reconstructed: MindIE's test fixtures' copies of the config; ernie45_moe.py): 54
    layers of 8192 (q/o 8192^2, k/v 8192 x 1024, two RMSNorms), a dense MLP of 3 x 8192 x 28672 on layers 0-2, then
    51 MoE layers of a 64-wide router with its correction bias and 64 experts of 3 x 8192 x 3584 (8 routed, none
    shared); tied 103,424-row embedding, final norm: 298,636,913,856 parameters, 47.1B activated (Baidu's 300B and
    47B; untied, 299.5B and 47.9B, which the entry's 'reconstructed' says)."""
    h = 8192
    attention = 2 * h * h + 2 * h * 1024 + 2 * h
    total = 54 * attention + 3 * 3 * h * 28672 + 51 * (64 * h + 64 + 64 * 3 * h * 3584) + 103424 * h + h
    active = 54 * attention + 3 * 3 * h * 28672 + 51 * (64 * h + 64 + 8 * 3 * h * 3584) + 103424 * h + h
    assert total == 298_636_913_856 and 47.0e9 < active < 47.2e9
    spec = resolve_model("baidu/ERNIE-4.5-300B-A47B-PT")
    assert spec.params is not None and spec.params.total == total
    assert spec.moe is not None and (spec.moe.num_experts, spec.moe.top_k, spec.moe.shared_intermediate) == (64, 8, 0)
    assert spec.mlp_kinds == ("dense",) * 3 + ("moe",) * 51
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 131072)
    assert reconstructed("baidu/ERNIE-4.5-300B-A47B-PT")
