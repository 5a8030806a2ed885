"""Catalog entries round 18 needed (benchmarks/data/calibration/FIELD18-FINDINGS.md): neuralmagic's
Mistral-7B-Instruct-v0.3-FP8 (its config.json: AutoFP8, per-tensor FP8 with static activation scales, lm_head in bf16)
and Qwen/Qwen2.5-VL-32B-Instruct (reconstructed: the family's 7B config with the 32B sizes quoted from its config.json)."""

from __future__ import annotations

from benchmarks.fidelity import FIELD18, compare, load_records
from recommender.sources.resolve import resolve_model

COMPARED = {c.record["id"]: c for c in (compare(r) for r in load_records(*FIELD18)) if c is not None}


def test_mistral_7b_v0_3_fp8_is_autofp8_per_tensor() -> None:
    spec = resolve_model("neuralmagic/Mistral-7B-Instruct-v0.3-FP8")
    assert spec.quant is not None and spec.quant.method == "fp8"
    assert (spec.num_layers, spec.hidden_size, spec.vocab_size) == (32, 4096, 32768)
    base = resolve_model("mistralai/Mistral-7B-Instruct-v0.3")
    assert spec.num_kv_heads == base.num_kv_heads and spec.intermediate_size == base.intermediate_size


def test_mistral_fp8_weights_on_the_rtx_4070_super() -> None:
    """Z021 (vLLM 0.15.1, 0.85, 19,000 tokens): 'Model loading took 7.01 GiB'; KV 2.41 GiB logged."""
    c = COMPARED["Z021"]
    assert abs(c.weights_gib / 7.01 - 1) < 0.01
    assert abs(c.kv_gib / 2.41 - 1) < 0.06


def test_qwen2_5_vl_32b_sizes_and_gb10_weights() -> None:
    spec = resolve_model("Qwen/Qwen2.5-VL-32B-Instruct")
    assert (spec.num_layers, spec.hidden_size, spec.num_kv_heads, spec.vocab_size) == (64, 5120, 8, 152064)
    assert spec.approximate  # reconstructed, and says so
    c = COMPARED["Z013"]  # GB10, vLLM 0.24.0, bf16: the note's '모델 로딩 GPU 메모리: 62.44 GiB'
    assert abs(c.weights_gib / 62.44 - 1) < 0.01
