"""Catalog round 8, group A (session 9): entries checked against their sources by hand."""

from __future__ import annotations

import json

import pytest

from recommender.catalog import find_model
from recommender.sources.resolve import resolve_model


def _indent2_bytes(config: dict[str, object]) -> int:
    """The size of a config.json as transformers writes it (indent 2, final newline): what the hub page prints."""
    return len(json.dumps(config, indent=2)) + 1


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("baichuan-inc/Baichuan-13B-Chat", 733),
        ("baichuan-inc/Baichuan2-13B-Chat", 791),
        ("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", 905),
        ("TechxGenus/Mistral-Large-Instruct-2411-AWQ", 855),
        ("mistralai/Mistral-Large-Instruct-2411", 678),
        ("ModelCloud/Mistral-Large-Instruct-2407-gptq-4bit", 1094),
        ("nvidia/Llama-3.1-Nemotron-Nano-4B-v1.1", 910),
        ("Qwen/Qwen2-57B-A14B", 916),
        ("Qwen/Qwen-7B-Chat", 1107),
        ("Qwen/Qwen1.5-110B-Chat", 662),
        ("nvidia/Mistral-NeMo-Minitron-8B-Instruct", 702),
        ("deepseek-ai/deepseek-llm-67b-chat", 593),
        ("Qwen/Qwen1.5-4B-Chat", 666),
    ],
)
def test_catalog_round_8_pages_whole(model: str, size: int) -> None:
    """Each transcription re-serialised at indent 2 is exactly as long as the page it was copied from says its file
    is: a dropped or mistyped key would change the count."""
    match = find_model(model)
    assert match is not None and match.entry.id == model
    assert _indent2_bytes(dict(match.entry.config)) == size


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


def test_catalog_round_8_nemotron_70b_is_llama_3_1_70b() -> None:
    """Llama-3.1-Nemotron-70B-Instruct-HF is an RLHF fine-tune of Llama-3.1-70B-Instruct with Meta's architecture: the
    same count (70,553,706,496) and context as the bundled Meta release."""
    nemotron = resolve_model("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF")
    meta = resolve_model("meta-llama/Llama-3.1-70B-Instruct")
    assert nemotron.params == meta.params and nemotron.params is not None
    assert nemotron.params.total == 70_553_706_496
    assert nemotron.max_model_len == meta.max_model_len == 131072


def test_catalog_round_8_mistral_large_2411_by_hand() -> None:
    """Mistral-Large-Instruct-2411 keeps 2407's 123B layout: 88 layers of q/o 12288 x 12288, k/v 12288 x 1024, a gated
    MLP of 28672 and two norms, a 32,768-row embedding and head: 122,610,069,504, equal to the bundled 2407; its
    context is 131,072 (2407's config.json says 32,768). The AWQ and GPTQ builds count the same logical weights."""
    layer = 2 * 12288 * 12288 + 2 * 12288 * 1024 + 3 * 12288 * 28672 + 2 * 12288
    total = 88 * layer + 2 * 32768 * 12288 + 12288
    assert total == 122_610_069_504
    v2411 = resolve_model("mistralai/Mistral-Large-Instruct-2411")
    assert v2411.params is not None and v2411.params == resolve_model("mistralai/Mistral-Large-Instruct-2407").params
    assert v2411.params.total == total and v2411.max_model_len == 131072
    awq = resolve_model("TechxGenus/Mistral-Large-Instruct-2411-AWQ")
    gptq = resolve_model("ModelCloud/Mistral-Large-Instruct-2407-gptq-4bit")
    assert awq.quant is not None and (awq.quant.method, awq.quant.bits, awq.quant.group_size) == ("awq", 4, 128)
    assert gptq.quant is not None and (gptq.quant.method, gptq.quant.bits, gptq.quant.group_size) == ("gptq", 4, 128)
    assert not gptq.quant.lm_head_quantized and awq.params == gptq.params == v2411.params


