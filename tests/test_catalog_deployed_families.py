"""Catalog entries for much-deployed families benchmarks/data/deployed_models.txt names (issue 11): each checked by
hand against its config.json and the publisher's parameter count (the docstring says which)."""

from __future__ import annotations

from recommender.catalog import load_model
from recommender.model.parse import parse_config
from recommender.sources.resolve import resolve_model

from .catalog_support import config_bytes, page_bytes, reconstructed


def test_command_r7b_by_hand() -> None:
    """C4AI Command R7B (its config.json as a derivative keeps it, Cohere's training keys included): 32 parallel
    blocks of 4096 (q/o 4096^2, k/v 4096 x 1024, gated MLP 3 x 4096 x 14336, one bias-free LayerNorm), tied
    256,000-row embedding, final norm: 8,028,033,024 parameters, of which 6,979,457,024 outside the embedding: the
    "7B" Cohere names it by. Every 4th layer is global (sliding_window_pattern 4), the other three slide over 4096
    tokens, so the KV cache of a long context is a quarter of a full-attention model's plus three windows."""
    h = 4096
    layer = 2 * h * h + 2 * h * 1024 + 3 * h * 14336 + h
    total = 32 * layer + 256000 * h + h
    assert total == 8_028_033_024 and total - 256000 * h == 6_979_457_024
    for model_id in ("CohereLabs/c4ai-command-r7b-12-2024", "CohereForAI/c4ai-command-r7b-12-2024"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.approximate == ()
        assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 8192)
        assert spec.layer_kinds == ("sliding", "sliding", "sliding", "full") * 8
    entry = load_model("CohereLabs/c4ai-command-r7b-12-2024")
    assert entry is not None and "huggingface.co/" in entry.source and entry.reconstructed is None


def test_cohere2_without_a_pattern_key_uses_transformers_default_of_four() -> None:
    """Cohere2Config defaults sliding_window_pattern to 4; a config that writes 2 gets every other layer global."""
    entry = load_model("CohereLabs/c4ai-command-r7b-12-2024")
    assert entry is not None
    default = {k: v for k, v in entry.config.items() if k != "sliding_window_pattern"}
    assert parse_config(default, name="r7b", source="test").layer_kinds == ("sliding", "sliding", "sliding", "full") * 8
    assert (
        parse_config({**entry.config, "sliding_window_pattern": 2}, name="r7b", source="test").layer_kinds
        == ("sliding", "full") * 16
    )


def test_dbrx_instruct_by_hand() -> None:
    """DBRX Instruct (reconstructed: AMD's FP8 re-save of the release, quantization block dropped): 40 layers of
    6144, fused Wqkv 6144 x (6144 + 2 x 1024) and out_proj 6144^2, 16 experts of 3 x 6144 x 10752 with a 6144 x 16
    router, two bias-free LayerNorms; untied 100,352-row embedding and head, final norm: 131,596,523,520 parameters
    (Databricks' 132B), 36.5B of them active with 4 of 16 experts (Databricks' 36B)."""
    h, vocab = 6144, 100352
    experts = 40 * 16 * 3 * h * 10752
    rest = 40 * (h * (h + 2 * 1024) + h * h + h * 16 + 2 * h) + 2 * vocab * h + h
    assert experts + rest == 131_596_523_520
    assert 36.4e9 < experts // 4 + rest < 36.6e9
    spec = resolve_model("databricks/dbrx-instruct")
    assert spec.params is not None and spec.params.total == experts + rest
    assert spec.params.experts == experts
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 32768)
    assert reconstructed("databricks/dbrx-instruct")
    entry = load_model("databricks/dbrx-instruct")
    assert entry is not None
    # AMD's page is 1,006 bytes; without its 9-line quantization block and the num_key_value_heads line it is
    # the 849-byte file SinclairSchneider's copy of the release shows, bar its auto_map and router_aux_loss_coef.
    assert config_bytes(entry.config) < 1006


def _olmo_layer(h: int, kv_rows: int, mlp: int) -> int:
    """One Olmo 2/3 layer as vllm/model_executor/models/olmo2.py builds it: q/o h^2, k/v h x kv_rows, gated MLP,
    q_norm over h and k_norm over kv_rows, post-attention and post-feed-forward RMSNorms."""
    return 2 * h * h + 2 * h * kv_rows + 3 * h * mlp + h + kv_rows + 2 * h


