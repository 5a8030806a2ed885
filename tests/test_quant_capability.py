"""vLLM refuses a quantization method below its minimum compute capability (config/vllm.py _get_quantization_config)
and compressed-tensors refuses a layer scheme (_check_scheme_supported); the floors per release are read from the
release tags (recommender/memory/quant_capability.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.quant_capability import capability_refusal, vllm_method
from recommender.model.quant import online_quant, parse_quant
from recommender.sources.resolve import resolve_model

from .conftest import invoke

AWQ_7B = "Qwen/Qwen2.5-7B-Instruct-AWQ"


def _explain(*args: str) -> str:
    return invoke(["explain", *args]).stdout


@pytest.mark.parametrize(
    ("args", "error"),
    [
        # AWQ on a V100: the classic refusal (7.0 < 7.5), in every release that still runs on Volta
        (
            [AWQ_7B, "--gpu", "v100", "--vllm-version", "0.6.3"],
            "The quantization method awq is not supported for the current GPU. Minimum capability: 75. "
            "Current capability: 70.",
        ),
        # gpt-oss's MXFP4 experts on a T4 (mxfp4.py: 80)
        (
            ["openai/gpt-oss-20b", "--gpu", "t4", "--vllm-version", "0.10.2"],
            "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80. "
            "Current capability: 75.",
        ),
        # FP8 on a T4 before Marlin ran on Turing (fp8.py: 80 at v0.5.1-v0.13.0), online or from a checkpoint
        (
            ["Qwen/Qwen3-8B", "--gpu", "t4", "--quantization", "fp8", "--vllm-version", "0.9.2"],
            "The quantization method fp8 is not supported for the current GPU. Minimum capability: 80.",
        ),
        # ModelOpt FP8 on an A100 before vllm#50019: its own reproduction's error on 0.26.0
        (
            ["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8", "--gpu", "a100", "--vllm-version", "0.26.0"],
            "The quantization method modelopt is not supported for the current GPU. Minimum capability: 89. "
            "Current capability: 80.",
        ),
        # compressed-tensors W4A16 on a T4 before v0.12.0 (wNa16: 80)
        (
            ["RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "--gpu", "t4", "--vllm-version", "0.10.2"],
            "Quantization scheme is not supported for the current GPU. Min capability: 80. Current capability: 75.",
        ),
    ],
)
def test_a_method_below_its_capability_fails_with_vllms_words(args: list[str], error: str) -> None:
    out = _explain(*args, "--max-model-len", "4096")
    assert "Verdict: vLLM FAILS at startup" in out and error in out


@pytest.mark.parametrize(
    "args",
    [
        [AWQ_7B, "--gpu", "t4", "--vllm-version", "0.6.3"],  # AWQ's floor is 7.5
        ["Qwen/Qwen3-8B", "--gpu", "t4", "--quantization", "fp8", "--vllm-version", "0.14.0"],  # Marlin on Turing
        ["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8", "--gpu", "a100", "--vllm-version", "0.33.0"],
        ["RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16", "--gpu", "a10", "--vllm-version", "0.10.2"],
    ],
)
def test_a_method_at_or_above_its_capability_is_not_refused(args: list[str]) -> None:
    out = json.loads(_explain(*args, "--max-model-len", "4096", "--format", "json"))
    assert "quantization-below-capability" not in out["error_kinds"]
    assert not any("is not supported for the current GPU" in e for e in out["errors"])


def test_the_floor_follows_the_release() -> None:
    fp8 = online_quant("fp8")
    gpu = resolve_gpu("t4", load_gpus())
    found = {v: capability_refusal(fp8, gpu, VllmVersion.parse(v)) for v in ("0.5.0", "0.6.0", "0.14.0")}
    assert found["0.5.0"] is not None and found["0.5.0"].count == 89  # before FP8 Marlin (vllm#5975)
    assert found["0.6.0"] is not None and found["0.6.0"].count == 80
    assert found["0.14.0"] is None


def test_the_method_is_named_as_vllm_names_it() -> None:
    assert vllm_method(online_quant("experts_int8")) == "experts_int8"
    modelopt_fp4 = parse_quant(None, {"quantization": {"quant_algo": "NVFP4", "group_size": 16}})
    assert modelopt_fp4 is not None and vllm_method(modelopt_fp4) == "modelopt_fp4"
    awq = parse_quant({"quant_method": "awq", "bits": 4, "group_size": 128})
    assert awq is not None and vllm_method(awq) == "awq" and awq.checkpoint_format == "awq"


TINY_MOE = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "hidden_size": 256,
    "intermediate_size": 512,
    "moe_intermediate_size": 128,
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "num_hidden_layers": 2,
    "vocab_size": 1024,
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def test_experts_int8_stores_the_experts_in_int8_with_a_float32_scale_per_row(tmp_path: Path) -> None:
    """ExpertsInt8Config: w13 [E, 2I, H] and w2 [E, H, I] int8, w13_scale [E, 2I] and w2_scale [E, H] float32;
    attention, router, embeddings and LM head stay bf16. By hand for 2 layers of 8 experts, H 256, I 128:
    bf16 experts 2 x 8 x 3 x 256 x 128 x 2 = 3,145,728 bytes; int8 1,572,864 + scales 2 x 8 x (256 + 256) x 4
    = 32,768: 1,605,632 bytes, so loading experts_int8 saves 1,540,096 bytes."""
    (tmp_path / "config.json").write_text(json.dumps(TINY_MOE))
    spec = resolve_model(str(tmp_path))
    gpu, v = resolve_gpu("a100", load_gpus()), VllmVersion.parse("0.33")
    plain = explain(spec, gpu, EngineFlags(max_model_len=128), v)
    int8 = explain(spec, gpu, EngineFlags(max_model_len=128, quantization="experts_int8"), v)
    assert plain.stage.weights - int8.stage.weights == 3_145_728 - 1_605_632
