"""Release-dependent engine behaviour the field logs (vLLM 0.6 to 0.29) exercise: which engine runs, the scheduler
defaults each release picked, and the fused-MoE workspace. Expected values are read from vLLM's source and pull
requests (cited in recommender/memory/engine.py and overheads.py), not from our own output."""

from __future__ import annotations

import pytest

from recommender.catalog import find_model, load_gpus
from recommender.memory.engine import EngineFlags, VllmVersion, batch_defaults, runs_v0_engine
from recommender.memory.overheads import moe_workspace_bytes
from recommender.memory.scheduler import scheduler_limits, v0_batched_tokens
from recommender.memory.startup_issues import StartupIssue
from recommender.sources.resolve import resolve_model

GPUS = {g.key: g for g in load_gpus()}


@pytest.mark.parametrize(
    ("key", "version", "expected"),
    [
        ("h100-sxm", "0.7.3", (256, 2048)),  # V0's defaults
        ("h100-sxm", "0.8.2", (1024, 8192)),  # V1 default: H100/H200 by name (#12369), 1024 sequences everywhere
        ("l40s", "0.8.2", (1024, 2048)),
        ("h800", "0.8.2", (1024, 2048)),  # the name check is "h100" / "h200"
        ("l40s", "0.8.4", (256, 2048)),  # #16158: 256 sequences except H100/H200
        ("h100-sxm", "0.8.4", (1024, 8192)),
        ("a100-80gb", "0.8.5", (1024, 8192)),  # #17073: by memory, >= 70 GiB
        ("a100-80gb", "0.9.0", (256, 2048)),  # #17885: the A100 stays small
        ("h800", "0.9.2", (1024, 8192)),
        ("b200", "0.9.2", (1024, 8192)),
        ("b200", "0.27.0", (1024, 8192)),  # the 0.27.0 wheel's get_batch_defaults tops out at >= 70 GiB
        ("mi300x", "0.27.0", (1024, 8192)),
        ("mi300x", "0.28.0", (1024, 16384)),  # the >= 160 GiB tier (PR #51726, field4 J027) from 0.28.0
        ("b200", "0.33.0", (1024, 16384)),
    ],
)
def test_batch_defaults_by_release(key: str, version: str, expected: tuple[int, int]) -> None:
    assert batch_defaults(GPUS[key], VllmVersion.parse(version)) == expected


def test_the_offline_llm_class_batches_more_tokens() -> None:
    """get_batch_defaults' LLM_CLASS column: 8,192 where the API server gets 2,048, 16,384 where it gets 8,192; the
    same sequences; V0 (before 0.8) and the >= 160 GiB tier keep the API server's figures."""
    v = VllmVersion.parse
    assert batch_defaults(GPUS["rtx5090"], v("0.20.0"), llm_class=True) == (256, 8192)
    assert batch_defaults(GPUS["h100-sxm"], v("0.20.0"), llm_class=True) == (1024, 16384)
    assert batch_defaults(GPUS["h100-sxm"], v("0.7.3"), llm_class=True) == (256, 2048)
    assert batch_defaults(GPUS["b200"], v("0.33.0"), llm_class=True) == (1024, 16384)


def test_which_engine_runs() -> None:
    v = VllmVersion.parse
    t4, a100 = GPUS["t4"], GPUS["a100-80gb"]
    assert runs_v0_engine(v("0.7.3"), a100, "LlamaForCausalLM")
    assert not runs_v0_engine(v("0.8.2"), a100, "LlamaForCausalLM")
    # V1's oracle fell back to V0 below compute capability 8.0 and for encoder-decoder models until 0.10.
    assert runs_v0_engine(v("0.8.2"), t4, "Gemma3ForConditionalGeneration")
    assert runs_v0_engine(v("0.9.2"), a100, "MllamaForConditionalGeneration")
    assert not runs_v0_engine(v("0.10.0"), t4, "LlamaForCausalLM")
    # VLLM_USE_V1: 0 chose V0 until 0.11 removed it, 1 opted into V1 from 0.7.
    assert runs_v0_engine(v("0.10.1"), a100, "LlamaForCausalLM", use_v1=False)
    assert not runs_v0_engine(v("0.11.0"), a100, "LlamaForCausalLM", use_v1=False)
    assert not runs_v0_engine(v("0.7.3"), a100, "LlamaForCausalLM", use_v1=True)