def test_olmo_3_7b_instruct_by_hand() -> None:
    """Olmo 3 7B Instruct (reconstructed from a sibling conversion and the family's keys; Ai2's card states the
    widths): 32 layers of 4096 with 32 full KV heads, MLP 11008, untied 100,278-row embedding and head, final norm:
    7,298,011,136 parameters (the hub's 7.3B). Three 4096-token sliding layers to one global."""
    h, vocab = 4096, 100278
    total = 32 * _olmo_layer(h, h, 11008) + 2 * vocab * h + h
    assert total == 7_298_011_136
    spec = resolve_model("allenai/Olmo-3-7B-Instruct")
    assert spec.params is not None and spec.params.total == total
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (32, 128, 65536)
    assert spec.layer_kinds == ("sliding", "sliding", "sliding", "full") * 8
    assert reconstructed("allenai/Olmo-3-7B-Instruct")


def test_olmo_3_32b_think_by_hand() -> None:
    """Olmo 3 32B Think (reconstructed as the bundled Olmo 3.1 32B Instruct network, which Ai2's card gives the
    same widths): 64 layers of 5120, 40 query and 8 KV heads (k_norm over 1024), MLP 27648, untied 100,278-row
    embedding and head: 32,233,522,176 parameters (the hub's 32.2B), the same count as the 3.1 release."""
    h, vocab = 5120, 100278
    total = 64 * _olmo_layer(h, 1024, 27648) + 2 * vocab * h + h
    assert total == 32_233_522_176
    for model_id in ("allenai/Olmo-3-32B-Think", "allenai/Olmo-3.1-32B-Instruct"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 65536)
    assert reconstructed("allenai/Olmo-3-32B-Think")
    assert not reconstructed("allenai/Olmo-3.1-32B-Instruct")


def test_jamba_v0_1_by_hand() -> None:
    """Jamba v0.1 (the publisher's config.json): 32 layers of 4096, attention at layers 4, 12, 20, 28 (q/o 4096^2,
    k/v 4096 x 1024), Mamba-1 elsewhere (in_proj 4096 x 2 x 8192, a 4-wide biased conv, x_proj 8192 x (256 + 32),
    dt_proj 256 x 8192 with a bias, A 8192 x 16, D, out_proj 8192 x 4096, dt/B/C norms 256 + 16 + 16), a 16-expert
    top-2 MoE of 3 x 4096 x 14336 (router 4096 x 16) on odd layers, dense MLPs on even ones, two RMSNorms a layer;
    untied 65,536-row embedding and head: 51,570,323,328 parameters, 12.1B active (AI21's 52B total, 12B active)."""
    h, d, mlp = 4096, 8192, 3 * 4096 * 14336
    attention = 2 * h * h + 2 * h * 1024
    mamba = h * 2 * d + d * 4 + d + d * (256 + 32) + 256 * d + d + d * 16 + d + d * h + 256 + 16 + 16
    experts = 16 * 16 * mlp
    rest = 4 * attention + 28 * mamba + 16 * mlp + 16 * h * 16 + 32 * 2 * h + 2 * 65536 * h + h
    assert experts + rest == 51_570_323_328
    assert 12.0e9 < experts // 8 + rest < 12.2e9
    spec = resolve_model("ai21labs/Jamba-v0.1")
    assert spec.params is not None and spec.params.total == experts + rest and spec.approximate == ()
    assert spec.params.experts == experts
    assert [i for i, kind in enumerate(spec.layer_kinds) if kind != "mamba"] == [4, 12, 20, 28]
    assert (spec.num_kv_heads, spec.max_model_len) == (8, 262144)
    entry = load_model("ai21labs/Jamba-v0.1")
    assert entry is not None and entry.reconstructed is None and "ai21labs/Jamba-v0.1/blob" in entry.source


def test_dbrx_base_is_the_instruct_network_in_lnl_ais_852_byte_file() -> None:
    """DBRX Base (reconstructed: LnL-AI's re-upload, 852 bytes as its blame page prints): the network DBRX Instruct
    is fine-tuned from, so the same 131,596,523,520 parameters; only moe_jitter_eps (a training knob) differs."""
    base, instruct = resolve_model("databricks/dbrx-base"), resolve_model("databricks/dbrx-instruct")
    assert base.params is not None and base.params == instruct.params
    assert base.params.total == 131_596_523_520
    assert reconstructed("databricks/dbrx-base")
    assert page_bytes("databricks/dbrx-base") == 852


