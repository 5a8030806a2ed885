"""NCCL's all-reduce captured in the CUDA graphs: what vLLM does when its custom all-reduce is off (pure).

vLLM's tensor-parallel all-reduce runs its own kernel where it can (distributed/device_communicators/
custom_all_reduce.py CustomAllreduce.__init__, the same test from 0.5 to 0.33): it is disabled "because it's not
supported on more than two PCIe-only GPUs" when the TP group has more than two ranks that are not fully connected
by NVLink (`world_size > 2 and not fully_connected`), and for a world size it does not support ([2, 4, 6, 8] up
to 0.14; 16 joined later, for a group beyond one node, which the model does not place). The all-reduce then goes through PyNccl, inside the captured graphs (V0 worker/model_runner.py
capture_model; V1 piecewise graphs split at attention, so the all-reduces after attention and after the MLP or
the experts are captured in every graph).

NCCL's kernels captured in a graph take device memory that the model's CUDA-graph term (fitted on NVLink and
single-GPU logs) does not hold, and how much depends on the driver and the transport, not on vLLM:
- vllm-project/vllm#5517 (A10G and L4 x 8, vLLM 0.5, June 2024): the graphs took 3.81 / 3.79 GiB under CUDA
  drivers 12.2 and 12.3 and 1.14 GiB under 12.4.1 ("This discrepancy is due to cuda driver version"); a vLLM
  maintainer: "If disabling custom allreduce increases the cudagraph memory, then i suppose this is caused by
  NCCL. It is machine topology dependent."
- vllm-project/vllm#7553 (Yi-1.5-34B, TP 4 on RTX 4090, 0.5.4, driver 535): 2,464 MiB more with graphs than eager.
- vllm-project/vllm#11452 (TP 4, V0, same command): "took 6.56 GiB" on RTX 4090, 1.43 GiB on A30.
- vLLM's own env_override.py (0.8.5): NCCL_CUMEM_ENABLE is switched off because "it will cost 1~2 GiB GPU
  memory with cudagraph+allreduce" (NVIDIA/nccl#1234).
So no one figure can be added to the graphs. What the model can say: on such a plan, a post-KV margin inside the
warm-up uncertainty (warmup.WARMUP_UNCERTAINTY) is not a start, since the one term it leaves out only adds memory:
field7 M019/M020 (Qwen3-30B-A3B, TP 4 on A10, vLLM 0.8.5, 0.55-0.63 GiB margins) ran out of memory inside
capture_model (vllm-project/vllm#17469's traceback: gpu_worker.py compile_or_warm_up_model -> capture_model ->
fused_experts_impl) and started with --enforce-eager. Plans with more margin are not called at risk: the started
PCIe logs hold 1.1-1.2 GiB (calibration C002, L40S x 8 at 0.10.2; field4 J009, RTX 4090 x 4 at 0.5.4), while
field4 J001 (L4 x 8, 0.5.4, the hardware of #5517, August 2024) crashed with 2.9 GiB: the driver decides that one.

With two ranks the kernel also needs peer-to-peer access (GeForce cards lack it), which the catalog does not
record; the TP 2 logs without it (field4 J017/J018, RTX 4090 x 2 at 0.9.0, 0.3-0.8 GiB margins, started) show no
such excess, so two ranks are left out.
"""

from __future__ import annotations

from recommender.hardware import Gpu
from recommender.memory import warmup
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.units import MiB, format_gib

CUSTOM_ALL_REDUCE_WORLD_SIZES = (2, 4, 6, 8)
# A tensor-parallel layer all-reduces twice in its forward (RowParallelLinear after attention's o_proj, and after the
# MLP's down_proj or the experts' output), and every captured size records the whole forward (V0's decode graphs,
# V1's piecewise pieces between the attention calls, FULL graphs), so a capture list of G sizes over L layers holds
# about 2 x G x L NCCL all-reduces.
ALL_REDUCES_PER_LAYER = 2
# What the logs allow each captured all-reduce, as the post-KV margin (explain's PostAllocation) over that count:
# calibration C002 (Qwen3-235B, L40S x 8, 0.10.2, 67 graphs x 94 layers x 2 = 12,596) started with 1.11 GiB, so
# under 0.09 MiB each there; field4 J001 (gemma-2-9b, L4 x 8, 0.5.4, 35 x 42 x 2 = 2,940) crashed with 2.92 GiB,
# over 1.0 MiB each; field6 L002 (GLM-4.7 NVFP4, 4 x RTX PRO 6000 Max-Q, 0.15.1, 102 x 92 x 2 = 18,768) crashed with
# 7.63, over 0.4 MiB each, while L003 (MiniMax-M2.5 on the same cards, 102 x 62 x 2 = 12,648) started with 8.03.
# Twelve-fold apart on the driver and NCCL build, not on vLLM's arithmetic: no figure to subtract, so beyond the
# at-risk band explain names the margin per captured all-reduce against that range instead of calling a verdict.
NCCL_PER_ALL_REDUCE_STARTED = 0.09 * MiB
NCCL_PER_ALL_REDUCE_CRASHED = 1.0 * MiB
ONE_NODE = 8  # GPUs of one node: a larger TP group spans nodes, where the rules differ by release (not placed)