def test_v0_profile_tokens() -> None:
    # SchedulerConfig (V0): max(max_model_len, 2048) in one step without chunked prefill; chunked prefill on by
    # default above 32K for text models only (2048 tokens from 0.7, 512 before); multimodal keeps >= 5120.
    text = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    vl = resolve_model("Qwen/Qwen2.5-VL-72B-Instruct")
    flags = EngineFlags()
    assert v0_batched_tokens(text, flags, 32768, VllmVersion(0, 6, 3)) == 32768
    assert v0_batched_tokens(text, flags, 1024, VllmVersion(0, 6, 3)) == 2048
    assert v0_batched_tokens(text, flags, 65536, VllmVersion(0, 7, 3)) == 2048
    assert v0_batched_tokens(text, flags, 65536, VllmVersion(0, 6, 3)) == 512
    assert v0_batched_tokens(vl, flags, 4096, VllmVersion(0, 8, 3)) == 5120
    assert v0_batched_tokens(vl, flags, 65536, VllmVersion(0, 8, 3)) == 65536
    assert v0_batched_tokens(text, EngineFlags(max_num_batched_tokens=999), 65536, VllmVersion(0, 6, 3)) == 999


def test_moe_workspace_is_the_wider_cache() -> None:
    # fused_moe.py: cache13 holds M x top_k x max(N, K) in the activation dtype, N = 2 x I / TP (local experts).
    mixtral = resolve_model("mistralai/Mixtral-8x7B-Instruct-v0.1")  # I 14336, H 4096, top-2
    assert moe_workspace_bytes(mixtral, 8192, 2, False) == 8192 * 2 * 14336 * 2
    assert moe_workspace_bytes(mixtral, 8192, 8, False) == 8192 * 2 * 4096 * 2  # N 3584 < K 4096
    # With expert parallelism each rank holds whole experts: N is not divided by TP.
    assert moe_workspace_bytes(mixtral, 8192, 8, True) == 8192 * 2 * 28672 * 2
    assert moe_workspace_bytes(resolve_model("Qwen/Qwen2.5-7B-Instruct"), 8192, 1, False) == 0


def test_data_parallel_moe_gathers_every_rank_tokens() -> None:
    """Qwen3-Coder-480B-A35B-FP8 with `-dp 8 --enable-expert-parallel` (field5 K002/K003, vLLM 0.10.1): H 6144,
    I 2560, top-8. Each of the 8 DP ranks profiles T = 8192 tokens and the MoE layer gathers all of them (naive
    dispatch): 65,536 tokens, the fused-MoE cache chunked at 32,768: 32,768 x 8 x max(2 x 2560, 6144) x 2 B =
    3.0 GiB, plus the gathered input 65,536 x 6144 x 2 B = 0.75 GiB; 3.75 GiB against 0.75 at DP 1 (K002 then
    leaves 48.77 GiB of KV on an H20-3e where the log says 48.66)."""
    coder = resolve_model("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8")
    assert moe_workspace_bytes(coder, 8192, 1, True, dp=8, version=(0, 10)) == 32768 * 8 * 6144 * 2 + 65536 * 6144 * 2
    assert moe_workspace_bytes(coder, 8192, 1, True, dp=1, version=(0, 10)) == 8192 * 8 * 6144 * 2
    # 0.33 has no chunk size: the cache holds all 65,536 tokens
    assert moe_workspace_bytes(coder, 8192, 1, True, dp=8) == 65536 * 8 * 6144 * 2 + 65536 * 6144 * 2
    # without expert parallelism the experts are sharded over DP x TP ranks: Mixtral at DP 4, N = 2 x 14336 / 4 = 7168
    mixtral = resolve_model("mistralai/Mixtral-8x7B-Instruct-v0.1")
    assert (
        moe_workspace_bytes(mixtral, 4096, 1, False, dp=4, version=(0, 10)) == 16384 * 2 * 7168 * 2 + 16384 * 4096 * 2
    )


def test_a_bare_name_in_a_renamed_away_spelling_resolves() -> None:
    # A local directory named after the old repository id; the current spelling alone stays unresolved.
    match = find_model("Meta-Llama-3.1-70B-Instruct")
    assert match is not None and match.entry.id == "meta-llama/Llama-3.1-70B-Instruct"
    assert find_model("llama-3.1-8b") is None


def test_a_bare_name_shared_by_an_original_and_its_copies_is_the_original() -> None:
    # unsloth/Qwen2-7B-Instruct names Qwen/Qwen2-7B-Instruct as its base model: the same checkpoint either way.
    match = find_model("Qwen2-7B-Instruct")
    assert match is not None and match.entry.id == "Qwen/Qwen2-7B-Instruct"
    # unsloth/Llama-3.2-1B names no base model: the bare name stays ambiguous.
    assert find_model("Llama-3.2-1B") is None


