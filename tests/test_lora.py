"""The --enable-lora slots (memory/lora.py): shapes from vllm/lora/layers/*.py create_lora_weights, bytes by hand."""

from __future__ import annotations

import pytest

from benchmarks import fidelity
from recommender.catalog import load_gpus
from recommender.errors import FlagError
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.lora import lora_slot_bytes
from recommender.memory.startup_issues import IssueKind
from recommender.memory.weights import Parallel
from recommender.serve_args import parse_serve_argv
from recommender.sources.resolve import resolve_model

QWEN05 = resolve_model("Qwen/Qwen2.5-0.5B-Instruct")  # hidden 896, 14 heads / 2 KV of 64, MLP 4864, 24 layers
QWEN3_MOE = resolve_model("Qwen/Qwen3-30B-A3B")  # hidden 2048, 32 heads / 4 KV of 128, 128 experts of 768, 48 layers
V = VllmVersion(0, 25, 0)
LORA = EngineFlags(enable_lora=True)  # vLLM's defaults: one slot of rank 16


def test_no_lora_no_slots() -> None:
    assert lora_slot_bytes(QWEN05, Parallel(), EngineFlags(max_lora_rank=64), V, dtype_bytes=2) == 0


def test_dense_slots_by_hand_tp1_and_tp2() -> None:
    # TP 1, per layer, in units of rank: A (rank x input) per slice: q, k, v 3 x 896 (MergedQKV: one A per
    # projection), o_proj 896, gate/up 2 x 896, down 4864 = 10,240; B (output x rank): q 896 + k 128 + v 128 +
    # o 896 + gate_up 9,728 + down 896 = 12,672. 16 x 22,912 x 24 layers x 2 B = 17,596,416 bytes.
    assert lora_slot_bytes(QWEN05, Parallel(), LORA, V, dtype_bytes=2) == 17_596_416
    # TP 2: column layers keep the whole input, shard the output; row layers the reverse. A: 2,688 + o 448 + 1,792
    # + down 2,432 = 7,360; B: q 448 + k 64 + v 64 (one KV head each) + o 896 + gate_up 4,864 + down 896 = 7,232.
    # 16 x 14,592 x 24 x 2 = 11,206,656; 4 slots of rank 64 are 16 times that.
    assert lora_slot_bytes(QWEN05, Parallel(tp=2), LORA, V, dtype_bytes=2) == 11_206_656
    big = EngineFlags(enable_lora=True, max_loras=4, max_lora_rank=64)
    assert lora_slot_bytes(QWEN05, Parallel(tp=2), big, V, dtype_bytes=2) == 16 * 11_206_656


def test_moe_experts_wrapped_from_0_11_1() -> None:
    # attention per layer: A q, k, v 3 x 2,048 + o 4,096 = 10,240; B 4,096 + 512 + 512 + 2,048 = 7,168 -> 17,408.
    # experts (FusedMoEWithLoRA): w13 A 2 x 2,048 + B 1,536, w2 A 768 + B 2,048 = 8,448 each, x 128 = 1,081,344.
    attention = 16 * 17_408 * 48 * 2
    experts = 16 * 1_081_344 * 48 * 2
    assert lora_slot_bytes(QWEN3_MOE, Parallel(), LORA, V, dtype_bytes=2) == attention + experts
    # before vllm#21229 FusedMoE had no LoRA wrapper: the attention alone
    assert lora_slot_bytes(QWEN3_MOE, Parallel(), LORA, VllmVersion(0, 10, 2), dtype_bytes=2) == attention


def test_serve_flags_and_validation() -> None:
    flags = parse_serve_argv(["vllm", "serve", "m", "--enable-lora", "--max-loras", "4", "--max-lora-rank", "64"])
    engine = flags.engine_flags()
    assert (engine.enable_lora, engine.max_loras, engine.max_lora_rank) == (True, 4, 64)
    with pytest.raises(FlagError):
        EngineFlags(enable_lora=True, max_loras=0).validate()


def test_records_carry_lora() -> None:
    flags = "--enable-lora --max-lora-rank 16 --max-loras 4 --max-cpu-loras 8"
    assert fidelity.record_lora({"other_flags": flags}) == {"enable_lora": True, "max_lora_rank": 16, "max_loras": 4}
    assert fidelity.record_lora({"other_flags": "'enable_lora': True, 'max_lora_rank': 64}"})["max_lora_rank"] == 64
    assert fidelity.record_lora({"other_flags": "api_key=None, lora_modules=None, prompt_adapters=None"}) == {}


def test_explain_counts_the_slots_in_the_weights_and_says_so() -> None:
    gpu = resolve_gpu("h100", load_gpus())
    plain = explain(QWEN05, gpu, EngineFlags(), V)
    lora = explain(QWEN05, gpu, LORA, V)
    assert lora.stages[0].weights - plain.stages[0].weights == 17_596_416
    (note,) = [i for i in lora.issues if i.kind is IssueKind.LORA_SLOTS]
    assert note.needed_bytes == 17_596_416 and "rank 16" in note.message
    assert not [i for i in plain.issues if i.kind is IssueKind.LORA_SLOTS]
