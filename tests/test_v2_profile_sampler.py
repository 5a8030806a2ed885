"""Model Runner V2's profiled sampler (memory/model_runner.py, overheads.sampler_bytes_per_logit), by hand."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory import model_runner, overheads
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model


def test_which_runner_runs_the_model() -> None:
    """config/vllm.py of the 0.28.0 wheel: V2 for a dense generating model from 0.25 (#44443), for an MoE one only if
    its architecture is listed (Qwen2MoeForCausalLM is, Qwen3MoeForCausalLM is not) until 0.29 makes it every
    generating model's; an n-gram drafter or the pooling runner keeps V1."""
    dense = resolve_model("Qwen/Qwen2.5-0.5B")
    moe = resolve_model("Qwen/Qwen3-30B-A3B")
    plain = EngineFlags()
    v = VllmVersion.parse
    assert not model_runner.runs_v2(dense, plain, v("0.24.0")) and model_runner.runs_v2(dense, plain, v("0.25.0"))
    assert moe.is_moe and moe.architecture == "Qwen3MoeForCausalLM"
    assert not model_runner.runs_v2(moe, plain, v("0.28.0")) and model_runner.runs_v2(moe, plain, v("0.29.0"))
    ngram = EngineFlags(speculative_config='{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}')
    assert not model_runner.runs_v2(dense, ngram, v("0.30.0"))
    assert not model_runner.runs_v2(dense, EngineFlags(runner="pooling"), v("0.30.0"))


def test_the_logits_only_profile_needs_no_compile_in_the_window() -> None:
    """field14 U017's launch (Qwen2.5-0.5B, RTX 4090, vLLM 0.27.1, 8,192 batched tokens, 256 requests x 151,936
    logits = 38,895,616 logits). Eager (or -O0: no torch.compile, config/vllm.py "Enforce eager set, disabling
    torch.compile and CUDAGraphs") the profile holds V2's model-dtype logits: 8,192 x 47,000 + 2 x 38,895,616 =
    385,024,000 + 77,791,232 = 462,815,232 B (0.43 GiB). Compiled, the first forward compiles inside the profiling
    window and the compiled 0.26-0.30 logs hold the fitted figure or more (KV-ERRORS.md 'smallpeak'): 385,024,000 +
    13.5 x 38,895,616 = 910,114,816 B. The dense MLP's side, 8,192 x (6 x 4,864 + 4 x 896) = 268,435,456 B, is
    below both. V1's runner (an MoE model at 0.27) keeps the fit whatever the mode."""
    card = resolve_gpu("rtx4090", load_gpus())
    model = resolve_model("Qwen/Qwen2.5-0.5B")
    assert (model.vocab_size, model.intermediate_size, model.hidden_size) == (151_936, 4_864, 896)
    assert overheads.v1_forward_bytes(model, 8192, 1) == 268_435_456
    release = VllmVersion.parse("0.27.1")

    def peak(**flags: object) -> int:
        base = EngineFlags(max_num_batched_tokens=8192, max_num_seqs=256, max_model_len=4096, **flags)  # type: ignore[arg-type]
        return explain(model, card, base, release).stages[-1].activation_peak

    assert peak(enforce_eager=True) == peak(optimization_level="0") == 462_815_232
    assert peak() == 910_114_816
    per_logit = overheads.sampler_bytes_per_logit((0, 27), v2_runner=False)
    assert per_logit == overheads.SAMPLER_BYTES_PER_LOGIT == 13.5
    assert overheads.sampler_bytes_per_logit((0, 27), v2_runner=True, logits_bytes=4) == 4
