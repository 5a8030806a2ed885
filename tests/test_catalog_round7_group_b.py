"""Catalog round 7, group B and community builds (session 8): entries and aliases checked against their sources."""

from __future__ import annotations

import json

from recommender.catalog import find_model, load_model
from recommender.sources.resolve import resolve_model


def test_unsloth_llama_3_2_vision_is_meta_checkpoint() -> None:
    """unsloth's Llama-3.2-11B-Vision-Instruct (field5 K014) is Meta's checkpoint re-uploaded: it plans as the bundled
    Meta config, 40 text layers of which 8 cross-attention, and the 32-layer vision encoder."""
    match = find_model("unsloth/Llama-3.2-11B-Vision-Instruct")
    assert match is not None and match.entry.id == "meta-llama/Llama-3.2-11B-Vision-Instruct"
    spec = resolve_model("unsloth/Llama-3.2-11B-Vision-Instruct")
    assert spec.params == resolve_model("meta-llama/Llama-3.2-11B-Vision-Instruct").params
    assert spec.num_layers == 40 and spec.vocab_size == 128256


def test_community_awq_llama_builds_from_their_own_config_pages() -> None:
    """AutoAWQ builds read from their own config.json pages (their byte counts match the repositories' file lists:
    casperhansen's 976, TechxGenus' 877, the Instruct sibling's rebuilt file 886 = 877 + len('-Instruct')), each the
    4-bit GEMM block (group 128, zero point) over Meta's layout. By hand for the 70B: 80 layers of 8192 (q, o 8192^2;
    k, v 8192 x 1024; MLP 3 x 8192 x 28672; two norms), embedding and head 128256 x 8192, final norm:
    70,553,706,496 parameters, the card's 70B."""
    h, layers, kv, ffn, vocab = 8192, 80, 1024, 28672, 128256
    total = layers * (2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h) + 2 * vocab * h + h
    assert total == 70_553_706_496
    for awq, base in (
        ("casperhansen/llama-3-70b-instruct-awq", "meta-llama/Meta-Llama-3-70B-Instruct"),
        ("TechxGenus/Meta-Llama-3-70B-AWQ", "meta-llama/Meta-Llama-3-70B"),
        ("TechxGenus/Meta-Llama-3-70B-Instruct-AWQ", "meta-llama/Meta-Llama-3-70B-Instruct"),
    ):
        spec = resolve_model(awq)
        assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 128)
        assert spec.quant.has_zero_points and spec.params is not None and spec.params.total == total, awq
        assert spec.params == resolve_model(base).params, awq
    rebuilt, sibling = (
        load_model("TechxGenus/Meta-Llama-3-70B-Instruct-AWQ"),
        load_model("TechxGenus/Meta-Llama-3-70B-AWQ"),
    )
    assert rebuilt is not None and sibling is not None and rebuilt.reconstructed and not sibling.reconstructed
    for entry, size in ((sibling, 877), (rebuilt, 886), (load_model("casperhansen/llama-3-70b-instruct-awq"), 976)):
        assert entry is not None and len(json.dumps(entry.config, indent=2)) + 1 == size, entry.id
    # the hub's duplicate of TheBloke's repository prints 772 bytes: written without a final newline
    llama2 = load_model("TheBloke/Llama-2-7B-AWQ")
    assert llama2 is not None and len(json.dumps(llama2.config, indent=2)) == 772
    assert resolve_model("TheBloke/Llama-2-7B-AWQ").params == resolve_model("meta-llama/Llama-2-7b-hf").params


def test_mixtral_awq_keeps_its_router_and_matches_its_files() -> None:
    """TheBloke's Mixtral-8x7B-Instruct AWQ: its quant_config.json keeps the MoE router (`gate`) in 16 bits; the
    weights one GPU holds come to the three safetensors files (9.97 + 9.98 + 4.7 GB on the repository's file list)
    within 1 %."""
    from recommender.memory.weights import Parallel, weight_bytes_per_gpu

    spec = resolve_model("TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ")
    assert spec.quant is not None and spec.quant.method == "awq" and spec.quant.keep_unquantized == ("gate",)
    assert spec.params == resolve_model("mistralai/Mixtral-8x7B-Instruct-v0.1").params
    weights = weight_bytes_per_gpu(spec, Parallel(), dtype_bytes=2, quant=spec.quant)
    assert abs(weights / (9.97e9 + 9.98e9 + 4.7e9) - 1) < 0.01