def test_olmo_7b_hf_by_hand() -> None:
    """OLMo-7B-hf (reconstructed: PrunaAI's re-save of its config, which transformers' OlmoConfig defaults repeat):
    32 layers of 4096 with 32 heads (q/k/v/o 4096^2) and a gated SiLU MLP of 3 x 4096 x 11008, untied 50,304-row embedding and
    head: 6,888,095,744 parameters, AI2's 6.9B. vLLM's olmo.py uses LayerNorms without weights, which the planner
    does not model (it counts Llama's RMSNorm weights, 266,240 more, and says the count is approximate)."""
    h = 4096
    total = 32 * (4 * h * h + 3 * h * 11008) + 2 * 50304 * h
    assert total == 6_888_095_744
    spec = resolve_model("allenai/OLMo-7B-hf")
    assert spec.params is not None and spec.params.total - spec.params.norms == total
    assert (spec.num_kv_heads, spec.max_model_len) == (32, 2048)
    assert any("'olmo' is not in vllm-plan's architecture table" in reason for reason in spec.approximate)
    assert reconstructed("allenai/OLMo-7B-hf")


def test_olmoe_base_is_its_instruct_network() -> None:
    """OLMoE-1B-7B-0924 (reconstructed as its Instruct fine-tune's config.json): 16 layers of 2048 (q/k/v/o 2048^2,
    q/k RMSNorms over all heads, two RMSNorms), a 64-wide router and 64 experts of 3 x 2048 x 1024 (8 routed),
    untied 50,304-row embedding and head, final norm: 6,919,161,856 parameters (AI2's 6.9B, 1.3B active).
    transformers' OlmoeConfig default expert width (2048) would double the experts: the Instruct's 1024 is kept."""
    h = 2048
    layer = 4 * h * h + 2 * h + 64 * h + 64 * 3 * h * 1024 + 2 * h
    total = 16 * layer + 2 * 50304 * h + h
    assert total == 6_919_161_856
    active = 16 * (4 * h * h + 4 * h + 64 * h + 8 * 3 * h * 1024) + 2 * 50304 * h + h
    assert 1.2e9 < active < 1.4e9
    base, instruct = resolve_model("allenai/OLMoE-1B-7B-0924"), resolve_model("allenai/OLMoE-1B-7B-0924-Instruct")
    assert base.params is not None and base.params == instruct.params and base.params.total == total
    assert reconstructed("allenai/OLMoE-1B-7B-0924") and not reconstructed("allenai/OLMoE-1B-7B-0924-Instruct")


def test_jamba_1_5_mini_is_the_v0_1_network() -> None:
    """AI21-Jamba-1.5-Mini (reconstructed as Jamba v0.1's architecture, whose 52B total / 12B active and 256K
    context AI21's card gives it): the same 51,570,323,328 parameters and attention layers as v0.1."""
    mini, v01 = resolve_model("ai21labs/AI21-Jamba-1.5-Mini"), resolve_model("ai21labs/Jamba-v0.1")
    assert mini.params is not None and mini.params == v01.params and mini.params.total == 51_570_323_328
    assert mini.layer_kinds == v01.layer_kinds and mini.max_model_len == 262144
    assert reconstructed("ai21labs/AI21-Jamba-1.5-Mini")


def test_olmo_1b_hf_by_hand() -> None:
    """OLMo-1B-hf (the publisher's config.json, 632 bytes as its blame page prints): 16 layers of 2048 with 16 heads
    (q/k/v/o 2048^2) and a gated SiLU MLP of 3 x 2048 x 8192, tied 50,304-row embedding: 1,176,764,416 parameters
    without the Llama norms the planner adds (AI2's 1B), 2,048 positions."""
    h = 2048
    total = 16 * (4 * h * h + 3 * h * 8192) + 50304 * h
    assert total == 1_176_764_416
    spec = resolve_model("allenai/OLMo-1B-hf")
    assert spec.params is not None and spec.params.total - spec.params.norms == total and spec.params.lm_head == 0
    assert spec.max_model_len == 2048 and not reconstructed("allenai/OLMo-1B-hf")
    assert page_bytes("allenai/OLMo-1B-hf") == 632
