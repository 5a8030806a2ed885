"""Catalog entries of Meta's Llama family (Llama 2, 3, 3.1, 3.2, 3.3, 4, CodeLlama, Llama Guard) and Llama-layout fine-
tunes (Vicuna, SOLAR), with their community and vendor quantized builds. Entries and aliases are checked against
their sources by hand; each test's docstring names them (and the field set or issue that brought the model in)."""

from __future__ import annotations

import json

from recommender.catalog import find_model, load_model
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, page_bytes, reconstructed


def test_catalog_round_6_group_b_maverick_fp8_and_aliases() -> None:
    """Llama-4-Maverick FP8 (field4 J016) is the bundled BF16 Maverick's text model (same 400.7B: 48 layers, 128 routed
    experts of 3 x 5120 x 8192 on the 24 MoE layers) plus the 34-layer vision tower its config.json carries, read as
    compressed-tensors FP8 per channel; it is reconstructed (its ignore list comes from the Scout FP8 sibling) and says
    so. The new aliases resolve to their bundled targets, and a copy of the aliases' target never changes its plan."""
    fp8, bf16 = (
        resolve_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"),
        resolve_model("meta-llama/Llama-4-Maverick-17B-128E-Instruct"),
    )
    assert fp8.params is not None and bf16.params is not None
    assert 24 * 128 * 3 * 5120 * 8192 == fp8.params.experts == bf16.params.experts
    assert fp8.params.total - fp8.params.vision == bf16.params.total == 400_711_848_960
    assert fp8.quant is not None and fp8.quant.method == "fp8" and fp8.quant.group_size == -1
    assert "language_model.lm_head" in fp8.quant.keep_unquantized
    assert any(reason.startswith("config.json reconstructed: ") for reason in fp8.approximate)
    for alias, target in (
        ("google/gemma-3-27b-pt", "google/gemma-3-27b-it"),
        ("google/gemma-4-E4B", "google/gemma-4-E4B-it"),
        ("unsloth/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct"),
        ("unsloth/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"),
    ):
        match = find_model(alias)
        assert match is not None and match.entry.id == target, alias
        assert resolve_model(alias).params == resolve_model(target).params
    # CodeLlama 34B has no infilling tokens: 32000 like its Instruct release (7b/13b carry 32016)
    assert resolve_model("codellama/CodeLlama-34b-hf").vocab_size == 32000
    assert resolve_model("codellama/CodeLlama-13b-hf").vocab_size == 32016


def test_catalog_round_6_group_b_quantized_llama_builds() -> None:
    """neuralmagic's FP8-dynamic Llama-3.2-11B-Vision (perf set 4 T001; RedHatAI/ since the rename) keeps the vision
    tower, the projector and lm_head in 16 bits (its recipe's ignore list): its weights come to the checkpoint's three
    safetensors files, 4.99 + 4.99 + 2.64 GB on the repository's file list (huggingface.co/neuralmagic/
    Llama-3.2-11B-Vision-Instruct-FP8-dynamic/tree/main, docs index), within 1 %. hugging-quants' GPTQ builds read
    AutoGPTQ's 4-bit, group-128 block."""
    from recommender.memory.weights import Parallel, weight_bytes_per_gpu

    fp8 = resolve_model("neuralmagic/Llama-3.2-11B-Vision-Instruct-FP8-dynamic")
    assert fp8.quant is not None and fp8.quant.method == "fp8" and "re:vision_model.*" in fp8.quant.keep_unquantized
    weights = weight_bytes_per_gpu(fp8, Parallel(), dtype_bytes=2, quant=fp8.quant)
    assert abs(weights / (4.99e9 + 4.99e9 + 2.64e9) - 1) < 0.01
    for size in ("8B", "70B"):
        gptq = resolve_model(f"hugging-quants/Meta-Llama-3.1-{size}-Instruct-GPTQ-INT4")
        assert gptq.quant is not None and (gptq.quant.method, gptq.quant.bits, gptq.quant.group_size) == (
            "gptq",
            4,
            128,
        )
        assert gptq.params == resolve_model(f"meta-llama/Llama-3.1-{size}-Instruct").params