def test_catalog_round_8_nemotron_nano_4b_by_hand() -> None:
    """Llama-3.1-Nemotron-Nano-4B-v1.1 (Minitron-4B-Width): 32 layers of q 3072 x 4096, k/v 3072 x 1024, o 4096 x 3072
    (32 heads of 128 over a 3072 residual), a gated MLP of 9216 and two norms, an untied 128,256-row embedding and
    head: 4,512,746,496 (its card: 4.5B)."""
    layer = 2 * 3072 * 4096 + 2 * 3072 * 1024 + 3 * 3072 * 9216 + 2 * 3072
    nano = resolve_model("nvidia/Llama-3.1-Nemotron-Nano-4B-v1.1")
    assert nano.params is not None
    assert nano.params.total == 32 * layer + 2 * 128256 * 3072 + 3072 == 4_512_746_496
    assert nano.max_model_len == 131072 and nano.num_kv_heads == 8


def test_catalog_round_8_qwen2_57b_a14b_by_hand() -> None:
    """Qwen2-57B-A14B: 28 layers, each attention (q/o 3584 x 3584 with q bias, k/v 3584 x 512 with biases), 64 experts
    of 3 x 3584 x 2560, a shared expert of 3 x 3584 x 20480 with its 3584 x 1 gate, a 3584 x 64 router and two
    norms; untied 151,936-row embedding and head: 57,408,658,944 (the card's 57B). The instruct release keeps it."""
    attention = 2 * 3584 * 3584 + 3584 + 2 * (3584 * 512 + 512)
    moe = 64 * 3 * 3584 * 2560 + 3 * 3584 * 20480 + 3584 + 3584 * 64
    layer = attention + moe + 2 * 3584
    base, instruct = resolve_model("Qwen/Qwen2-57B-A14B"), resolve_model("Qwen/Qwen2-57B-A14B-Instruct")
    assert base.params is not None and base.params == instruct.params
    assert base.params.total == 28 * layer + 2 * 151936 * 3584 + 3584 == 57_408_658_944
    assert (base.max_model_len, instruct.max_model_len) == (131072, 32768)


def test_catalog_round_8_qwen2_5_1m_keep_their_base_widths() -> None:
    """The 1M releases keep Qwen2.5-7B/14B-Instruct's widths exactly (same counts as the bundled releases) and differ
    in the context: 1,010,000 positions (rope_theta 1e7 with Dual Chunk Attention)."""
    for long, short in (
        ("Qwen/Qwen2.5-7B-Instruct-1M", "Qwen/Qwen2.5-7B-Instruct"),
        ("Qwen/Qwen2.5-14B-Instruct-1M", "Qwen/Qwen2.5-14B-Instruct"),
    ):
        spec, ref = resolve_model(long), resolve_model(short)
        assert spec.params == ref.params and spec.num_kv_heads == ref.num_kv_heads, long
        assert spec.max_model_len == 1_010_000 and ref.max_model_len == 32768
        match = find_model(long)
        assert match is not None and match.entry.config["dual_chunk_attention_config"] == {
            "chunk_size": 262144,
            "local_size": 8192,
            "original_max_position_embeddings": 262144,
        }


def test_catalog_round_8_deepseek_moe_16b_by_hand() -> None:
    """DeepSeekMoE 16B: 28 layers of multi-head attention (4 x 2048 x 2048); layer 0 dense (3 x 2048 x 10944); layers
    1-27 with 64 routed experts and 2 shared experts of 3 x 2048 x 1408 each and a 2048 x 64 router; two norms a layer;
    untied 102,400-row embedding and head: 16,375,728,128 (its card: 16.4B)."""
    expert = 3 * 2048 * 1408
    total = 28 * (4 * 2048 * 2048 + 2 * 2048) + 3 * 2048 * 10944
    total += 27 * (64 * expert + 2 * expert + 2048 * 64) + 2 * 102400 * 2048 + 2048
    moe = resolve_model("deepseek-ai/deepseek-moe-16b-chat")
    assert moe.params is not None and moe.params.total == total == 16_375_728_128
    assert moe.params.experts == 27 * 64 * expert and moe.max_model_len == 4096


