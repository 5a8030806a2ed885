"""Catalog entries of Google's Gemma family (Gemma 2, 3, 4, MedGemma) and their re-uploads and quantized builds.
Entries and aliases are checked against their sources by hand; each test's docstring names them (and the field set
or issue that brought the model in)."""

from __future__ import annotations

from recommender.catalog import find_model, load_model
from recommender.sources.resolve import resolve_model

from .catalog_support import reconstructed


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


def test_medgemma_27b_text_it_by_hand() -> None:
    """MedGemma 27B text-it: Gemma 3 27B without the vision tower. 62 layers of 5376: q and o 5376 x 4096, k and v
    5376 x 2048, gated MLP 3 x 5376 x 21504, four RMSNorms and q/k norms of 128; the 262,208-row embedding tied to
    the head, final norm: 27,009,346,304 parameters; 52 sliding (window 1024) and 10 global layers."""
    h, layers, vocab = 5376, 62, 262208
    layer = 2 * h * 4096 + 2 * h * 2048 + 3 * h * 21504 + 4 * h + 2 * 128
    total = layers * layer + vocab * h + h
    assert total == 27_009_346_304
    spec = resolve_model("google/medgemma-27b-text-it")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.vision is None and spec.layer_kinds.count("sliding") == 52 and spec.sliding_window == 1024
    gemma = resolve_model("google/gemma-3-27b-it")  # the same language model beside a SigLIP tower
    assert gemma.vision is not None and gemma.params is not None
    assert (gemma.params.attention, gemma.params.mlp, gemma.params.embedding) == (
        spec.params.attention,
        spec.params.mlp,
        spec.params.embedding,
    )


def test_gaunernst_gemma_3_27b_int4_awq_groups_of_32() -> None:
    """gau-nernst's AWQ export of the INT4 QAT Gemma 3 27B keeps Google's layout (the bundled gemma-3-27b-it count)
    and packs the language model in groups of 32 (the QAT block size) with a stored zero point; the bare directory
    name a local copy goes by resolves to it."""
    spec = resolve_model("gaunernst/gemma-3-27b-it-int4-awq")
    assert spec.params is not None and spec.params == resolve_model("google/gemma-3-27b-it").params
    text = 1_409_630_208 + 4_095_737_856 + 21_502_623_744 + 1_354_496  # embedding, attention, MLP, norms
    assert 262208 * 5376 == 1_409_630_208 and 62 * (2 * 5376 * 4096 + 2 * 5376 * 2048) == 4_095_737_856
    assert 62 * 3 * 5376 * 21504 == 21_502_623_744 and spec.params.total > text
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 32)
    assert spec.quant.has_zero_points
    match = find_model("gemma-3-27b-it-int4-awq")
    assert match is not None and match.entry.id == "gaunernst/gemma-3-27b-it-int4-awq"
    entry = load_model("gaunernst/gemma-3-27b-it-int4-awq")
    assert entry is not None and entry.reconstructed


def test_cyankiwi_gemma_4_31b_awq_is_w4a16_g32_with_zero_points() -> None:
    """cyankiwi's 'AWQ' Gemma 4 31B is an llm-compressor W4A16 checkpoint (compressed-tensors, groups of 32,
    asymmetric) of Google's layout; the weights it loads on one A100 (19.90 GiB) are within 3% of the 20.90 GB the
    repository's README gives (19.46 GiB), and club-3090's directory name for it resolves to it."""
    from recommender.catalog import load_gpus
    from recommender.gpu_names import resolve_gpu
    from recommender.memory.budget import explain
    from recommender.memory.engine import EngineFlags, VllmVersion

    spec = resolve_model("cyankiwi/gemma-4-31B-it-AWQ-4bit")
    assert spec.params is not None and spec.params == resolve_model("google/gemma-4-31B-it").params
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("gptq", 4, 32)
    assert spec.quant.has_zero_points and spec.quant.keep_unquantized == ("lm_head",)
    card = resolve_gpu("a100-80gb", load_gpus())
    weights = explain(spec, card, EngineFlags(max_model_len=8192), VllmVersion.parse("0.21.0")).stage.weights
    assert abs(weights / 20.90e9 - 1) < 0.03
    match = find_model("gemma-4-31b-it-AWQ-4bit")
    assert match is not None and match.entry.id == "cyankiwi/gemma-4-31B-it-AWQ-4bit"
    entry = load_model("cyankiwi/gemma-4-31B-it-AWQ-4bit")
    assert entry is not None and entry.reconstructed


def test_gemma_3_27b_qat_unquantized_is_gemma_3_27b_in_bfloat16() -> None:
    """google/gemma-3-27b-it-qat-q4_0-unquantized (reconstructed): the QAT-trained Gemma 3 27B stored in 16 bits,
    gemma-3-27b-it's architecture and parameter count, no quantization block (vLLM loads it as bfloat16)."""
    qat, it = resolve_model("google/gemma-3-27b-it-qat-q4_0-unquantized"), resolve_model("google/gemma-3-27b-it")
    assert qat.params is not None and qat.params == it.params and qat.vision == it.vision
    assert qat.quant is None and qat.dtype == "bfloat16" and qat.max_model_len == it.max_model_len == 131072
    assert reconstructed("google/gemma-3-27b-it-qat-q4_0-unquantized")
