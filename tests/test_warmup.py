"""The post-allocation warm-ups (sampler, CUDA graphs) against what is left after the KV cache, hand-checked."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory import overheads, warmup
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

H100 = resolve_gpu("h100", load_gpus())
V019 = VllmVersion.parse("0.19.0")
OSS20 = "openai/gpt-oss-20b"


def test_sampler_warmup_bytes() -> None:
    # 1,024 dummy requests x 201,088 logits x (2 B bf16 logits + 4 B fp32 copy + 4 B probs + 4 B noise q):
    # the q allocation alone is 1,024 x 201,088 x 4 B = 786 MiB, the "Tried to allocate 786.00 MiB" of A001/A002.
    assert warmup.sampler_warmup_bytes(1024, 201_088, 36.0, old_sampler=False) == 1024 * 201_088 * 14
    assert 1024 * 201_088 * 4 // (1 << 20) == 785  # 785.5 MiB, printed as 786.00
    assert warmup.sampler_warmup_bytes(1024, 151_936, 36.0, old_sampler=True) == int(36.0 * 1024 * 151_936)


def test_cudagraph_capture_count() -> None:
    # [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16): 3 + 31 + 17 = 51 at 512 (the v0.19 logs' "51"),
    # 3 + 31 + 49 = 83 at 1,024 (gpt-oss: "PIECEWISE=83 (largest=1024)"); v0.11 captured 1, 2, 4 and every
    # multiple of 8 up to 512: 67.
    assert overheads.cudagraph_capture_count(512, max_num_batched_tokens=8192) == 51
    assert overheads.cudagraph_capture_count(1024, max_num_batched_tokens=8192) == 83
    assert overheads.cudagraph_capture_count(512, max_num_batched_tokens=8192, version=(0, 11)) == 67
    assert overheads.cudagraph_capture_count(512, max_num_batched_tokens=256) == 35  # 3 + 31 + {256}


def test_capture_list_per_release() -> None:
    """The V1 capture list of each release's config _set_cudagraph_sizes (tags v0.8.5, v0.10.2, v0.11.1): before 0.10
    [1, 2, 4] + range(8, 513, 8) whatever max_num_seqs, so --max-num-seqs 1 on 0.8.5 still captures 67 sizes (field7
    M020, which ran out of memory there and started with --enforce-eager, M021); 0.10.0-0.11.0 stop at
    min(2 x max_num_seqs, 512) but keep [1, 2, 4]; step 16 from 256 only from 0.11.1."""
    qwen = resolve_model("Qwen/Qwen3-30B-A3B")
    for seqs in (1, 256):
        top = overheads.cudagraph_max_capture(qwen, (8, 6), (0, 8, 5), seqs)
        assert top == 512
        assert overheads.cudagraph_capture_count(top, max_num_batched_tokens=2048, version=(0, 8, 5)) == 67
    assert overheads.cudagraph_capture_count(512, max_num_batched_tokens=256, version=(0, 9, 2)) == 3 + 32
    assert overheads.cudagraph_max_capture(qwen, (8, 6), (0, 10, 2), 1) == 2
    assert overheads.cudagraph_capture_count(2, max_num_batched_tokens=2048, version=(0, 10, 2)) == 3  # 1, 2, 4
    assert overheads.cudagraph_max_capture(qwen, (9, 0), (0, 11, 0), 1024) == 512
    assert overheads.cudagraph_capture_count(512, max_num_batched_tokens=8192, version=(0, 11, 0)) == 67
    assert overheads.cudagraph_capture_count(512, max_num_batched_tokens=8192, version=(0, 11, 1)) == 51
    assert overheads.cudagraph_capture_count(2, max_num_batched_tokens=2048, version=(0, 11, 1)) == 2


def test_max_num_seqs_1_on_0_8_5_keeps_the_67_graph_pool() -> None:
    """M020 (Qwen3-30B-A3B, TP 4 on four A10, vLLM 0.8.5, --max-model-len 1024 --max-num-seqs 1): the graph pool after
    the KV cache is the 67-size list's, as at the default 256 sequences, not the 2-size list 0.10+ would capture."""
    a10 = resolve_gpu("a10", load_gpus())
    qwen = resolve_model("Qwen/Qwen3-30B-A3B")
    flags = EngineFlags(tensor_parallel_size=4, max_model_len=1024, max_num_seqs=1)
    e = explain(qwen, a10, flags, VllmVersion.parse("0.8.5"))
    pool = int(warmup.captured_pool_bytes(layers_on_gpu=48, graphs=67) * (1 + warmup.CUDAGRAPH_OVER_ESTIMATE))
    assert e.post_allocation is not None and e.post_allocation.cudagraphs == pool
    eager = explain(
        qwen,
        a10,
        EngineFlags(tensor_parallel_size=4, max_model_len=1024, max_num_seqs=1, enforce_eager=True),
        VllmVersion.parse("0.8.5"),
    )
    assert eager.post_allocation is not None and eager.post_allocation.cudagraphs == 0