def test_catalog_round_6_group_b_awq_pages() -> None:
    """Community AWQ builds read from their own config.json pages: the 4-bit GEMM block (group 128, zero point) over
    their base's layout, hand-checked for one: lambda's Llama-3.3-70B AWQ keeps Meta's 70B widths (80 layers of 8192,
    8 KV heads, MLP 28672, 128256 vocabulary: 70,553,706,496 parameters, the card's 70B). TheBloke's CodeLlama-34B AWQ
    confirms the 34B's 32000-token vocabulary."""
    awq = resolve_model("lambda/Llama-3.3-70B-Instruct-AWQ-4bit")
    assert awq.quant is not None and (awq.quant.method, awq.quant.bits, awq.quant.group_size) == ("awq", 4, 128)
    h, layers, kv, ffn, vocab = 8192, 80, 8 * 128, 28672, 128256
    per_layer = 2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h
    assert awq.params is not None and awq.params.total == layers * per_layer + 2 * vocab * h + h == 70_553_706_496
    assert awq.params == resolve_model("meta-llama/Llama-3.3-70B-Instruct").params
    code = resolve_model("TheBloke/CodeLlama-34B-AWQ")
    assert code.vocab_size == resolve_model("codellama/CodeLlama-34b-hf").vocab_size == 32000
    assert resolve_model("TheBloke/CodeLlama-7B-AWQ").vocab_size == 32016
    chat = resolve_model("TheBloke/Llama-2-13B-chat-AWQ")
    assert chat.params == resolve_model("meta-llama/Llama-2-13b-chat-hf").params


def test_catalog_round_6_group_b_autofp8_llama3() -> None:
    """neuralmagic's AutoFP8 Meta-Llama-3 builds (June 2024, per-tensor static scales, lm_head kept): by hand for the 8B,
    32 layers of FP8 linears (q, o 4096^2; k, v 4096 x 1024; MLP 3 x 4096 x 14336) at one byte, embeddings and lm_head
    (2 x 128256 x 4096), the norms and the rotary cos/sin cache (8192 positions x 128) at two, per-tensor scales a few
    bytes per layer."""
    from recommender.memory.weights import Parallel, weight_bytes_per_gpu

    fp8 = resolve_model("neuralmagic/Meta-Llama-3-8B-Instruct-FP8")  # now RedHatAI/, read through the rename
    assert fp8.quant is not None and fp8.quant.method == "fp8" and fp8.quant.static_input_scales
    h, kv, ffn, vocab = 4096, 1024, 14336, 128256
    linear = 32 * (2 * h * h + 2 * h * kv + 3 * h * ffn)
    sixteen_bit = 2 * (2 * vocab * h + (2 * 32 + 1) * h)
    weights = weight_bytes_per_gpu(fp8, Parallel(), dtype_bytes=2, quant=fp8.quant)
    rotary = 8192 * 128 * 2
    assert 0 <= weights - (linear + sixteen_bit + rotary) < 32 * 64
    assert (
        resolve_model("RedHatAI/Meta-Llama-3-70B-Instruct-FP8").params
        == resolve_model("meta-llama/Meta-Llama-3-70B-Instruct").params
    )


def test_catalog_round_6_group_b_llama_3_2_fp8() -> None:
    """Neural Magic's FP8 Llama-3.2 builds (llm-compressor's FP8 scheme): per-tensor FP8 weights over the bundled
    Instruct layouts, read through the neuralmagic/ -> RedHatAI/ rename."""
    for size in ("1B", "3B"):
        fp8 = resolve_model(f"neuralmagic/Llama-3.2-{size}-Instruct-FP8")
        assert fp8.quant is not None and (fp8.quant.method, fp8.quant.group_size) == ("fp8", 0)  # per tensor
        assert fp8.params == resolve_model(f"meta-llama/Llama-3.2-{size}-Instruct").params


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


