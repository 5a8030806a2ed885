"""Catalog entries of the families with a few models each: Baichuan, Cohere2 MoE, EXAONE, Granite, InternLM2, OLMoE,
Seed-OSS, StableLM, and the base/chat aliases of Yi, Falcon and SmolLM2. Entries and aliases are checked against
their sources by hand; each test's docstring names them (and the field set or issue that brought the model in)."""

from __future__ import annotations

from recommender.catalog import find_model, load_gpus, load_model
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model

from .catalog_support import page_bytes, reconstructed


def test_catalog_round_6_group_b_base_and_instruct_aliases() -> None:
    """Base and chat releases of one family plan alike (the alias table's checked_on pairs show their configs differ
    only in token ids and bookkeeping): each alias lands on its bundled partner with the same parameter count."""
    for alias, target in (
        ("01-ai/Yi-1.5-34B", "01-ai/Yi-1.5-34B-Chat"),
        ("01-ai/Yi-1.5-6B", "01-ai/Yi-1.5-6B-Chat"),
        ("01-ai/Yi-34B-Chat", "01-ai/Yi-34B"),
        ("tiiuae/falcon-7b-instruct", "tiiuae/falcon-7b"),
        ("HuggingFaceTB/SmolLM2-135M", "HuggingFaceTB/SmolLM2-135M-Instruct"),
        ("HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-360M-Instruct"),
        ("HuggingFaceTB/SmolLM2-1.7B", "HuggingFaceTB/SmolLM2-1.7B-Instruct"),
    ):
        match = find_model(alias)
        assert match is not None and match.entry.id == target, alias
        assert resolve_model(alias).params == resolve_model(target).params


def test_catalog_round_6_group_b_exaone_3_5_32b_by_hand() -> None:
    """EXAONE-3.5-32B-Instruct (its num_layers read as EXAONE 3.x names it): 64 layers of q, o 5120^2, k, v 5120 x 1024,
    MLP 3 x 5120 x 27392 and two norms, untied 102400 x 5120 embeddings and lm_head, a final norm: 32,003,200,000."""
    spec = resolve_model("LGAI-EXAONE/EXAONE-3.5-32B-Instruct")
    h, kv, ffn, vocab = 5120, 1024, 27392, 102400
    layer = 2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h
    assert spec.num_layers == 64 and spec.params is not None
    assert spec.params.total == 64 * layer + 2 * vocab * h + h == 32_003_200_000


def test_catalog_round_8_baichuan_13b_by_hand() -> None:
    """Baichuan-13B: 40 layers of W_pack (5120 x 15360, no bias), o_proj 5120 x 5120, a gated MLP of 13696 and two
    RMSNorms, ALiBi (no rotary, 40 K/V heads of 128); Baichuan2-13B only widens the vocabulary from 64,000 to 125,696
    rows (embedding and head). Baichuan2-13B's 13,896,668,160 is the '13B' of its card (13.9B)."""
    layer = 4 * 5120 * 5120 + 3 * 5120 * 13696 + 2 * 5120
    v1 = resolve_model("baichuan-inc/Baichuan-13B-Chat")
    v2 = resolve_model("baichuan-inc/Baichuan2-13B-Chat")
    assert v1.params is not None and v2.params is not None
    assert v1.params.total == 40 * layer + 2 * 64000 * 5120 + 5120 == 13_264_901_120
    assert v2.params.total == 40 * layer + 2 * 125696 * 5120 + 5120 == 13_896_668_160
    assert v2.max_model_len == 4096 and v2.num_kv_heads == 40  # model_max_length; one K/V head per query head


def test_catalog_round_8_baichuan_is_read_as_a_llama_decoder_exactly() -> None:
    """Baichuan's family entry (vLLM baichuan.py to 0.23.0) counts exactly, no longer marked approximate."""
    for model in ("baichuan-inc/Baichuan2-7B-Chat", "baichuan-inc/Baichuan-13B-Chat"):
        assert not resolve_model(model).approximate


