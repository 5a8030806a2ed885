"""Catalog round 8, group B (session 9): entries checked against their sources and counted by hand."""

from __future__ import annotations

import json

from recommender.catalog import load_model
from recommender.model.parse import parse_config
from recommender.sources.resolve import resolve_model


def _page_bytes(model_id: str, newline: bool = False) -> int:
    entry = load_model(model_id)
    assert entry is not None, model_id
    return len(json.dumps(entry.config, indent=2)) + (1 if newline else 0)


def test_bloom_560m_by_hand() -> None:
    """BLOOM: word embedding with its LayerNorm, 24 layers of 1024 (fused query_key_value 3 x 1024^2, dense 1024^2,
    dense_h_to_4h / dense_4h_to_h 4 x 1024^2 each, every linear biased, two LayerNorms with biases), final LayerNorm,
    the head tied: 559,214,592 parameters, the card's 559M. The publisher's onnx/config.json prints 756 bytes."""
    h, layers, vocab = 1024, 24, 250880
    layer = (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
    total = vocab * h + 2 * h + layers * layer + 2 * h
    assert total == 559_214_592
    spec = resolve_model("bigscience/bloom-560m")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert _page_bytes("bigscience/bloom-560m", newline=True) == 756


def test_mpt_7b_by_hand() -> None:
    """MPT (vllm mpt.py): 32 layers of 4096, Wqkv 3 x 4096^2 and out_proj 4096^2, up/down 4 x 4096^2 each (ungated),
    no biases and bias-free LayerNorms (no_bias), ALiBi, the 50432-row embedding is the head: 6,649,286,656
    parameters, the card's 6.7B. The instruct fine-tune's config page prints 1,326 bytes; base and instruct read
    the same."""
    h, layers, vocab = 4096, 32, 50432
    total = vocab * h + layers * (4 * h * h + 8 * h * h + 2 * h) + h
    assert total == 6_649_286_656
    for model_id in ("mosaicml/mpt-7b", "mosaicml/mpt-7b-instruct"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.num_layers == 32 and spec.max_model_len == 2048 and not spec.approximate
    assert _page_bytes("mosaicml/mpt-7b-instruct", newline=True) == 1326


def test_mpt_reader_reads_bias_and_grouped_kv_heads() -> None:
    """An MPT config with no_bias false counts every linear and LayerNorm bias; attn_config.kv_n_heads sets the KV
    heads (MPTAttention's QKVParallelLinear), here 8 of 32 heads of 128."""
    entry = load_model("mosaicml/mpt-7b-instruct")
    assert entry is not None
    config = {**entry.config, "no_bias": False, "attn_config": {**entry.config["attn_config"], "kv_n_heads": 8}}
    spec = parse_config(config, name="mpt-7b-instruct, biased", source="test")
    h, layers, vocab, kv = 4096, 32, 50432, 8 * 128
    attention = layers * ((h * h + 2 * h * kv + h + 2 * kv) + (h * h + h))
    mlp = layers * (2 * 4 * h * h + 4 * h + h)
    assert spec.num_kv_heads == 8 and spec.params is not None
    assert (spec.params.attention, spec.params.mlp) == (attention, mlp)
    assert spec.params.norms == (2 * layers + 1) * 2 * h and spec.params.embedding == vocab * h


def test_solar_10_7b_instruct_by_hand() -> None:
    """SOLAR-10.7B (depth-up-scaled Mistral widths): 48 layers of 4096 (q, o 4096^2; k, v 4096 x 1024; gated MLP 3 x
    4096 x 14336; two RMSNorms), embedding and untied head 32000 x 4096, final norm: 10,731,524,096 parameters, the
    name's 10.7B. The publisher's page prints 686 bytes."""
    h, layers, kv, ffn, vocab = 4096, 48, 1024, 14336, 32000
    total = layers * (2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h) + 2 * vocab * h + h
    assert total == 10_731_524_096
    spec = resolve_model("upstage/SOLAR-10.7B-Instruct-v1.0")
    assert spec.params is not None and spec.params.total == total and spec.dtype == "float16"
    assert _page_bytes("upstage/SOLAR-10.7B-Instruct-v1.0", newline=True) == 686


def test_pythia_1_4b_by_hand() -> None:
    """GPT-NeoX (Pythia 1.4B): 24 layers of 2048, fused query_key_value 3 x 2048^2 and dense 2048^2 with biases, MLP
    2 x 2048 x 8192 with biases, two LayerNorms; embedding and untied embed_out 50304 x 2048, final LayerNorm:
    1,414,647,808 parameters, the Pythia suite's figure. The fine-tune's page prints 722 bytes."""
    h, layers, ffn, vocab = 2048, 24, 8192, 50304
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    total = 2 * vocab * h + layers * layer + 2 * h
    assert total == 1_414_647_808
    spec = resolve_model("EleutherAI/pythia-1.4b")
    assert spec.params is not None and spec.params.total == total
    assert _page_bytes("EleutherAI/pythia-1.4b", newline=True) == 722


def test_vicuna_and_codellama_instruct_pages() -> None:
    """lmsys's vicuna-13b-v1.3 (its own page, 567 bytes) and v1.5 (TheBloke's copy, four-space indents: 689 bytes)
    are Llama-13B layouts: 40 layers of 5120 (attention 4 x 5120^2, MLP 3 x 5120 x 13824, two norms), embedding and
    head 32000 x 5120, final norm: 13,015,864,320 parameters; v1.3 keeps LLaMA-1's 2048 positions, v1.5 Llama-2's
    4096. CodeLlama-7b-Instruct (a fine-tune's copy, 646 bytes) counts as the bundled base."""
    h, layers, ffn, vocab = 5120, 40, 13824, 32000
    total = layers * (4 * h * h + 3 * h * ffn + 2 * h) + 2 * vocab * h + h
    assert total == 13_015_864_320
    for model_id, positions in (("lmsys/vicuna-13b-v1.3", 2048), ("lmsys/vicuna-13b-v1.5", 4096)):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.max_model_len == positions
    assert _page_bytes("lmsys/vicuna-13b-v1.3", newline=True) == 567
    entry = load_model("lmsys/vicuna-13b-v1.5")
    assert entry is not None and len(json.dumps(entry.config, indent=4)) == 689
    code = resolve_model("codellama/CodeLlama-7b-Instruct-hf")
    assert code.params == resolve_model("codellama/CodeLlama-7b-hf").params and code.vocab_size == 32016
    assert _page_bytes("codellama/CodeLlama-7b-Instruct-hf", newline=True) == 646


def test_nousresearch_llama_2_copies_resolve_to_meta() -> None:
    """NousResearch's ungated Llama-2 re-uploads resolve to Meta's bundled configs (mirror aliases)."""
    from recommender.catalog import find_model

    for alias, target in (
        ("NousResearch/Llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"),
        ("NousResearch/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-chat-hf"),
    ):
        match = find_model(alias)
        assert match is not None and match.entry.id == target
        assert resolve_model(alias).params == resolve_model(target).params


def test_granite_3_0_8b_rebuilt_from_its_2b_sibling() -> None:
    """granite-3.0-8b-instruct, rebuilt from the bundled 2B config with the widths a full fine-tune of the 8B prints:
    the rebuilt file is the 788 bytes the repository's file list prints. By hand: 40 layers of 4096 (q, o 4096^2; k, v
    4096 x 1024; MLP 3 x 4096 x 12800; two norms), tied embedding 49155 x 4096, final norm: 8,170,848,256."""
    h, layers, kv, ffn, vocab = 4096, 40, 1024, 12800, 49155
    total = layers * (2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h) + vocab * h + h
    assert total == 8_170_848_256
    entry = load_model("ibm-granite/granite-3.0-8b-instruct")
    assert entry is not None and entry.reconstructed and _page_bytes(entry.id, newline=True) == 788
    spec = resolve_model(entry.id)
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 4096
    small = load_model("ibm-granite/granite-3.0-2b-instruct")
    assert small is not None
    differs = {k for k in entry.config if entry.config[k] != small.config.get(k)}
    assert differs == {"hidden_size", "intermediate_size", "attention_multiplier", "logits_scaling"}


def test_opt_1_3b_and_gpt_neox_20b_by_hand() -> None:
    """OPT-1.3B: embedding 50272 x 2048 and 2050 learned positions (OPT's offset 2), 24 layers (q, k, v, o and fc1/fc2
    of 8192, all biased; two LayerNorms), final LayerNorm, tied head: 1,315,758,080. GPT-NeoX-20B: 44 layers of 6144
    (fused QKV and dense with biases, MLP 4 x 6144 with biases, two LayerNorms), untied 50432-row embedding and head,
    final LayerNorm: 20,554,567,680, the paper's figure."""
    h, ffn = 2048, 8192
    layer = 4 * (h * h + h) + (h * ffn + ffn) + (ffn * h + h) + 2 * 2 * h
    opt = 50272 * h + (2048 + 2) * h + 24 * layer + 2 * h
    assert opt == 1_315_758_080
    spec = resolve_model("facebook/opt-1.3b")
    assert spec.params is not None and spec.params.total == opt
    assert _page_bytes("facebook/opt-1.3b", newline=True) == 749
    h, ffn = 6144, 24576
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    neox = 2 * 50432 * h + 44 * layer + 2 * h
    assert neox == 20_554_567_680
    spec = resolve_model("EleutherAI/gpt-neox-20b")
    assert spec.params is not None and spec.params.total == neox
    assert _page_bytes("EleutherAI/gpt-neox-20b", newline=True) == 692


def test_starcoder_multi_query_by_hand() -> None:
    """StarCoder (GPT-BigCode, multi_query): 40 layers of 6144, c_attn 6144 x (6144 + 2 x 128) and c_proj 6144^2 with
    biases, MLP 6144 x 24576 twice with biases, two LayerNorms; 49152-row embedding (tied head) and 8192 learned
    positions, final LayerNorm. One KV head of 128 per layer. WizardCoder-15B adds one token. Pages: 992 and 997."""
    h, ffn, head = 6144, 24576, 128
    layer = (h * (h + 2 * head) + h + 2 * head) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    total = 49152 * h + 8192 * h + 40 * layer + 2 * h
    spec = resolve_model("bigcode/starcoder")
    assert spec.params is not None and spec.params.total == total and spec.num_kv_heads == 1
    wizard = resolve_model("WizardLMTeam/WizardCoder-15B-V1.0")
    assert wizard.params is not None and wizard.params.total == total + h
    assert _page_bytes("bigcode/starcoder", newline=True) == 992
    assert _page_bytes("WizardLMTeam/WizardCoder-15B-V1.0", newline=True) == 997


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
    assert _page_bytes("allenai/OLMoE-1B-7B-0924-Instruct", newline=True) == 840


def test_unsloth_llama_3_1_8b_bnb_4bit() -> None:
    """unsloth's NF4 Llama-3.1-8B-Instruct (a fine-tune's copy of its config): bitsandbytes 4-bit, double quantization,
    nothing skipped, over Meta's layout."""
    spec = resolve_model("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit")
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits) == ("bitsandbytes", 4)
    assert spec.quant.double_quant and spec.quant.keep_unquantized == ()
    assert spec.params == resolve_model("meta-llama/Llama-3.1-8B-Instruct").params


def test_bloom_7b1_and_1b7_by_hand() -> None:
    """BLOOM 7B1 (30 layers of 4096) and 1B7 (24 of 2048): every linear biased, MLP 4 x H, two LayerNorms a layer,
    embedding LayerNorm and final LayerNorm, tied 250880-row head: 7,069,016,064 and 1,722,408,960, the cards'
    figures. The 1B7 config carries seq_length 4096, which vLLM reads as its context; the 7B1's has no length key."""
    for model_id, h, layers, total, positions in (
        ("bigscience/bloom-7b1", 4096, 30, 7_069_016_064, 2048),
        ("bigscience/bloom-1b7", 2048, 24, 1_722_408_960, 4096),
    ):
        layer = (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
        assert 250880 * h + 2 * h + layers * layer + 2 * h == total
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.max_model_len == positions
    assert _page_bytes("bigscience/bloom-7b1", newline=True) == 788
    assert _page_bytes("bigscience/bloom-1b7", newline=True) == 810


def test_dolly_codellama_13b_instruct_and_starcoder2_3b() -> None:
    """Dolly v2 (GPT-NeoX, 50280-row untied head; the publisher's 12B page of 825 bytes, a re-shard's 7B page of 819), CodeLlama-13b-Instruct (a
    fine-tune's copy, 646 bytes: counts as the bundled base) and StarCoder2-3B (OpenVINO's export, 738 bytes without
    a final newline: 2 KV heads, a 4096-token sliding window)."""
    h, ffn, layers = 5120, 20480, 36
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    dolly = resolve_model("databricks/dolly-v2-12b")
    assert dolly.params is not None and dolly.params.total == 2 * 50280 * h + layers * layer + 2 * h
    assert _page_bytes("databricks/dolly-v2-12b", newline=True) == 825
    assert _page_bytes("databricks/dolly-v2-7b", newline=True) == 819
    code = resolve_model("codellama/CodeLlama-13b-Instruct-hf")
    assert code.params == resolve_model("codellama/CodeLlama-13b-hf").params
    assert _page_bytes("codellama/CodeLlama-13b-Instruct-hf", newline=True) == 646
    sc2 = resolve_model("bigcode/starcoder2-3b")
    assert (sc2.num_kv_heads, sc2.sliding_window, sc2.vocab_size) == (2, 4096, 49152)
    assert _page_bytes("bigcode/starcoder2-3b") == 738


def test_pythia_12b_and_gpt2_xl_by_hand() -> None:
    """Pythia-12B: 36 layers of 5120 in the GPT-NeoX layout with a 50688-row untied head: 11,846,072,320, the suite's
    figure (Dolly v2 12B is the same network with 50280 rows). GPT-2 XL: 48 layers of 1600 (c_attn 3 x 1600^2, c_proj,
    MLP 4 x 1600 twice, all biased; two LayerNorms), 50257-row tied embedding and 1024 positions, final LayerNorm:
    1,557,611,200. Pages: 722 bytes (a fine-tune's) and 689 (the publisher's, no final newline)."""
    h, ffn = 5120, 20480
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    pythia = 2 * 50688 * h + 36 * layer + 2 * h
    assert pythia == 11_846_072_320
    spec = resolve_model("EleutherAI/pythia-12b")
    assert spec.params is not None and spec.params.total == pythia
    dolly = resolve_model("databricks/dolly-v2-12b")
    assert dolly.params is not None and pythia - dolly.params.total == 2 * (50688 - 50280) * h
    h = 1600
    layer = (3 * h * h + 3 * h) + (h * h + h) + (8 * h * h + 4 * h + h) + 2 * 2 * h
    gpt2 = 50257 * h + 1024 * h + 48 * layer + 2 * h
    assert gpt2 == 1_557_611_200
    spec = resolve_model("openai-community/gpt2-xl")
    assert spec.params is not None and spec.params.total == gpt2 and spec.max_model_len == 1024
    assert _page_bytes("EleutherAI/pythia-12b", newline=True) == 722
    assert _page_bytes("openai-community/gpt2-xl") == 689


def test_unsloth_gemma_re_uploads_resolve_to_google() -> None:
    """unsloth's 16-bit Gemma 2/3 re-uploads resolve to Google's bundled configs (mirror aliases), case as users type."""
    from recommender.catalog import find_model

    for alias, target in (
        ("unsloth/gemma-3-27b-it", "google/gemma-3-27b-it"),
        ("unsloth/gemma-3-4b-it", "google/gemma-3-4b-it"),
        ("unsloth/gemma-2-9b-it", "google/gemma-2-9b-it"),
    ):
        match = find_model(alias)
        assert match is not None and match.entry.id == target
        assert resolve_model(alias).params == resolve_model(target).params


def test_thebloke_llama_2_7b_chat_awq_rebuilt() -> None:
    """TheBloke's Llama-2-7B-Chat AWQ (vLLM's documented AWQ example): Meta's chat layout with TheBloke's AWQ block,
    4-bit GEMM in groups of 128 with zero points; marked reconstructed; the id resolves as the docs spell it."""
    spec = resolve_model("TheBloke/Llama-2-7b-Chat-AWQ")
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 128)
    assert spec.quant.has_zero_points and spec.params == resolve_model("meta-llama/Llama-2-7b-chat-hf").params
    entry = load_model("TheBloke/Llama-2-7B-Chat-AWQ")
    assert entry is not None and entry.reconstructed