def test_gpt_oss_20b_sampler_oom_at_0_95_on_v0_19() -> None:
    # A001 / A002: TP=1 and TP=2 at 0.95 run out of memory in the sampler warm-up; A003: TP=2 at 0.90 starts.
    for tp in (1, 2):
        flags = EngineFlags(tensor_parallel_size=tp, gpu_memory_utilization=0.95, max_model_len=8192)
        e = explain(resolve_model(OSS20), H100, flags, V019)
        assert not e.fits and e.error_kinds == (IssueKind.WARMUP_OOM,)
        oom = e.issue(IssueKind.WARMUP_OOM)
        assert oom is not None and oom.count == 1024
        assert oom.message.startswith("CUDA out of memory occurred when warming up sampler with 1024 dummy requests.")
        assert oom.needed_bytes is not None and oom.available_bytes is not None
        assert oom.needed_bytes > oom.available_bytes
    ok = explain(resolve_model(OSS20), H100, EngineFlags(tensor_parallel_size=2, max_model_len=8192), V019)
    assert ok.fits and not ok.has(IssueKind.WARMUP_OOM)


def test_post_allocation_terms_by_hand() -> None:
    # gpt-oss-20b, H100 (79.19 GiB), 0.95, v0.19, TP=1: outside the budget 79.19 - ceil(0.95 x total); graphs are
    # captured after the KV cache before 0.21, so all of the 83-graph estimate plus 30%; the CUDA context 0.5 GiB;
    # room adds back the freed activation peak and takes off the MXFP4 triton reserve.
    e = explain(resolve_model(OSS20), H100, EngineFlags(gpu_memory_utilization=0.95, max_model_len=8192), V019)
    oom = e.issue(IssueKind.WARMUP_OOM)
    assert oom is not None
    stage = e.stages[-1]
    sampler = 1024 * 201_088 * 14
    graphs = int(stage.cudagraph * 1.3)
    need = sampler + graphs + int(0.5 * GiB)
    room = (H100.total_bytes - e.requested_bytes) + stage.activation_peak - int(2.68 * GiB)
    assert (oom.needed_bytes, oom.available_bytes) == (need, room)
    # 0.21+ subtracts the graph estimate before sizing the KV cache: only the 30% excess remains, and gpt-oss-20b
    # at 0.95 is then within the uncertainty band: a warning with the margin, not a crash.
    v033 = explain(
        resolve_model(OSS20),
        H100,
        EngineFlags(gpu_memory_utilization=0.95, max_model_len=8192),
        VllmVersion.parse("0.33"),
    )
    assert v033.fits and v033.has(IssueKind.WARMUP_HEADROOM)


def test_dense_models_of_the_sweep_still_start() -> None:
    # The same sweep started these at 0.95 with 1,024 sequences (C014 gemma-2-27b with a 256k vocabulary; Llama-3.1-8B
    # at TP=2 over NVLink, C029).
    for model, tp in (("google/gemma-2-27b-it", 1), ("meta-llama/Llama-3.1-8B-Instruct", 2)):
        flags = EngineFlags(tensor_parallel_size=tp, gpu_memory_utilization=0.95, max_model_len=8192)
        assert explain(resolve_model(model), H100, flags, V019).fits


def test_pcie_cards_without_nvlink() -> None:
    # "PCIe Gen4 (no NVLink)" is not NVLink: no custom all-reduce buffers, no NCCL setup on the NVLink scale.
    rtx = resolve_gpu("rtx4090", load_gpus())
    assert not rtx.nvlink and H100.nvlink
    assert warmup.context_bytes(2, rtx.nvlink) == int(0.5 * GiB)