def test_granite_3_0_8b_rebuilt_from_its_2b_sibling() -> None:
    """granite-3.0-8b-instruct, rebuilt from the bundled 2B config with the widths a full fine-tune of the 8B prints:
    the rebuilt file is the 788 bytes the repository's file list prints. By hand: 40 layers of 4096 (q, o 4096^2; k, v
    4096 x 1024; MLP 3 x 4096 x 12800; two norms), tied embedding 49155 x 4096, final norm: 8,170,848,256."""
    h, layers, kv, ffn, vocab = 4096, 40, 1024, 12800, 49155
    total = layers * (2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h) + vocab * h + h
    assert total == 8_170_848_256
    entry = load_model("ibm-granite/granite-3.0-8b-instruct")
    assert entry is not None and entry.reconstructed and page_bytes(entry.id) == 788
    spec = resolve_model(entry.id)
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 4096
    small = load_model("ibm-granite/granite-3.0-2b-instruct")
    assert small is not None
    differs = {k for k in entry.config if entry.config[k] != small.config.get(k)}
    assert differs == {"hidden_size", "intermediate_size", "attention_multiplier", "logits_scaling"}


def test_olmoe_by_hand() -> None:
    """OLMoE-1B-7B (vllm olmoe.py): 16 layers of 2048, attention 4 x 2048^2 with q/k RMSNorms over all heads (2048
    each), 64 experts of 3 x 2048 x 1024 and a 2048 x 64 router, two norms; untied 50304-row embedding and head,
    final norm: 6,919,161,856 parameters, the paper's 6.9B."""
    h, layers, experts, ffn, vocab = 2048, 16, 64, 1024, 50304
    layer = 4 * h * h + 2 * h + experts * 3 * h * ffn + h * experts + 2 * h
    total = 2 * vocab * h + layers * layer + h
    assert total == 6_919_161_856
    spec = resolve_model("allenai/OLMoE-1B-7B-0924-Instruct")
    assert spec.params is not None and spec.params.total == total and not spec.approximate
    assert page_bytes("allenai/OLMoE-1B-7B-0924-Instruct") == 840


def test_internlm2_chat_7b_first_revision_reads_as_internlm2() -> None:
    """internlm2-chat-7b's publisher page (855 bytes, no final newline) says model_type "internlm" with
    InternLM2ForCausalLM: vLLM runs the architecture (internlm2.py), so it is read as InternLM2, exactly, with
    internlm2_5-7b-chat's widths: 32 x (4096 x 6144 wqkv + 4096^2 wo + 3 x 4096 x 14336 + 2 x 4096) + 2 x 92544 x 4096
    + 4096 = 7,737,708,544 parameters; dynamic rope factor 1.0 keeps 32,768 positions."""
    h, vocab = 4096, 92544
    total = 32 * (h * (h + 2 * 1024) + h * h + 3 * h * 14336 + 2 * h) + 2 * vocab * h + h
    assert total == 7_737_708_544
    spec = resolve_model("internlm/internlm2-chat-7b")
    assert spec.params is not None and spec.params.total == total and not spec.approximate
    assert spec.family == "InternLM2" and spec.max_model_len == 32768
    assert page_bytes("internlm/internlm2-chat-7b") - 1 == 855


def test_stablelm_2_1_6b_chat_by_hand() -> None:
    """StableLM 2 1.6B Chat (the publisher's config.json, 728 bytes): 24 layers of 2048 with 32 full KV heads
    (q/k/v/o 2048^2, QKV biases), gated MLP 3 x 2048 x 5632, two LayerNorms with biases; untied 100,352-row
    embedding and head, final LayerNorm: 1,644,515,328 parameters, 6.58 GB in float32 = its two shards
    (4.98 + 1.59 GB). stablelm is outside the architecture table: read as a Llama-style decoder (no biases), said so."""
    h, layers, vocab = 2048, 24, 100352
    qkv_bias, ln_bias = layers * 3 * h, (2 * layers + 1) * h
    total = layers * (4 * h * h + 3 * h * 5632 + 2 * h) + 2 * vocab * h + h + qkv_bias + ln_bias
    assert total == 1_644_515_328
    assert 6.56e9 < 4 * total < 6.59e9
    spec = resolve_model("stabilityai/stablelm-2-1_6b-chat")
    assert spec.params is not None and spec.params.total == total - qkv_bias - ln_bias
    assert spec.max_model_len == 4096 and not reconstructed("stabilityai/stablelm-2-1_6b-chat")
    assert any("'stablelm' is not in vllm-plan's architecture table" in reason for reason in spec.approximate)
    zephyr = resolve_model("stabilityai/stablelm-2-zephyr-1_6b")  # the other 1.6B tune, bundled
    assert zephyr.params == spec.params


