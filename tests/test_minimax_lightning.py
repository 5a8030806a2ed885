"""MiniMax-Text-01 / MiniMax-M1: lightning (linear) attention layers read from attn_type_list, counted and cached as
vLLM's MiniMaxText01LinearAttention builds them (minimax_text_01.py to 0.23.0; in 0.33
layers/mamba/linear/minimax_linear_attn.py and mamba_utils.py linear_attention_state_shape)."""

from __future__ import annotations

from click.testing import CliRunner

from recommender.cli import cli
from recommender.memory.kv_cache import build_layout, layer_kv
from recommender.model.parse import parse_config
from recommender.sources.resolve import resolve_model

H, INNER, LAYERS, EXPERTS, EXPERT_I, VOCAB = 6144, 64 * 128, 80, 32, 9216, 200064


def test_minimax_m1_count_by_hand_equals_the_published_index() -> None:
    """MiniMax-M1 (github:MiniMax-AI/MiniMax-M1 config.json): 70 lightning layers (qkv_proj 3 x 8192, output_gate
    8192, out_proj 8192 wide, a norm of 8192), 10 softmax layers (64 query and 8 KV heads of 128), 32 experts of
    9216 in every layer, untied head. By hand 456,089,655,296, MiniMax's "456B"; stored as bf16 with the 80 routers
    in float32 (4 bytes) that is the repository's model.safetensors.index.json total_size, 912,210,767,872 bytes."""
    spec = resolve_model("MiniMaxAI/MiniMax-M1-40k")
    assert spec.layer_kinds.count("linear_attention") == 70
    assert [i for i, k in enumerate(spec.layer_kinds) if k == "full"] == list(range(7, 80, 8))
    lightning = 3 * INNER * H + INNER * H + H * INNER + INNER
    softmax = (INNER + 2 * 8 * 128) * H + H * INNER
    router = EXPERTS * H
    layer_common = EXPERTS * 3 * EXPERT_I * H + router + 2 * H
    total = 70 * lightning + 10 * softmax + LAYERS * layer_common + 2 * VOCAB * H + H
    assert spec.params is not None and spec.params.total == total == 456_089_655_296
    assert 2 * total + 2 * LAYERS * router == 912_210_767_872
    assert resolve_model("MiniMaxAI/MiniMax-M1-80k").params == spec.params
    assert [r for r in spec.approximate if "reconstructed" not in r] == []  # only the config's provenance


def test_lightning_state_is_a_square_per_head_in_the_model_dtype() -> None:
    """linear_attention_state_shape: (64 / TP, 128, 128) in bf16 and no conv state: 262,144 bytes a layer at TP 8.
    The softmax layers hold 1 KV head x (128 + 128) x 2 B = 512 bytes a token at TP 8, so their block grows to 512
    tokens to fill the state's page; the 80 layers form 8 groups of 10 (70 lightning, 10 softmax), a block of all
    groups' pages being 8 x 10 x 262,144 bytes."""
    spec = resolve_model("MiniMaxAI/MiniMax-M1-80k")
    state = layer_kv(spec, 0, tp=8, block_size=16, kv_bytes=1, model_bytes=2)
    assert state is not None and state.kind == "mamba" and state.page_bytes == 8 * 128 * 128 * 2
    full = layer_kv(spec, 7, tp=8, block_size=16, kv_bytes=2, model_bytes=2)
    assert full is not None and full.bytes_per_token == 512
    layout = build_layout(spec, range(80), tp=8, block_size=16, kv_bytes=2, model_bytes=2)
    assert layout.block_size == 512
    assert layout.bytes_per_block == 10 * 262_144


def test_minimax_text_01_style_config_without_the_list_is_all_lightning_else_the_list() -> None:
    """A transformers-format MiniMax config (MiniMaxForCausalLM, layer_types) is read with the same lightning layers;
    a full_attention entry stays softmax attention."""
    config = {
        "architectures": ["MiniMaxForCausalLM"],
        "model_type": "minimax",
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 4,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "vocab_size": 1000,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"],
    }
    spec = parse_config(config, name="tiny-minimax", source="test")
    assert spec.layer_kinds == ("linear_attention",) * 3 + ("full",)
    assert spec.linear_attention is not None and spec.linear_attention.style == "lightning"
    assert spec.params is not None and spec.params.mixer == 3 * (5 * 256 * 256)


def test_explain_minimax_m1_on_h200_before_0_23() -> None:
    """Through the CLI: 912 GB of bf16 weights over 8 H200s (107.4 GiB each) and the 512-token hybrid block."""
    result = CliRunner().invoke(
        cli,
        [
            *("explain", "MiniMaxAI/MiniMax-M1-40k", "--gpu", "h200", "-tp", "8", "--max-model-len", "128k"),
            *("--vllm-version", "0.10.1"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "block size: 512" in result.output
    weights = next(line for line in result.output.splitlines() if "weights" in line and "GiB" in line)
    assert "107.4" in weights