def test_catalog_round_8_qwen_7b_chat_is_qwen_7b() -> None:
    """Qwen-7B-Chat keeps Qwen-7B's architecture (7,721,324,544 by the Qwen v1 reader) and its 8,192-token context."""
    chat, base = resolve_model("Qwen/Qwen-7B-Chat"), resolve_model("Qwen/Qwen-7B")
    assert chat.params == base.params and chat.params is not None and chat.params.total == 7_721_324_544
    assert chat.max_model_len == base.max_model_len == 8192


@pytest.mark.parametrize(
    ("model", "size"),
    [("nvidia/Nemotron-Mini-4B-Instruct", 646), ("nvidia/Minitron-4B-Base", 639), ("nvidia/Minitron-8B-Base", 635)],
)
def test_catalog_round_8_nvidia_pages_without_final_newline(model: str, size: int) -> None:
    """NVIDIA's hand-written Minitron config.json files end without a newline: the pages' sizes are the indent-2
    text alone."""
    match = find_model(model)
    assert match is not None and _indent2_bytes(dict(match.entry.config)) - 1 == size


def test_catalog_round_8_nemotron_family_by_hand() -> None:
    """NemotronForCausalLM (vLLM nemotron.py): q/k/v/o without bias, an up/down squared-ReLU MLP (no gate) and
    LayerNorm1P with weight and bias (two a layer, one final); untied 256,000-row embedding and head.
    Minitron-4B: 32 x (q/o 3072 x 3072, k/v 3072 x 1024, MLP 2 x 3072 x 9216, norms 4 x 3072) + 2 x 256000 x 3072 +
    2 x 3072 = 4,190,509,056 (the card's 4.19B). Minitron-8B states head_dim 128 over 48 heads, so q and o are
    4096 x 6144: 8,271,699,968."""
    layer4 = 2 * 3072 * 3072 + 2 * 3072 * 1024 + 2 * 3072 * 9216 + 4 * 3072
    layer8 = 2 * 4096 * 6144 + 2 * 4096 * 1024 + 2 * 4096 * 16384 + 4 * 4096
    mini, base4 = resolve_model("nvidia/Nemotron-Mini-4B-Instruct"), resolve_model("nvidia/Minitron-4B-Base")
    base8 = resolve_model("nvidia/Minitron-8B-Base")
    assert mini.params is not None and base8.params is not None and not mini.approximate
    assert mini.params == base4.params
    assert mini.params.total == 32 * layer4 + 2 * 256000 * 3072 + 2 * 3072 == 4_190_509_056
    assert base8.params.total == 32 * layer8 + 2 * 256000 * 4096 + 2 * 4096 == 8_271_699_968


def test_catalog_round_8_baichuan_is_read_as_a_llama_decoder_exactly() -> None:
    """Baichuan's family entry (vLLM baichuan.py to 0.23.0) counts exactly, no longer marked approximate."""
    for model in ("baichuan-inc/Baichuan2-7B-Chat", "baichuan-inc/Baichuan-13B-Chat"):
        assert not resolve_model(model).approximate


def test_catalog_round_8_deepseek_llm_67b_by_hand() -> None:
    """DeepSeek LLM 67B: 95 Llama layers (q/o 8192 x 8192, k/v 8192 x 1024, gated MLP 3 x 8192 x 22016, two norms)
    and an untied 102,400-row embedding and head: 67,425,001,472."""
    layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 22016 + 2 * 8192
    spec = resolve_model("deepseek-ai/deepseek-llm-67b-chat")
    assert spec.params is not None
    assert spec.params.total == 95 * layer + 2 * 102400 * 8192 + 8192 == 67_425_001_472
