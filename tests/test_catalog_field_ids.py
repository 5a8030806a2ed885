"""Catalog entries for the checkpoints field logs name that did not resolve offline (session 10, catfield)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog import find_model, load_model
from recommender.sources.resolve import resolve_model


def test_eslzzyl_qwen3_4b_instruct_2507_awq_by_hand() -> None:
    """Eslzzyl's AutoAWQ of Qwen3-4B-Instruct-2507: 36 layers of q 2560 x 4096, k/v 2560 x 1024, o 4096 x 2560, q/k
    norms of 128, a gated MLP of 9728 and two norms; a tied 151,936 x 2560 embedding: 4,022,468,096 parameters, 4-bit
    in groups of 128 with zero points (the block the readers of its config.json quote); marked reconstructed."""
    layer = 2 * 2560 * 4096 + 2 * 2560 * 1024 + 3 * 2560 * 9728 + 2 * 128 + 2 * 2560
    spec = resolve_model("Eslzzyl/Qwen3-4B-Instruct-2507-AWQ")
    assert spec.params is not None
    assert spec.params.total == 36 * layer + 151936 * 2560 + 2560 == 4_022_468_096
    assert spec.params == resolve_model("Qwen/Qwen3-4B-Instruct-2507").params
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 128)
    assert spec.quant.has_zero_points and spec.max_model_len == 262144
    entry = load_model("Eslzzyl/Qwen3-4B-Instruct-2507-AWQ")
    assert entry is not None and entry.reconstructed


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


def test_club_3090_model_directory_is_lorbus_autoround() -> None:
    """club-3090's setup downloads Lorbus's AutoRound INT4 into `qwen3.6-27b-autoround-int4`, and its logs show that
    directory as the model: the bare name and the cache path resolve to the very checkpoint (a local-dir alias)."""
    for written in ("qwen3.6-27b-autoround-int4", "~/.cache/huggingface/qwen3.6-27b-autoround-int4/"):
        match = find_model(written)
        assert match is not None and match.entry.id == "Lorbus/Qwen3.6-27B-int4-AutoRound"
        assert match.same_model and match.via is not None and "(local-dir)" in match.via
    assert find_model("qwen3.6-27b-autoround-int8") is None  # another directory name is not guessed


def test_a_local_dir_alias_with_an_organisation_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local-dir row names a directory, not a hub id: one written `org/name` stops with the file and the reason."""
    import recommender.catalog as catalog

    (tmp_path / "aliases.yaml").write_text(
        "aliases:\n  - {alias: someone/some-dir, target: Qwen/Qwen3-8B, kind: local-dir, reason: r}\n"
    )
    monkeypatch.setattr(catalog, "profiles_dir", lambda: tmp_path)
    catalog.load_aliases.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"aliases.yaml: local-dir alias 'someone/some-dir' is a directory name"):
            catalog.load_aliases()
    finally:
        monkeypatch.undo()
        catalog.load_aliases.cache_clear()


def test_cyankiwi_gemma_4_31b_awq_is_w4a16_g32_with_zero_points() -> None:
    """cyankiwi's 'AWQ' Gemma 4 31B is an llm-compressor W4A16 checkpoint (compressed-tensors, groups of 32,
    asymmetric) of Google's layout; the weights it loads on one A100 (19.90 GiB) are within 3% of the 20.90 GB the
    repository's README gives (19.46 GiB), and club-3090's directory name for it resolves to it."""
    from recommender.catalog import load_gpus
    from recommender.hardware import resolve_gpu
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


def test_quadro_rtx_6000_is_a_24_gb_turing_board() -> None:
    """nvidia-smi prints 'Quadro RTX 6000, 24576 MiB' (compute capability 7.5); the board is the TITAN RTX's TU102
    with 24 GB, so the memory model reads the same figures for both, and the RTX 6000 Ada is a different card."""
    from recommender.catalog import load_gpus
    from recommender.hardware import resolve_gpu

    cards = load_gpus()
    quadro, titan = resolve_gpu("Quadro RTX 6000", cards), resolve_gpu("NVIDIA TITAN RTX", cards)
    assert quadro.key == "quadro-rtx6000" and quadro.compute_capability == "7.5" and not quadro.fp8
    assert quadro.smi_total_mib == 24576 and quadro.total_bytes == titan.total_bytes == 24331 * 2**20
    assert resolve_gpu("NVIDIA RTX 6000 Ada Generation", cards).key == "rtx6000-ada"
