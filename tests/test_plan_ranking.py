"""Ties in the planner's ranking: where the weights come from, what an `auto` KV cache stores, and the
throughput resolution of latency plans (hand-made cases, pure functions)."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.planner.service import THROUGHPUT_RESOLUTION, throughput_step
from recommender.planner.space import provenance_of, weight_options
from recommender.planner.types import Candidate
from recommender.sources.resolve import resolve_model

H100 = resolve_gpu("h100", load_gpus())


def test_provenance_orders_own_checkpoints_before_others_and_online_quantization() -> None:
    base = resolve_model("Qwen/Qwen3-32B")
    own, other = resolve_model("Qwen/Qwen3-32B-FP8"), resolve_model("nvidia/Qwen3-32B-NVFP4")
    assert provenance_of(base, base, None) == 0
    assert provenance_of(base, own, None) == 0  # Qwen's FP8 of Qwen's model
    assert provenance_of(base, other, None) == 1  # NVIDIA's checkpoint of Qwen's model
    assert provenance_of(base, base, "fp8") == 2  # `--quantization fp8` at load


def test_weight_options_carry_their_provenance() -> None:
    base = resolve_model("Qwen/Qwen3-32B")
    by_label = {(o.model.name, o.quantization_flag): o.provenance for o in weight_options(base, [], H100)}
    assert by_label == {("Qwen/Qwen3-32B", None): 0, ("Qwen/Qwen3-32B", "fp8"): 2}


def test_an_auto_kv_cache_the_checkpoint_stores_in_fp8_ranks_as_fp8() -> None:
    # nvidia/Llama-3.1-70B-Instruct-FP8 declares an FP8 KV cache (hf_quant_config kv_cache_quant_algo), so `auto`
    # stores fp8: it is no more precise than `--kv-cache-dtype fp8` on another checkpoint.
    modelopt = resolve_model("nvidia/Llama-3.1-70B-Instruct-FP8")
    (w,) = [o for o in weight_options(modelopt, [], H100) if o.quantization_flag is None]
    auto, fp8 = Candidate(w, "auto", 4, 1), Candidate(w, "fp8", 4, 1)
    assert auto.kv_label == "auto (fp8)" and auto.precision_rank == fp8.precision_rank == 3
    bf16 = resolve_model("meta-llama/Llama-3.1-70B-Instruct")
    (b,) = [o for o in weight_options(bf16, [], H100) if o.quantization_flag is None]
    assert Candidate(b, "auto", 4, 1).precision_rank == 0 and Candidate(b, "fp8", 4, 1).precision_rank == 1


def test_throughputs_within_the_resolution_tie() -> None:
    assert THROUGHPUT_RESOLUTION == 1.02
    assert throughput_step(1649.2) == throughput_step(1649.4)  # the online-vs-checkpoint tie of Qwen3-32B
    assert throughput_step(1000.0) < throughput_step(1000.0 * 1.05)  # 5 % more is better
    assert throughput_step(0.0) < throughput_step(1.0)  # nothing served sorts last, no math error