def test_nvlink_c2c_to_the_cpu_is_not_a_gpu_link() -> None:
    # DGX Spark's GB10 is one GPU joined to its Grace CPU by NVLink-C2C: two Sparks talk over the network, so vLLM's
    # custom all-reduce (one node, full NVLink) never runs. GH200 names NVLink 4.0 between superchips as well.
    gpus = load_gpus()
    assert not resolve_gpu("gb10", gpus).nvlink
    assert resolve_gpu("gh200", gpus).nvlink


def test_recommend_picks_the_highest_utilization_explain_judges_safe() -> None:
    """One warm-up rule: the planner's --gpu-memory-utilization is the highest hundredth at which explain sees no
    warm-up risk (WARMUP_UNCERTAINTY to spare); one hundredth more and explain warns. Qwen2.5-7B on four T4s with
    128 sequences: the release default 0.92 leaves a 0.57 GiB margin (a warning), so 0.89 is planned (0.88 while
    the KV side's CUDA-graph estimate never scaled below its 51-graph fit)."""
    import json

    from .conftest import invoke

    out = invoke(["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "t4", "--concurrency", "128"])
    plan = json.loads(
        invoke(
            [
                "recommend",
                "--model",
                "Qwen/Qwen2.5-7B-Instruct",
                "--gpu",
                "t4",
                "--concurrency",
                "128",
                "--format",
                "json",
            ]
        ).stdout
    )
    assert "--gpu-memory-utilization 0.89" in out.stdout
    p = plan["prediction"]
    # no warm-up warning; the one note is NCCL's all-reduce captured over four PCIe T4s (nccl_graphs.nccl_graph_note)
    assert p["gpu_memory_utilization"] == 0.89 and p["fits"]
    assert len(p["warnings"]) == 1 and "NCCL's all-reduce is captured in the CUDA graphs" in p["warnings"][0]
    spec, gpu, version = resolve_model("Qwen/Qwen2.5-7B-Instruct"), resolve_gpu("t4", load_gpus()), VllmVersion(0, 33)
    for util, warned in ((0.89, False), (0.90, True)):
        flags = EngineFlags(
            tensor_parallel_size=p["tensor_parallel_size"],
            gpu_memory_utilization=util,
            max_model_len=p["max_model_len"],
            max_num_seqs=p["max_num_seqs"],
            max_num_batched_tokens=p["max_num_batched_tokens"],
        )
        e = explain(spec, gpu, flags, version)
        assert e.has(IssueKind.WARMUP_HEADROOM) is warned and e.fits


def test_v0_has_no_sampler_warmup() -> None:
    # V0 (worker.py _warm_up_model) only captured CUDA graphs after the KV cache; V1 then also warms the sampler up
    # over min(max_num_seqs, max_num_batched_tokens) dummy requests (1,024 in 0.8.1: 36 B x 1,024 x 152,064 = 5.2 GiB).
    model = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    a10g = resolve_gpu("a10g", load_gpus())
    v081 = VllmVersion.parse("0.8.1")
    v0 = explain(model, a10g, EngineFlags(max_model_len=4096, use_v1=False, gpu_memory_utilization=0.95), v081)
    v1 = explain(model, a10g, EngineFlags(max_model_len=4096, use_v1=True, gpu_memory_utilization=0.95), v081)
    assert v0.fits and v0.has(IssueKind.V0_ENGINE) and not v0.has(IssueKind.WARMUP_OOM)
    assert v0.post_allocation is not None and v0.post_allocation.sampler == 0
    # 0.8.1's profile ran the same 1,024-row sampler (5.31 GiB peak, freed before the KV cache) and counted the CUDA
    # context inside the budget: 5.22 GiB sampler + 1.16 GiB graphs against 1.10 + 5.31 GiB, a margin of 0.03 GiB.
    assert v1.post_allocation is not None and v1.post_allocation.sampler == 36 * 1024 * 152_064
    assert v1.post_allocation.context == 0
    assert v1.error_kinds == () and v1.has(IssueKind.WARMUP_HEADROOM)


def test_v0_capture_list() -> None:
    # V0 (model_runner.py _BATCH_SIZES_TO_CAPTURE, _get_max_graph_batch_size): [1, 2, 4] + 8, 16, ... up to the
    # smallest of those >= max_num_seqs. 256 -> 3 + 32 = 35 graphs (the V1 list at 2 x 256 = 512 has 51);
    # 100 pads to 104 -> 3 + 13 = 16; 3 pads to 4 -> 3; above 8,192 the list ends: 3 + 1,024.
    assert overheads.v0_cudagraph_capture_count(256) == 35
    assert overheads.v0_cudagraph_capture_count(100) == 16
    assert overheads.v0_cudagraph_capture_count(3) == 3
    assert overheads.v0_cudagraph_capture_count(1) == 1
    assert overheads.v0_cudagraph_capture_count(10_000) == 1027


def test_v0_0_6_4_counts_the_context_inside_the_budget() -> None:
    """phi-1_5 (24 layers) on an 8 GB card at 0.9 with vLLM 0.6.4, as field3 H039 (GTX 1080, 7.92 GiB) started.
    0.6.4's profiler takes non-torch memory as total - free on the whole device less torch's allocations, so the CUDA
    context is inside the budget: after the KV cache only the graphs are allocated. Their estimate: 35 graphs, the
    first capture's share and 34 of the fit's 50 per-graph steps, 0.28 GiB + 17 MiB x 24 x (186 + 34 x 6) / 486 =
    0.600 GiB; the pool of 35 graphs: 0.28 GiB + 17 MiB x 24 x 34 / 50 =
    0.557 GiB, x 1.3 captured after the KV cache = 0.72 GiB (H039 logged 0.54). Room: 10 % of the card outside the
    budget plus the freed activation peak. On 0.6.5 (memory_profiling against a baseline) the context (0.5 GiB) is
    outside the budget and allocated beside the graphs."""
    card = resolve_gpu("rtx4060ti-8gb", load_gpus())
    model = resolve_model("microsoft/phi-1_5")
    e = explain(model, card, EngineFlags(), VllmVersion.parse("0.6.4"))
    post = e.post_allocation
    assert post is not None and e.fits and not e.has(IssueKind.WARMUP_OOM)
    assert post.context == 0 and post.sampler == 0
    estimate = int(0.28 * GiB) + 17 * (1 << 20) * 24 * (186 + 34 * 6) / 486
    assert e.stages[-1].cudagraph == pytest.approx(estimate, abs=2)
    assert post.cudagraphs == int((int(0.28 * GiB) + int(17 * (1 << 20) * 24 * 34 / 50)) * 1.3)
    assert post.outside_budget == e.gpu_total_bytes - e.requested_bytes
    headroom = e.issue(IssueKind.WARMUP_HEADROOM)  # 0.72 GiB for the graphs alone, 1.24 left: too close to call
    assert headroom is not None and "GiB CUDA graphs allocate after the KV cache" in headroom.message
    later = explain(model, card, EngineFlags(), VllmVersion.parse("0.6.5"))
    assert later.post_allocation is not None and later.post_allocation.context == warmup.CONTEXT_SINGLE
    assert later.post_allocation.need - post.need == warmup.CONTEXT_SINGLE  # 1.22 GiB against 1.24: closer still
    close = later.issue(IssueKind.WARMUP_HEADROOM)
    assert close is not None and "CUDA graphs and CUDA context allocate after the KV cache" in close.message


def test_other_processes_memory_is_outside_the_budget_but_not_free() -> None:
    """--free-memory-gib: what other processes hold is outside vLLM's budget but not available to the warm-ups.
    Llama-3.1-8B on an RTX 3090 (23.54 GiB) at 0.9, vLLM 0.17.1, with 21.86 GiB free (field F026: 1.68 GiB held
    outside vLLM's process at its OOM). requested = ceil(0.9 x total) = 21.19 GiB, so 0.67 GiB is outside the budget
    and free, not 2.35; with the freed activation peak (0.50) that is 1.17 GiB for the 0.43 GiB sampler warm-up
    (256 x 128,256 x 14 B), 1.28 GiB of graphs and the 0.5 GiB context: it crashes. On 0.6.4 the profiler counts
    the other processes as non-torch memory (inside the budget): the KV cache shrinks by them instead."""
    rtx = resolve_gpu("rtx3090", load_gpus())
    model = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    free = int(21.86 * GiB)
    e = explain(model, rtx, EngineFlags(max_model_len=8192), VllmVersion.parse("0.17.1"), free_bytes=free)
    post = e.post_allocation
    assert post is not None and post.outside_budget == free - e.requested_bytes
    assert e.error_kinds == (IssueKind.WARMUP_OOM,)
    idle = explain(model, rtx, EngineFlags(max_model_len=8192), VllmVersion.parse("0.17.1"))
    assert idle.fits and idle.post_allocation is not None
    assert idle.post_allocation.outside_budget == idle.gpu_total_bytes - idle.requested_bytes
    v064 = VllmVersion.parse("0.6.4")
    shared = explain(model, rtx, EngineFlags(max_model_len=8192), v064, free_bytes=free).stages[0]
    alone = explain(model, rtx, EngineFlags(max_model_len=8192), v064).stages[0]
    assert shared.non_torch - alone.non_torch == rtx.total_bytes - free
    assert alone.available_kv - shared.available_kv == rtx.total_bytes - free


def test_v2_runner_profiles_the_sampler_on_model_dtype_logits() -> None:
    """Model Runner V2 (the default for dense models from 0.25) profiles its dummy sampler run without sampling
    parameters. Read in the wheels: 0.24.0 and 0.25.0 copy the logits to fp32 whatever the parameters (2 + 4 B a
    logit); 0.26.0 keeps the model dtype and mutates it in place; 0.27.0 / 0.28.0 return the logits before the fp32
    copy when no request needs processing; 0.30 shows the same in field3 H021's log; 0.31 profiles the warm-up's
    parameters (13.5 B, the fit). Qwen2.5-3B-Instruct-AWQ, --enforce-eager (no torch.compile in the profiling window),
    2,048 batched tokens, 256 requests x 151,936 logits = 38,895,616 logits; forward 2,048 x 47,000 B = 96,256,000:
      0.26-0.30   96,256,000 + 2 x 38,895,616    = 174,047,232 B (0.162 GiB; H021 logs 0.15)
      0.25        96,256,000 + 6 x 38,895,616    = 329,629,696 B
      0.24, 0.31  96,256,000 + 13.5 x 38,895,616 = 621,346,816 B (V1's runner at 0.24; V2 with the warm-up's
                  parameters at 0.31)
    The dense MLP's side, 2,048 x (6 x 11,008 + 4 x 2,048) = 152,043,520 B, stays below. The warm-up after the KV
    cache runs the full fp32 pipeline on every release: 256 x 151,936 x 14 B = 0.507 GiB."""
    card = resolve_gpu("rtx4060", load_gpus())
    model = resolve_model("Qwen/Qwen2.5-3B-Instruct-AWQ")
    flags = EngineFlags(enforce_eager=True, gpu_memory_utilization=0.45, max_model_len=1024)
    assert overheads.v1_forward_bytes(model, 2048, 1) == 152_043_520
    peaks = {}
    for version in ("0.24.0", "0.25.0", "0.26.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0"):
        e = explain(model, card, flags, VllmVersion.parse(version))
        assert e.max_num_batched_tokens == 2048 and e.max_num_seqs == 256
        assert e.post_allocation is not None and e.post_allocation.sampler == 256 * 151_936 * 14
        peaks[version] = e.stages[-1].activation_peak
    assert {peaks[v] for v in ("0.26.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0")} == {174_047_232}
    assert round(peaks["0.30.0"] / GiB, 3) == 0.162
    assert peaks["0.25.0"] == 329_629_696
    assert peaks["0.24.0"] == peaks["0.31.0"] == 621_346_816


def test_v1_before_0_9_1_counts_the_context_inside_the_budget() -> None:
    """Qwen2.5-32B-Instruct FP8 on two RTX 4090s (23.99 GiB) at 0.9, 18,144 tokens, vLLM 0.9.0, as field4 J018
    started. V1's profiler up to 0.9.0 took non-torch memory as (total - free) less torch's allocations, so the CUDA
    context is inside the budget and nothing is allocated for it after the KV cache. After it: the sampler over 256
    rows (36 B x 256 x 152,064 = 1.31 GiB) and 67 graphs (every multiple of 8 to 512, scale 66 / 50 = 1.32:
    0.28 GiB + 17 MiB x 64 layers x 1.32 = 1.68 GiB, x 1.3 = 2.19 GiB): 3.49 GiB against 10 % of the card (2.40)
    plus the freed activation peak (1.39): 3.79, a margin of 0.30 GiB, a warning. 0.9.1 (memory_profiling against
    init_device's snapshot) adds the 0.5 GiB context after the KV cache: 3.99 > 3.79, the sampler warm-up OOM."""
    rtx = resolve_gpu("rtx4090", load_gpus())
    model = resolve_model("Qwen/Qwen2.5-32B-Instruct")
    flags = EngineFlags(tensor_parallel_size=2, quantization="fp8", max_model_len=18_144)
    e = explain(model, rtx, flags, VllmVersion.parse("0.9.0"))
    post = e.post_allocation
    assert post is not None and post.context == 0 and e.fits and e.has(IssueKind.WARMUP_HEADROOM)
    assert post.sampler == 36 * 256 * 152_064
    assert post.cudagraphs == int((int(0.28 * GiB) + int(17 * (1 << 20) * 64 * 66 / 50)) * 1.3)
    assert post.outside_budget == e.gpu_total_bytes - e.requested_bytes
    assert 0.25 * GiB < -post.shortfall < 0.35 * GiB
    later = explain(model, rtx, flags, VllmVersion.parse("0.9.1"))
    assert later.post_allocation is not None and later.post_allocation.context == warmup.CONTEXT_SINGLE
    assert later.error_kinds == (IssueKind.WARMUP_OOM,)


def test_short_capture_list_takes_a_small_pool_after_the_kv_cache() -> None:
    """Before 0.21 the whole graph pool is captured after the KV cache. Its size follows vLLM's own estimate,
    "first capture + (graphs - 1) x per graph": with max_num_seqs 8 the V1 list of 0.11 is [1, 2, 4, 8, 16] (5
    graphs), so a 94-layer stage (Qwen3-VL-235B-A22B at TP 8) takes 0.28 GiB + 17 MiB x 94 x 4 / 50 = 0.40 GiB, x 1.3
    = 0.53 GiB, where the KV-side estimate (which keeps the first capture's 38 % of the per-layer part: 0.28 GiB +
    17 MiB x 94 x (186 + 4 x 6) / 486 = 0.95 GiB) and, before, its 51-graph floor (1.84) say more. Field4 J040 (0.97, 8 x H100,
    vLLM 0.11.0) started with 2.38 GiB outside the budget; the 1.84 x 1.3 = 2.39 GiB of graphs and the 1.5 GiB
    context called it a crash."""
    assert warmup.captured_pool_bytes(layers_on_gpu=94, graphs=5) == int(0.28 * GiB) + int(17 * (1 << 20) * 94 * 4 / 50)
    assert warmup.captured_pool_bytes(layers_on_gpu=94, graphs=51) == overheads.cudagraph_bytes(
        layers_on_gpu=94, enforce_eager=False, graphs=51
    )
    model = resolve_model("Qwen/Qwen3-VL-235B-A22B-Instruct")
    flags = EngineFlags(
        tensor_parallel_size=8,
        enable_expert_parallel=True,
        quantization="fp8",
        gpu_memory_utilization=0.97,
        max_model_len=8192,
        max_num_seqs=8,
    )
    e = explain(model, H100, flags, VllmVersion.parse("0.11.0"))
    post = e.post_allocation
    assert post is not None and e.fits
    assert post.cudagraphs == int(warmup.captured_pool_bytes(layers_on_gpu=94, graphs=5) * 1.3)
    # The KV-side estimate counts 0.11's FULL decode graphs too: the sizes <= 8 sequences, 1, 2, 4, 8.
    assert overheads.cudagraph_decode_count(16, max_num_seqs=8, max_num_batched_tokens=8192, version=(0, 11, 0)) == 4
    # Their tokens scale it (16 and 8 of the fit's 512 and 496: memfix): 0.12 GiB + 0.16 GiB x 16 / 512 + 94 x 17 MiB
    # x 186 / 486 x 16 / 512 + 7 graphs after the first at vLLM's 1 MiB floor = 0.17 GiB, not 0.95.
    assert e.stages[-1].cudagraph == overheads.cudagraph_bytes(
        layers_on_gpu=94, enforce_eager=False, sizes=(1, 2, 4, 8, 16), full_sizes=(1, 2, 4, 8)
    )
    assert e.stages[-1].cudagraph == 128_849_018 + int(171_798_692 / 32) + int(94 * 17 * (1 << 20) * 186 / 486 / 32) + (
        7 << 20
    )


def test_v0_before_0_6_4_leaves_the_context_outside_the_budget() -> None:
    """v0.4.3-v0.6.3 (worker.py determine_num_available_blocks): peak = init_gpu_memory - free after profile_run, with
    init_gpu_memory read in init_device after the CUDA context exists and before NCCL is set up. So the context (0.5
    GiB) is allocated outside the budget, NCCL's buffers inside it (no 1.5 GiB TP-over-NVLink figure), and what other
    processes hold is neither in the budget nor free after the KV cache. 0.6.4 counted the whole device instead."""
    model = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    flags = EngineFlags(tensor_parallel_size=2, max_model_len=8192)
    v063, v064 = VllmVersion.parse("0.6.3"), VllmVersion.parse("0.6.4")
    old = explain(model, H100, flags, v063)
    assert old.post_allocation is not None and old.post_allocation.context == warmup.CONTEXT_SINGLE
    counted = explain(model, H100, flags, v064)
    assert counted.post_allocation is not None and counted.post_allocation.context == 0
    free = H100.total_bytes - 4 * GiB
    shared = explain(model, H100, flags, v063, free_bytes=free)
    assert shared.stages[0].non_torch == old.stages[0].non_torch  # not counted by the profiler
    assert shared.post_allocation is not None
    assert shared.post_allocation.outside_budget == free - shared.requested_bytes


def test_nccl_buffers_leave_the_budget_only_from_0_11() -> None:
    """init_device read its baseline before setting up NCCL in every V0 release (0.6.5's init_gpu_memory, 0.7's
    baseline_snapshot) and in V1 up to 0.10.2; V1 0.11.0 sets up the distributed environment first. So at TP 2 over
    NVLink only the 0.5 GiB CUDA context is outside the budget on 0.6.5 and 0.10.2 (NCCL's buffers are in the
    non-torch figure), and 1.5 GiB from 0.11 (field4 J023: Llama-3.1-8B at TP 2 on V100s at 0.95, vLLM 0.6.5, started
    with 1.89 GiB left for 0.83 GiB of graphs; 0.83 + 1.5 had called it a crash)."""
    model = resolve_model("meta-llama/Llama-3.1-8B-Instruct")
    flags = EngineFlags(tensor_parallel_size=2, max_model_len=8192)
    for version, context in (("0.6.5", warmup.CONTEXT_SINGLE), ("0.10.2", warmup.CONTEXT_SINGLE)):
        e = explain(model, H100, flags, VllmVersion.parse(version))
        assert e.post_allocation is not None and e.post_allocation.context == context, version
    later = explain(model, H100, flags, VllmVersion.parse("0.11.0"))
    assert later.post_allocation is not None and later.post_allocation.context == warmup.CONTEXT_TP_NVLINK


def test_deep_gemm_warmup_runs_before_the_graphs_and_the_sampler() -> None:
    """deep_gemm_warmup.py (0.11.2): Qwen3-Coder-480B-A35B FP8 (128 x 128 blocks) at TP 8 with expert parallelism
    holds 160 / 8 = 20 experts per GPU (H 6,144, I 2,560, top-8). At 8,192 batched tokens MAX_M = round_up(8,192 x 8
    + 20 x 127, 128) = 68,096 rows; w13 (n 5,120, k 6,144): a1q 68,096 x 6,144 B + scales 68,096 x 48 x 4 B + out
    68,096 x 5,120 x 2 B = 1,128,759,296, above w2's; with the int32 expert ids 1,129,031,680 (1.05 GiB). It runs
    first and its blocks return to the cache the sampler reuses, so the peak is the larger of it and sampler + graphs,
    plus the context: at 1,024 sequences the 5.2 GiB sampler hides it (field4 J043's crash in this warm-up needs a
    setting its excerpt does not show). With 8 sequences and 32,768 tokens MAX_M = 264,704 rows: 264,704 x 16,576 +
    264,704 x 4 = 4,388,792,320 bytes (4.09 GiB), which is then the peak. Before 0.11 VLLM_USE_DEEP_GEMM was off."""
    assert (
        warmup.deep_gemm_warmup_bytes(tokens=8192, top_k=8, local_experts=20, hidden=6144, intermediate=2560)
        == 1_129_031_680
    )
    h20 = resolve_gpu("h20", load_gpus())
    model = resolve_model("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8")
    flags = EngineFlags(tensor_parallel_size=8, enable_expert_parallel=True, max_model_len=32768)
    e = explain(model, h20, flags, VllmVersion.parse("0.11.2"))
    post = e.post_allocation
    assert post is not None and post.kernels == 1_129_031_680
    assert post.need == post.sampler + post.cudagraphs + post.context
    small = EngineFlags(
        tensor_parallel_size=8,
        enable_expert_parallel=True,
        max_model_len=32768,
        max_num_seqs=8,
        max_num_batched_tokens=32768,
    )
    few = explain(model, h20, small, VllmVersion.parse("0.11.2")).post_allocation
    assert few is not None and few.kernels == 4_388_792_320 == few.need - few.context
    older = explain(model, h20, flags, VllmVersion.parse("0.10.2")).post_allocation
    assert older is not None and older.kernels == 0


def test_integrated_gpu_snapshot_already_holds_the_cuda_context() -> None:
    """DGX Spark (GB10: 130,602,237,952 B to CUDA), vLLM 0.26, --gpu-memory-utilization 0.90 (perf blind set 8, Y017:
    gemma-4-31B-it ran all 11 tests there). vLLM's snapshot takes an integrated GPU's free memory from psutil's
    available memory once the process's CUDA context exists (utils/mem_utils.py MemorySnapshot.measure, called by
    v1/worker/gpu_worker.py init_device after init_worker_distributed_environment), and the 12 GiB host reserve of
    memory/unified.py is read there, so the context is not allocated again after the KV cache. Outside the budget:
    130,602,237,952 - 12 x 2^30 - ceil(0.9 x 130,602,237,952) = 117,717,336,064 - 117,542,014,157 = 175,321,907 B; the
    sampler warm-up 256 x 262,144 x 14 B = 939,524,096 B; the graphs what they take beyond vLLM's estimate (30 % of the
    fit's 1.28 GiB, bounded to 0.22 GiB: warmup.CUDAGRAPH_EXCESS_OVER_APPLIED_ESTIMATE)."""
    gb10 = resolve_gpu("gb10", load_gpus())
    spec = resolve_model("google/gemma-4-31B-it")
    flags = EngineFlags(
        gpu_memory_utilization=0.9,
        max_model_len=131_072,
        kv_cache_dtype="fp8",
        enable_prefix_caching=False,
        max_num_batched_tokens=8192,
    )
    e = explain(spec, gb10, flags, VllmVersion(0, 26))
    post = e.post_allocation
    assert post is not None and post.context == 0 and post.outside_budget == 175_321_907
    assert post.sampler == 256 * 262_144 * 14 == 939_524_096
    assert post.need == post.sampler + min(int(e.stages[-1].cudagraph * 0.3), int(0.22 * GiB))
    assert e.fits and e.has(IssueKind.WARMUP_HEADROOM) and not e.has(IssueKind.WARMUP_OOM)
    # a free memory the user states is the machine's own figure, read before vLLM: the context comes out of it after
    stated = explain(spec, gb10, flags, VllmVersion(0, 26), free_bytes=118 * GiB)
    assert stated.post_allocation is not None and stated.post_allocation.context == warmup.CONTEXT_SINGLE
    # a discrete card keeps the context outside its free memory (an idle card's free memory is its total)
    h100 = explain(resolve_model(OSS20), H100, EngineFlags(gpu_memory_utilization=0.9), VllmVersion(0, 26))
    assert h100.post_allocation is not None and h100.post_allocation.context == warmup.CONTEXT_SINGLE


def test_graphs_beyond_the_reserved_estimate_are_bounded_from_0_21() -> None:
    """From 0.21 the budget holds vLLM's graph estimate, measured by capturing the graphs themselves, and the capture
    after the KV cache takes at most 0.22 GiB more in the 0.21+ logs that print both (G040: 0.35 taken against 0.13
    estimated). 30 % of a 0.5 GiB estimate is 0.15 GiB and stands; 30 % of 2 GiB (0.6) is bounded to 0.22. Before
    0.21 the whole pool comes after the KV cache, 1.3 x, unbounded."""
    half, two = int(0.5 * GiB), 2 * GiB
    assert warmup.cudagraphs_after_kv(half, estimate_before_kv=True) == int(half * 0.3)
    assert warmup.cudagraphs_after_kv(two, estimate_before_kv=True) == int(0.22 * GiB)
    assert warmup.cudagraphs_after_kv(two, estimate_before_kv=False) == int(two * 1.3)
    # gpt-oss-20b at 0.95 on an H100, 0.33: the fit's estimate for its 1,024-sequence list is above 0.73 GiB, so the
    # bound, not 30 % of it, is what the warm-up check adds to the sampler and the context.
    e = explain(
        resolve_model(OSS20),
        H100,
        EngineFlags(gpu_memory_utilization=0.95, max_model_len=8192),
        VllmVersion.parse("0.33"),
    )
    assert e.stages[-1].cudagraph * 0.3 > 0.22 * GiB
    assert e.post_allocation is not None and e.post_allocation.cudagraphs == int(0.22 * GiB)