def test_unsloth_llama_3_bnb_4bit_builds() -> None:
    """unsloth's NF4 Llama-3-8B checkpoints (from fine-tunes saved with unsloth, whose config.json keeps the block: 1,124
    and 1,115 bytes as their pages print): bitsandbytes 4-bit with double quantization, nothing skipped, over Meta's
    8B layout."""
    for bnb, base, size in (
        ("unsloth/llama-3-8b-Instruct-bnb-4bit", "meta-llama/Meta-Llama-3-8B-Instruct", 1124),
        ("unsloth/llama-3-8b-bnb-4bit", "meta-llama/Meta-Llama-3-8B", 1115),
    ):
        spec = resolve_model(bnb)
        assert spec.quant is not None and (spec.quant.method, spec.quant.bits) == ("bitsandbytes", 4)
        assert spec.quant.double_quant and spec.quant.keep_unquantized == ()
        assert spec.params == resolve_model(base).params, bnb
        entry = load_model(bnb)
        assert entry is not None and len(json.dumps(entry.config, indent=2)) + 1 == size


def test_thebloke_llama_2_gptq_builds_read_their_quantize_config() -> None:
    """TheBloke's GPTQ Llama-2 builds: the values of each repository's own quantize_config.json over the bundled base
    layout (reconstructed entries): the 7B chat at 4 bits in groups of 128 without act-order, the 70B ones per channel
    with act-order. The 70B base layout by hand: 80 layers of 8192 (q, o 8192^2; k, v 8192 x 1024; MLP 3 x 8192 x
    28672; two norms), embedding and head 32000 x 8192, final norm: 68,976,648,192 parameters, the card's 70B."""
    h, layers, kv, ffn, vocab = 8192, 80, 1024, 28672, 32000
    total = layers * (2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h) + 2 * vocab * h + h
    assert total == 68_976_648_192
    chat7 = resolve_model("TheBloke/Llama-2-7B-Chat-GPTQ")
    assert chat7.quant is not None and (chat7.quant.method, chat7.quant.bits, chat7.quant.group_size) == (
        "gptq",
        4,
        128,
    )
    assert not chat7.quant.has_zero_points and chat7.params == resolve_model("meta-llama/Llama-2-7b-chat-hf").params
    for gptq in ("TheBloke/Llama-2-70B-Chat-GPTQ", "TheBloke/Llama-2-70B-GPTQ"):
        spec = resolve_model(gptq)
        assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("gptq", 4, -1)
        assert spec.params is not None and spec.params.total == total, gptq
        entry = load_model(gptq)
        assert entry is not None and entry.reconstructed, gptq
    mistral = resolve_model("TheBloke/Mistral-7B-Instruct-v0.1-AWQ")
    assert mistral.quant is not None and (mistral.quant.method, mistral.quant.group_size) == ("awq", 128)
    assert mistral.params == resolve_model("mistralai/Mistral-7B-Instruct-v0.1").params


def test_lorbus_qwen3_6_autoround_keeps_its_deltanet_gates_16_bit() -> None:
    """Lorbus's AutoRound INT4 of Qwen3.6-27B (field6 L018-L020): GPTQ-packed 4-bit in groups of 128 over the bundled
    Qwen3.6-27B layout, read as vLLM's INCConfig; every linear-attention layer's in_proj_b / in_proj_a (fused
    in_proj_ba, 2 x 48 value heads wide) stays 16-bit, the full-attention projections and MLPs are packed, lm_head is
    not quantized."""
    from recommender.memory.weights import Parallel, tensor_bytes
    from recommender.model.tensors import model_tensors

    spec = resolve_model("Lorbus/Qwen3.6-27B-int4-AutoRound")
    assert spec.quant is not None and spec.quant.checkpoint_format == "auto-round"
    assert (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("gptq", 4, 128)
    assert spec.params == resolve_model("Qwen/Qwen3.6-27B").params
    tensors = {t.module: t for t in model_tensors(spec)}
    ba = tensors["model.layers.0.linear_attn.in_proj_ba"]
    assert tensor_bytes(spec, ba, Parallel(), 2, spec.quant) == ba.rows * ba.cols * 2 == 96 * 5120 * 2
    down = tensors["model.layers.3.mlp.down_proj"]
    assert (
        tensor_bytes(spec, down, Parallel(), 2, spec.quant)
        == down.cols // 8 * down.rows * 4 + down.cols // 128 * down.rows * 2
    )
    head = tensors["lm_head"]
    assert tensor_bytes(spec, head, Parallel(), 2, spec.quant) == head.rows * head.cols * 2