def test_mllama_v0_profiles_the_vision_encoder_over_every_dummy_request() -> None:
    # enc_dec_model_runner.py profile_run: max_num_seqs dummy requests, each with one image of max_num_tiles (4)
    # tiles of (560 / 14)^2 + 1 = 1,601 tokens; F035 logs 36.63 GiB of activations at 128 requests.
    from recommender.memory.overheads import MLLAMA_V0_BYTES_PER_VISION_TOKEN, mllama_v0_encoder_bytes

    spec = resolve_model("meta-llama/Llama-3.2-11B-Vision")
    assert spec.vision is not None and (spec.vision.tiles, spec.vision.positions) == (4, 1601)
    assert mllama_v0_encoder_bytes(spec, 128) == 128 * 4 * 1601 * MLLAMA_V0_BYTES_PER_VISION_TOKEN
    assert mllama_v0_encoder_bytes(resolve_model("Qwen/Qwen2.5-7B-Instruct"), 128) == 0


def test_v0_forward_shards_only_the_mlp_tensors() -> None:
    """V0's eager profiling forward: 8 bytes per token and intermediate channel at TP=1 (fitted on F042), of which
    the MLP's own 6 (gate_up 2 x I values + SiluAndMul's I, 16-bit, qwen2.py Qwen2MLP) are sharded by TP. Qwen2.5-14B
    (I 13,824) at 32,768 tokens: TP=1 32,768 x 8 x 13,824 = 3,623,878,656 bytes; TP=2 32,768 x (2 x 13,824 +
    6 x 13,824 / 2) = 32,768 x 69,120 = 2,264,924,160 (the logs: 3.79 and 2.84 GiB, G023 and G022)."""
    from recommender.memory.overheads import v0_forward_bytes

    spec = resolve_model("Qwen/Qwen2.5-14B-Instruct")
    assert v0_forward_bytes(spec, 32768, 1) == 3_623_878_656
    assert v0_forward_bytes(spec, 32768, 2) == 2_264_924_160


def test_kv_cache_size_tokens_follow_the_release() -> None:
    """'GPU KV cache size: N tokens' for a hybrid (sliding-window + full attention) model: up to 0.19 vLLM printed
    num_blocks // len(groups) * block_size (vllm-project/vllm#40691 shows 290,864 tokens beside 33.04x on 0.19.0);
    from 0.20 it prints int(max_concurrency * max_model_len) (get_kv_cache_capacity; H006 on 0.20.2: 984,297 =
    30.04x * 32,768). Same blocks, two spellings of the capacity."""
    from recommender.memory.budget import explain

    model = resolve_model("google/gemma-3-4b-it")
    flags = EngineFlags(max_model_len=32768)
    old = explain(model, GPUS["h100-sxm"], flags, VllmVersion.parse("0.19.0"))
    new = explain(model, GPUS["h100-sxm"], flags, VllmVersion.parse("0.20.2"))
    groups = len(old.stage.layout.groups)
    assert groups > 1  # hybrid: the two formulas differ
    assert old.kv_cache_tokens == old.num_gpu_blocks // groups * old.stage.layout.block_size
    assert new.kv_cache_tokens == int(new.max_concurrency * 32768)
    assert new.kv_cache_tokens != new.num_gpu_blocks // groups * new.stage.layout.block_size


def test_kv_cache_size_tokens_changed_in_0_20_1() -> None:
    """The capacity line changed after 0.20.0: field4 J047 (cyankiwi/gemma-4-31B-it-AWQ-4bit on an A100 80GB at 0.9,
    vLLM 0.20.0) printed "~55k tokens" and 0.21.0 "~525k" with the same ~50 GB of KV (J048). Gemma-4-31B keeps
    six KV-cache groups (10 full-attention layers, 50 sliding-window ones in five groups), so the old
    num_blocks // 6 * block_size is a sixth of the pool's blocks, far below what the concurrency formula counts:
    the model gives 54,864 for 0.20.0 and 589,101 for 0.20.1 from the same blocks. field5 K009 (0.20.1) prints the
    concurrency figure (619,479 logged; 603,370 by concurrency, 164,800 by the old formula)."""
    from recommender.memory.budget import explain

    model = resolve_model("cyankiwi/gemma-4-31B-it-AWQ-4bit")
    flags = EngineFlags(gpu_memory_utilization=0.9)
    old = explain(model, GPUS["a100-80gb"], flags, VllmVersion.parse("0.20.0"))
    new = explain(model, GPUS["a100-80gb"], flags, VllmVersion.parse("0.20.1"))
    groups = len(old.stage.layout.groups)
    assert groups == 6
    assert old.num_gpu_blocks == new.num_gpu_blocks
    assert old.kv_cache_tokens == old.num_gpu_blocks // 6 * old.stage.layout.block_size == 54_864
    assert new.kv_cache_tokens == int(new.max_concurrency * new.max_model_len) == 589_101
    assert old.max_concurrency == new.max_concurrency