def captures_nccl(gpu: Gpu, tp: int) -> bool:
    """True where vLLM's custom all-reduce is off and NCCL's all-reduce is captured in the graphs: an NVIDIA TP group
    of three to eight ranks that NVLink does not fully connect, or of a size the kernel does not support (3, 5, 7)."""
    if gpu.vendor != "nvidia" or not 2 < tp <= ONE_NODE:
        return False
    return not gpu.nvlink or tp not in CUSTOM_ALL_REDUCE_WORLD_SIZES


def nccl_graph_margin(
    post: warmup.PostAllocation, gpu: Gpu, tp: int, *, enforce_eager: bool, utilization: float
) -> StartupIssue | None:
    """At risk when NCCL's all-reduce is captured in the graphs (captures_nccl) and the post-KV margin is within
    the warm-up uncertainty (a shortfall is already a crash)."""
    margin = post.room - post.need
    if enforce_eager or post.cudagraphs <= 0 or not captures_nccl(gpu, tp):
        return None
    if not 0 <= margin < warmup.WARMUP_UNCERTAINTY:
        return None
    return StartupIssue(
        IssueKind.NCCL_GRAPH_MARGIN,
        f"at risk: with {tp} x {gpu.name} {'(a TP size it does not support)' if gpu.nvlink else 'over PCIe'} "
        "vLLM's custom all-reduce is off and NCCL's all-reduce is "
        "captured in the CUDA graphs, whose memory depends on the driver (1.1 to 3.8 GiB of graphs on the same "
        f"cards, vllm-project/vllm#5517) and is not in the model's figure: the post-KV margin of "
        f"{format_gib(margin):.2f} GiB (--gpu-memory-utilization {utilization}) does not cover it; "
        "lower --gpu-memory-utilization or pass --enforce-eager",
        needed_bytes=post.need,
        available_bytes=post.room,
    )


def nccl_graph_note(
    post: warmup.PostAllocation, gpu: Gpu, tp: int, *, enforce_eager: bool, graphs: int, layers: int
) -> StartupIssue | None:
    """Beyond the at-risk band (nccl_graph_margin), a warning that names what the post-KV margin leaves each NCCL
    all-reduce captured in `graphs` graphs of `layers` layers, against the per-all-reduce range the logs show
    (NCCL_PER_ALL_REDUCE_STARTED to _CRASHED): the verdict stays the model's, the margin is stated."""
    margin = post.room - post.need
    if enforce_eager or post.cudagraphs <= 0 or graphs <= 0 or not captures_nccl(gpu, tp):
        return None
    if margin < warmup.WARMUP_UNCERTAINTY:
        return None  # a crash or at risk already
    count = ALL_REDUCES_PER_LAYER * graphs * layers
    each = margin / count
    return StartupIssue(
        IssueKind.NCCL_GRAPHS_UNCOUNTED,
        f"with {tp} x {gpu.name} {'(a TP size it does not support)' if gpu.nvlink else 'over PCIe'}, NCCL's "
        f"all-reduce is captured in the CUDA graphs, about {count:,} times ({graphs} graphs x {layers} layers x "
        f"{ALL_REDUCES_PER_LAYER}), and the model does not count its memory: the post-KV margin of "
        f"{format_gib(margin):.2f} GiB leaves {each / MiB:.2f} MiB for each, where logged captures took under "
        f"{NCCL_PER_ALL_REDUCE_STARTED / MiB:.2f} MiB (L40S x 8, started) to over {NCCL_PER_ALL_REDUCE_CRASHED / MiB:.1f}"
        " MiB (L4 x 8, crashed) each, by driver and NCCL version; if startup runs out of memory capturing graphs, "
        "lower --gpu-memory-utilization or pass --enforce-eager",
        count=count,
        available_bytes=margin,
    )