def test_solar_10_7b_instruct_by_hand() -> None:
    """SOLAR-10.7B (depth-up-scaled Mistral widths): 48 layers of 4096 (q, o 4096^2; k, v 4096 x 1024; gated MLP 3 x
    4096 x 14336; two RMSNorms), embedding and untied head 32000 x 4096, final norm: 10,731,524,096 parameters, the
    name's 10.7B. The publisher's page prints 686 bytes."""
    h, layers, kv, ffn, vocab = 4096, 48, 1024, 14336, 32000
    total = layers * (2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h) + 2 * vocab * h + h
    assert total == 10_731_524_096
    spec = resolve_model("upstage/SOLAR-10.7B-Instruct-v1.0")
    assert spec.params is not None and spec.params.total == total and spec.dtype == "float16"
    assert page_bytes("upstage/SOLAR-10.7B-Instruct-v1.0") == 686


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
    assert page_bytes("lmsys/vicuna-13b-v1.3") == 567
    entry = load_model("lmsys/vicuna-13b-v1.5")
    assert entry is not None and len(json.dumps(entry.config, indent=4)) == 689
    code = resolve_model("codellama/CodeLlama-7b-Instruct-hf")
    assert code.params == resolve_model("codellama/CodeLlama-7b-hf").params and code.vocab_size == 32016
    assert page_bytes("codellama/CodeLlama-7b-Instruct-hf") == 646


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


def test_unsloth_llama_3_1_8b_bnb_4bit() -> None:
    """unsloth's NF4 Llama-3.1-8B-Instruct (a fine-tune's copy of its config): bitsandbytes 4-bit, double quantization,
    nothing skipped, over Meta's layout."""
    spec = resolve_model("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit")
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits) == ("bitsandbytes", 4)
    assert spec.quant.double_quant and spec.quant.keep_unquantized == ()
    assert spec.params == resolve_model("meta-llama/Llama-3.1-8B-Instruct").params


def test_thebloke_llama_2_7b_chat_awq_rebuilt() -> None:
    """TheBloke's Llama-2-7B-Chat AWQ (vLLM's documented AWQ example): Meta's chat layout with TheBloke's AWQ block,
    4-bit GEMM in groups of 128 with zero points; marked reconstructed; the id resolves as the docs spell it."""
    spec = resolve_model("TheBloke/Llama-2-7b-Chat-AWQ")
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 128)
    assert spec.quant.has_zero_points and spec.params == resolve_model("meta-llama/Llama-2-7b-chat-hf").params
    entry = load_model("TheBloke/Llama-2-7B-Chat-AWQ")
    assert entry is not None and entry.reconstructed


def test_nvidia_llama_3_3_70b_fp8_is_modelopt_fp8_of_llama_3_3() -> None:
    """nvidia/Llama-3.3-70B-Instruct-FP8 (reconstructed, and said so): Llama-3.3-70B-Instruct's 70,553,706,496
    parameters under ModelOpt FP8 with lm_head kept in 16 bits and an FP8 KV cache, so 80 x 8 x 128 x 2 bytes of
    KV a token under --kv-cache-dtype auto."""
    fp8, base = resolve_model("nvidia/Llama-3.3-70B-Instruct-FP8"), resolve_model("meta-llama/Llama-3.3-70B-Instruct")
    assert fp8.params is not None and fp8.params == base.params and fp8.params.total == 70_553_706_496
    assert fp8.quant is not None and fp8.quant.kv_cache_fp8 and not fp8.quant.lm_head_quantized
    assert any(reason.startswith("config.json reconstructed: ") for reason in fp8.approximate)
    e = explain(fp8, H100, EngineFlags(max_model_len=8192, tensor_parallel_size=2), V033)
    assert e.kv_cache_dtype.startswith("fp8") and e.quantization != "none"