def test_granite_4_0_micro_by_hand() -> None:
    """Granite 4.0 Micro (reconstructed): 40 attention layers of 2560 (q/o 2560^2, k/v 2560 x 8 x 64, the shared
    MLP as a dense gated MLP 3 x 2560 x 8192, two RMSNorms), a tied 100,352-row embedding, final norm:
    3,402,836,480 parameters, IBM's "3B"; no Mamba layer, so no Mamba state."""
    h, layers, vocab = 2560, 40, 100352
    total = layers * (2 * h * h + 2 * h * 512 + 3 * h * 8192 + 2 * h) + vocab * h + h
    assert total == 3_402_836_480
    spec = resolve_model("ibm-granite/granite-4.0-micro")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.params.mixer == 0 and spec.mamba is None
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 64, 131072)
    assert reconstructed("ibm-granite/granite-4.0-micro")


def test_seed_oss_36b_by_hand() -> None:
    """Seed-OSS-36B-Instruct (reconstructed): 64 layers of 5120 with 80 query heads of 128 (q 5120 x 10240, o 10240 x
    5120), 8 KV heads (k/v 5120 x 1024), q/k/v biases but no o bias, gated MLP 3 x 5120 x 27648, two RMSNorms; an untied
    155,136-row embedding and head, final norm: 36,151,104,512 parameters, the published 36B; 524,288 positions."""
    h, layers, vocab, q = 5120, 64, 155136, 80 * 128
    layer = 2 * h * q + 2 * h * 1024 + (q + 2 * 1024) + 3 * h * 27648 + 2 * h
    total = layers * layer + 2 * vocab * h + h
    assert total == 36_151_104_512
    spec = resolve_model("ByteDance-Seed/Seed-OSS-36B-Instruct")
    assert spec.params is not None and spec.params.total == total
    assert (spec.num_heads, spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (80, 8, 128, 524288)
    assert reconstructed("ByteDance-Seed/Seed-OSS-36B-Instruct")


def test_north_mini_code_w4a16_is_cohere2_moe_with_nvfp4_experts() -> None:
    """CohereLabs/North-Mini-Code-1.0-w4a16 (reconstructed): 49 layers of 2048 (q 4096, k/v 512, o; one norm before
    the parallel attention and MLP), layer 0 a dense MLP of 3 x 2048 x 3072, the other 48 a router 2048 x 128 and
    128 experts of 3 x 2048 x 768, a 262,144-row embedding that is also the head (cohere2_moe.py has no lm_head),
    the final norm: 30,484,303,872 parameters ("~30.5B" on the cards, 30.5 in the hub's listing). Its KV layout
    is 13 full-attention layers and 36 with a 4,096-token window: one 65,536-token request needs 2.24 GiB, what
    field10 Q005's report quotes vLLM 0.30 asking for ("64K needs 2.24 GiB")."""
    h = 2048
    attention = h * 4096 + 2 * h * 512 + 4096 * h
    total = 49 * (attention + h) + 3 * h * 3072 + 48 * (h * 128 + 128 * 3 * h * 768) + 262144 * h + h
    assert total == 30_484_303_872
    spec = resolve_model("CohereLabs/North-Mini-Code-1.0-w4a16")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.params.mlp == 3 * h * 3072 and not any("architecture table" in a for a in spec.approximate)
    assert spec.quant is not None and spec.quant.method == "nvfp4"
    rtx3090 = resolve_gpu("rtx 3090", load_gpus())
    e = explain(spec, rtx3090, EngineFlags(max_model_len=65536, enforce_eager=True), VllmVersion.parse("0.30.0"))
    need = e.blocks_per_request * e.stage.layout.bytes_per_block
    assert round(need / 2**30, 2) == 2.24
    # experts in NVFP4, attention, the dense layer and the embedding in 16 bit: 19.42 GB, the listed 19.3-19.4 GB
    assert 19.3e9 < e.stage.weights < 19.5e9
    assert reconstructed("CohereLabs/North-Mini-Code-1.0-w4a16")


def test_cohere2_moe_is_pinned_to_vllm_0_21() -> None:
    """Cohere2MoeForCausalLM shipped in vLLM 0.21.0 (the enablement pull 44707, per vllm-project/recipes' North Mini
    Code recipe): a plan for 0.20 is refused for the architecture, 0.30 (field10 Q003's build) carries no such issue
    nor the "release not pinned" warning."""
    spec = resolve_model("CohereLabs/North-Mini-Code-1.0-w4a16")
    rtx3090 = resolve_gpu("rtx 3090", load_gpus())
    flags = EngineFlags(max_model_len=8192)
    old = explain(spec, rtx3090, flags, VllmVersion.parse("0.20.0"))
    assert "architecture-not-in-release" in [k.value for k in old.error_kinds]
    new = explain(spec, rtx3090, flags, VllmVersion.parse("0.30.0"))
    assert "architecture-not-in-release" not in [k.value for k in new.error_kinds]
    assert not any("may not load Cohere2MoeForCausalLM" in str(w) for w in new.warnings)


def test_smollm3_3b_by_hand() -> None:
    """SmolLM3-3B (reconstructed: full fine-tunes' copies of its widths and context, transformers' SmolLM3Config
    defaults for its heads, vocabulary and tie): 36 layers of 2048 with 16 query and 4 KV heads of 128 (q/o 2048^2,
    k/v 2048 x 512), a gated MLP of 3 x 2048 x 11008, two RMSNorms; tied 128,256-row embedding, final norm:
    3,075,098,624 parameters (Hugging Face's 3B), 65,536 positions, a Llama-style decoder in vLLM."""
    h = 2048
    total = 36 * (2 * h * h + 2 * h * 512 + 3 * h * 11008 + 2 * h) + 128256 * h + h
    assert total == 3_075_098_624
    spec = resolve_model("HuggingFaceTB/SmolLM3-3B")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (4, 128, 65536)
    assert len(spec.approximate) == 1 and reconstructed("HuggingFaceTB/SmolLM3-3B")


def test_baichuan_7b_by_hand() -> None:
    """Baichuan-7B (reconstructed from full fine-tunes' copies of its config): a Llama-style decoder of 32 layers of
    4096 (W_pack 4096 x 12288 and o_proj 4096^2 without biases, a gated MLP of 3 x 4096 x 11008, two RMSNorms), an
    untied 64,000-row embedding and head, final norm: 7,000,559,616 parameters, 4,096 positions."""
    h = 4096
    total = 32 * (4 * h * h + 3 * h * 11008 + 2 * h) + 2 * 64000 * h + h
    assert total == 7_000_559_616
    spec = resolve_model("baichuan-inc/Baichuan-7B")
    assert spec.params is not None and spec.params.total == total
    assert spec.max_model_len == 4096 and reconstructed("baichuan-inc/Baichuan-7B")


def test_internlm_7b_and_chat_by_hand() -> None:
    """InternLM 7B and Chat 7B (the publisher's config.json files, the chat's 731 bytes as its blame page prints): 32
    layers of 4096 with 32 heads (q/k/v/o 4096^2), a gated MLP of 3 x 4096 x 11008, an untied 103,168-row embedding
    and head: 7,321,423,872 parameters as the Llama layout counts them; vLLM's InternLM also biases q/k/v/o ("bias":
    true, 32 x 4 x 4096 = 524,288 more), which the planner does not model and says so."""
    h = 4096
    total = 32 * (4 * h * h + 3 * h * 11008 + 2 * h) + 2 * 103168 * h + h
    assert total == 7_321_423_872
    for model_id in ("internlm/internlm-7b", "internlm/internlm-chat-7b"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.max_model_len == 2048 and not reconstructed(model_id)
        assert any("'internlm' is not in vllm-plan's architecture table" in r for r in spec.approximate)
    assert page_bytes("internlm/internlm-chat-7b") == 731


def test_aquila_7b_by_hand() -> None:
    """Aquila-7B (the publisher's config.json at e168c05, LlamaForCausalLM, 503 bytes as its page prints): 32 layers
    of 4096 with 32 heads, a gated MLP of 3 x 4096 x 11008, two RMSNorms, an untied 100,008-row embedding and head,
    final norm: 7,295,537,152 parameters, 2,048 positions."""
    h = 4096
    total = 32 * (4 * h * h + 3 * h * 11008 + 2 * h) + 2 * 100008 * h + h
    assert total == 7_295_537_152
    spec = resolve_model("BAAI/Aquila-7B")
    assert spec.params is not None and spec.params.total == total and spec.approximate == ()
    assert spec.max_model_len == 2048 and page_bytes("BAAI/Aquila-7B") == 503