@pytest.mark.parametrize(
    ("version", "says", "not_says"),
    [
        ("0.6.4", "while capturing CUDA graphs after the KV cache", "warming up sampler"),  # V0: no sampler warm-up
        ("0.17.0", "warming up sampler with 256 dummy requests", "capturing CUDA graphs"),  # V1 _dummy_sampler_run
    ],
)
def test_the_post_kv_crash_names_what_the_release_allocates_then(version: str, says: str, not_says: str) -> None:
    """At 0.97 on an 8 GB card what is allocated after the KV cache does not fit; V0 only captured CUDA graphs then
    (worker.py _warm_up_model), V1 also warms up the sampler, and the predicted error says which. (At 0.95 the 35
    graphs of 0.6.4, 0.72 GiB, fit the 0.84 GiB left.)"""
    from recommender.memory.budget import explain
    from recommender.memory.startup_issues import IssueKind

    flags = EngineFlags(dtype="float16", gpu_memory_utilization=0.97)
    e = explain(resolve_model("microsoft/phi-1_5"), GPUS["rtx4060ti-8gb"], flags, VllmVersion.parse(version))
    issue = e.issue(IssueKind.WARMUP_OOM)
    assert issue is not None and says in issue.message and not_says not in issue.message


@pytest.mark.parametrize(
    ("version", "fails"), [("0.13.0", False), ("0.14.0", True), ("0.15.1", True), ("0.16.0", False)]
)
def test_pp_admission_checks_the_whole_models_kv_from_014_to_016(version: str, fails: bool) -> None:
    """vLLM issue 32105 (nightly of 2026-01-28, between 0.14 and 0.16): GLM-4.7-FP8 over 8 pipeline stages of
    A100 80GB at 202,752 tokens fails with "71.16 GiB KV cache is needed", the KV of all 92 layers: 92 layers x 2
    (K and V) x 8 KV heads x 128 x 2 bytes = 376,832 bytes per token x 202,752 tokens = 71.16 GiB. One stage holds
    12 layers (49,152 bytes per token: 9.28 GiB for that length), which fits the ~28.6 GiB each stage has: the
    releases before the regression and after its fix (pull request 33698) start."""
    from recommender.memory.budget import explain

    gpu = next(g for g in load_gpus() if g.key == "a100-80gb")
    flags = EngineFlags(
        pipeline_parallel_size=8,
        quantization="fp8",
        max_model_len=202752,
        gpu_memory_utilization=0.925,
        max_num_seqs=128,
    )
    e = explain(resolve_model("zai-org/GLM-4.7-FP8"), gpu, flags, VllmVersion.parse(version))
    assert e.kv_bytes_per_token == 12 * 2 * 8 * 128 * 2
    assert 28 * 2**30 < e.stage.available_kv < 30 * 2**30
    assert e.fits is not fails
    if fails:
        (message,) = e.errors
        assert "(71.16 GiB KV cache is needed" in message


def test_chunked_prefill_flag_sets_the_default_token_budget() -> None:
    """--enable-chunked-prefill / --no-enable-chunked-prefill override the release's default: V0 then profiles 512
    (0.6) or 2048 (0.7) tokens, or the whole context; V1 without it raises its default budget to the context
    (arg_utils.py `max(model_config.max_model_len, self.max_num_batched_tokens)`)."""
    text = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    on, off = EngineFlags(enable_chunked_prefill=True), EngineFlags(enable_chunked_prefill=False)
    assert v0_batched_tokens(text, on, 8192, VllmVersion(0, 6, 3)) == 512
    assert v0_batched_tokens(text, on, 8192, VllmVersion(0, 7, 3)) == 2048
    assert v0_batched_tokens(text, off, 65536, VllmVersion(0, 7, 3)) == 65536
    issues: list[StartupIssue] = []
    assert scheduler_limits(text, off, GPUS["h100-sxm"], VllmVersion(0, 11), issues).max_num_batched_tokens == 32768
    assert scheduler_limits(text, on, GPUS["h100-sxm"], VllmVersion(0, 11), issues).max_num_batched_tokens == 8192
    assert not issues
