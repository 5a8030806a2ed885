"""What a new user of the CLI reported (task H33): suggestions spelled as the catalog spells them, a "did you mean"
when the hub cannot be asked, vLLM's own unrecognized-arguments text, readable rendered headers, one value type for
token lengths, and what `show` reads for an MLA model."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import constants

from .conftest import invoke


def test_catalog_suggestions_are_spelled_as_the_catalog_spells_them() -> None:
    r = invoke(["show", "llama-3.1-8b"], 2)
    assert "closest in the catalog: " in r.stderr and "meta-llama/Meta-Llama-3.1-8B" in r.stderr, r.stderr
    assert "meta-llama/meta-llama" not in r.stderr
    several = invoke(["show", "Llama-3.2-1B"], 2).stderr
    assert "(meta-llama/Llama-3.2-1B, unsloth/Llama-3.2-1B)" in several, several


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """huggingface_hub offline with an empty cache: the hub cannot be asked whether a repository exists."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


@pytest.mark.usefixtures("offline_hub")
def test_a_hub_id_that_cannot_be_fetched_names_close_catalog_ids() -> None:
    r = invoke(["explain", "meta-llama/Llama-3-8B", "--gpu", "h100"], 4)
    assert "cannot fetch meta-llama/Llama-3-8B" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "; closest in the catalog: " in r.stderr and "meta-llama/Meta-Llama-3-8B" in r.stderr, r.stderr
    # the name written is part of the entry's name: that entry first, not Llama-3.2-1B (closer as a whole id)
    assert "closest in the catalog: meta-llama/Meta-Llama-3-8B, " in r.stderr, r.stderr
    far = invoke(["explain", "acme/zzzz-qqqq", "--gpu", "h100"], 4).stderr
    assert "closest in the catalog" not in far, far  # a hint only when something is close


def test_check_names_the_unknown_option_with_its_value_as_vllm_does() -> None:
    r = invoke(["check", "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--bogus-flag", "3"], 1)
    assert "unrecognized arguments: --bogus-flag 3" in r.stdout, r.stdout


def test_rendered_headers_count_gpus_and_tokens_readably() -> None:
    target = ["--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--context", "8192"]
    k8s = invoke(["recommend", *target, "--emit", "k8s", "--replicas", "2"]).stdout
    assert k8s.splitlines()[0].startswith("# Qwen/Qwen3-8B on 2 replicas x 1 GPU: "), k8s.splitlines()[0]
    script = invoke(["recommend", *target, "--emit", "command"]).stdout
    predicted = next(line for line in script.splitlines() if line.startswith("# Predicted: "))
    assert " requests of 8,192 tokens; vLLM runs at most " in predicted, predicted
    kv = predicted.split()[2]
    assert "," in kv and int(kv.replace(",", "")) > 8192, predicted


def test_perf_reads_lengths_as_recommend_does() -> None:
    load = ["--gpu", "h100", "--input-len", "2k", "--output-len", "256", "--max-concurrency", "8"]
    out = invoke(["perf", "Qwen/Qwen3-8B", *load]).stdout
    assert "load: 2,000 in / 256 out" in out, out
    binary = invoke(["perf", "Qwen/Qwen3-8B", *load[:3], "2K", *load[4:]]).stdout
    assert "load: 2,048 in / 256 out" in binary, binary


def test_show_says_what_it_reads_for_an_mla_model() -> None:
    out = invoke(["show", "deepseek-ai/DeepSeek-R1"]).stdout
    assert "read_as: Llama-style decoder + MLA + MoE" in out, out
    assert "head_dim: 56" not in out and "kv_heads:" not in out
    # DeepSeek-R1's config: kv_lora_rank 512 + qk_rope_head_dim 64 = 576 cached a token and layer; 128 + 64 = 192
    assert "kv_cache_dim=576" in out and "qk_head_dim=192" in out and "qk_rope_head_dim=64" in out, out
    dense = invoke(["show", "Qwen/Qwen3-8B"]).stdout
    assert "head_dim: 128" in dense and "read_as: Qwen3-style decoder (q/k norms)\n" in dense, dense