def test_llama_guard_3_8b_is_llama_3_1_8b_instruct() -> None:
    """Llama Guard 3 8B: every key the GPTQ re-save shows equals Llama-3.1-8B-Instruct's, the rest is taken from it
    (reconstructed, and said so): 8,030,261,248 parameters, Meta's published Llama 3.1 8B figure."""
    guard, base = load_model("meta-llama/Llama-Guard-3-8B"), load_model("meta-llama/Llama-3.1-8B-Instruct")
    assert guard is not None and base is not None
    shown = (
        "hidden_size",
        "intermediate_size",
        "max_position_embeddings",
        "num_attention_heads",
        "num_hidden_layers",
        "num_key_value_heads",
        "eos_token_id",
        "mlp_bias",
        "attention_bias",
    )
    assert all(guard.config[k] == base.config[k] for k in shown)
    spec = resolve_model("meta-llama/Llama-Guard-3-8B")
    assert spec.params is not None and spec.params.total == 8_030_261_248
    assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


def test_unsloth_llama_3_1_8b_bnb_4bit_is_the_base_model_in_nf4() -> None:
    """unsloth/Meta-Llama-3.1-8B-bnb-4bit (reconstructed): the base model's 32 layers of 4096 (q/o 4096^2, k/v
    4096 x 1024, gated MLP 3 x 4096 x 14336, two RMSNorms), untied 128,256-row embedding and head, final norm:
    8,030,261,248 parameters (Meta's card), in bitsandbytes NF4."""
    h, vocab = 4096, 128256
    total = 32 * (2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h) + 2 * vocab * h + h
    assert total == 8_030_261_248
    spec = resolve_model("unsloth/Meta-Llama-3.1-8B-bnb-4bit")
    assert spec.params is not None and spec.params.total == total
    assert spec.params == resolve_model("meta-llama/Meta-Llama-3.1-8B").params
    assert spec.quant is not None and spec.quant.method == "bitsandbytes" and spec.quant.bits == 4
    assert spec.max_model_len == 131072 and reconstructed("unsloth/Meta-Llama-3.1-8B-bnb-4bit")


def test_huggyllama_llama_7b_by_hand() -> None:
    """huggyllama/llama-7b (reconstructed from full fine-tunes' copies of its config): LLaMA 7B, 32 layers of 4096
    with 32 heads (q/k/v/o 4096^2), a gated MLP of 3 x 4096 x 11008, two RMSNorms, an untied 32,000-row embedding
    and head, final norm: 6,738,415,616 parameters (Meta's 6.7B), 2,048 positions."""
    h = 4096
    total = 32 * (4 * h * h + 3 * h * 11008 + 2 * h) + 2 * 32000 * h + h
    assert total == 6_738_415_616
    spec = resolve_model("huggyllama/llama-7b")
    assert spec.params is not None and spec.params.total == total
    assert (spec.num_kv_heads, spec.max_model_len) == (32, 2048) and reconstructed("huggyllama/llama-7b")


def test_longchat_13b_16k_by_hand() -> None:
    """longchat-13b-16k (the publisher's config.json): LLaMA 13B, 40 layers of 5120 with 40 heads (q/k/v/o
    5120^2), a gated MLP of 3 x 5120 x 13824, two RMSNorms, an untied 32,000-row embedding and head, final norm:
    13,015,864,320 parameters; its 2,048 positions with linear rope scaling of 8 give vLLM's 16,384-token context."""
    h = 5120
    total = 40 * (4 * h * h + 3 * h * 13824 + 2 * h) + 2 * 32000 * h + h
    assert total == 13_015_864_320
    spec = resolve_model("lmsys/longchat-13b-16k")
    assert spec.params is not None and spec.params.total == total
    assert spec.max_model_len == 2048 * 8 and spec.approximate == ()
