"""Catalog round 6, group B (session 7): entries and aliases checked against their sources by hand."""

from __future__ import annotations

from recommender.catalog import find_model
from recommender.sources.resolve import resolve_model


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


def test_catalog_round_6_group_b_exaone_3_5_32b_by_hand() -> None:
    """EXAONE-3.5-32B-Instruct (its num_layers read as EXAONE 3.x names it): 64 layers of q, o 5120^2, k, v 5120 x 1024,
    MLP 3 x 5120 x 27392 and two norms, untied 102400 x 5120 embeddings and lm_head, a final norm: 32,003,200,000."""
    spec = resolve_model("LGAI-EXAONE/EXAONE-3.5-32B-Instruct")
    h, kv, ffn, vocab = 5120, 1024, 27392, 102400
    layer = 2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h
    assert spec.num_layers == 64 and spec.params is not None
    assert spec.params.total == 64 * layer + 2 * vocab * h + h == 32_003_200_000
