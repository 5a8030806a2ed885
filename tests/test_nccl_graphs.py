"""NCCL's all-reduce captured in the CUDA graphs where vLLM's custom all-reduce is off (memory/nccl_graphs.py)."""

from __future__ import annotations

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory import nccl_graphs, warmup
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.sources.resolve import resolve_model
from recommender.units import GiB, MiB

GPUS = load_gpus()
A10 = resolve_gpu("A10", GPUS)
L40S = resolve_gpu("L40S", GPUS)
A100 = resolve_gpu("A100-SXM4-80GB", GPUS)
MI300X = resolve_gpu("MI300X", GPUS)
QWEN3_MOE = resolve_model("Qwen/Qwen3-30B-A3B")
V085 = VllmVersion.parse("0.8.5")


def test_custom_all_reduce_is_off_beyond_two_pcie_ranks() -> None:
    """custom_all_reduce.py: `world_size > 2 and not fully_connected` disables it, and so does a world size outside
    [2, 4, 6, 8]; two PCIe ranks keep it (where P2P works), NVLink keeps it at 4 and 8, AMD is not NVIDIA's case, and
    a group beyond one node is not placed."""
    assert not A10.nvlink and A100.nvlink
    assert [tp for tp in range(1, 17) if nccl_graphs.captures_nccl(A10, tp)] == [3, 4, 5, 6, 7, 8]
    assert [tp for tp in range(1, 17) if nccl_graphs.captures_nccl(A100, tp)] == [3, 5, 7]
    assert not any(nccl_graphs.captures_nccl(MI300X, tp) for tp in range(1, 9))


def test_field7_m019_is_at_risk_not_safe() -> None:
    """field7 M019 (Qwen3-30B-A3B, TP 4 on A10, vLLM 0.8.5, defaults: 0.9, 256 sequences, 2,048 tokens) ran out of
    memory in capture_model (vllm-project/vllm#17469). By hand, per GPU (A10: 22,598 MiB = 23,695,720,448 B):
    room = outside the budget 23,695,720,448 - ceil(0.9 x it) 21,326,148,404 = 2,369,572,044
         + the freed profiling peak 2,048 x 47,000 + 2,048 x 8 x 2,048 x 2 (fused-MoE cache) + 36 x 256 x 151,936
           (sampler) = 96,256,000 + 67,108,864 + 1,400,242,176 = 1,563,607,040  -> 3,933,179,084
    need = the sampler warm-up 1,400,242,176 + 67 graphs' pool (0.28 GiB + 17 MiB x 48 layers x 66 / 50) x 1.3
           = (300,647,710 + 1,129,442,181) x 1.3 = 1,859,116,858                   -> 3,259,359,034
    A 673,820,050 B (0.63 GiB) margin, inside the warm-up uncertainty, with NCCL's all-reduce in the graphs: at risk.
    --enforce-eager (M021, started) captures nothing: no risk."""
    e = explain(QWEN3_MOE, A10, EngineFlags(tensor_parallel_size=4), V085)
    issue = e.issue(IssueKind.NCCL_GRAPH_MARGIN)
    assert issue is not None and e.fits and e.at_risk
    assert issue.available_bytes == 3_933_179_084 and issue.needed_bytes == 3_259_359_034
    assert issue.available_bytes - issue.needed_bytes == 673_820_050
    assert "margin of 0.63 GiB" in issue.message and "4 x NVIDIA A10 over PCIe" in issue.message
    assert e.has(IssueKind.WARMUP_HEADROOM)
    eager = explain(QWEN3_MOE, A10, EngineFlags(tensor_parallel_size=4, enforce_eager=True), V085)
    assert not eager.has(IssueKind.NCCL_GRAPH_MARGIN) and not eager.at_risk


def test_the_margin_rule_on_its_own_numbers() -> None:
    """0.5 GiB to spare on 4 x L40S is at risk; 1 GiB is not (outside the uncertainty); a shortfall is the crash
    warmup_headroom reports; no graphs captured, no risk; two ranks (custom all-reduce on), no risk."""

    def post(room: int, need: int, graphs: int = 512 * MiB) -> warmup.PostAllocation:
        return warmup.PostAllocation(
            rows=256,
            sampler=need - graphs,
            cudagraphs=graphs,
            context=0,
            outside_budget=room,
            freed_activation=0,
            reserve=0,
        )

    def risk(p: warmup.PostAllocation) -> bool:
        return nccl_graphs.nccl_graph_margin(p, L40S, 4, enforce_eager=False, utilization=0.9) is not None

    assert risk(post(3 * GiB, 3 * GiB - GiB // 2))
    assert not risk(post(3 * GiB, 2 * GiB))
    assert not risk(post(3 * GiB, 3 * GiB + 1))
    assert not risk(post(3 * GiB, 3 * GiB - GiB // 2, graphs=0))
    assert (
        nccl_graphs.nccl_graph_margin(post(3 * GiB, 3 * GiB - GiB // 2), L40S, 2, enforce_eager=False, utilization=0.9)
        is None
    )
    odd = nccl_graphs.nccl_graph_margin(
        post(3 * GiB, 3 * GiB - GiB // 2), A100, 3, enforce_eager=False, utilization=0.9
    )
    assert odd is not None and "3 x NVIDIA A100" in odd.message and "(a TP size it does not support)" in odd.message


def test_beyond_the_band_the_margin_is_named_per_captured_all_reduce() -> None:
    """Outside the at-risk band the verdict stays the model's, and a warning names what the margin leaves each NCCL
    all-reduce captured in the graphs. 4 x L40S, 51 graphs of 32 layers: 2 x 51 x 32 = 3,264 all-reduces; a 2 GiB
    margin leaves 2,147,483,648 / 3,264 = 657,930 B = 0.63 MiB each (the logs: under 0.09 MiB on L40S x 8, started;
    over 1.0 MiB on L4 x 8, crashed). Inside the band (0.5 GiB), at TP 2 (custom all-reduce on) or eager: no note."""

    def post(margin: int) -> warmup.PostAllocation:
        return warmup.PostAllocation(
            rows=256, sampler=GiB, cudagraphs=512 * MiB, context=0, outside_budget=GiB + 512 * MiB + margin,
            freed_activation=0, reserve=0,
        )  # fmt: skip

    note = nccl_graphs.nccl_graph_note(post(2 * GiB), L40S, 4, enforce_eager=False, graphs=51, layers=32)
    assert note is not None and note.kind is IssueKind.NCCL_GRAPHS_UNCOUNTED and not note.kind.at_risk
    assert note.count == 3_264 and note.available_bytes == 2 * GiB
    assert (
        "about 3,264 times (51 graphs x 32 layers x 2)" in note.message and "leaves 0.63 MiB for each" in note.message
    )
    assert nccl_graphs.nccl_graph_note(post(GiB // 2), L40S, 4, enforce_eager=False, graphs=51, layers=32) is None
    assert nccl_graphs.nccl_graph_note(post(2 * GiB), L40S, 2, enforce_eager=False, graphs=51, layers=32) is None
    assert nccl_graphs.nccl_graph_note(post(2 * GiB), L40S, 4, enforce_eager=True, graphs=51, layers=32) is None


def test_field6_l002_is_warned_not_called_at_risk() -> None:
    """field6 L002 (GLM-4.7 NVFP4, TP 4 on RTX PRO 6000 Max-Q, 0.15.1, 1,024 sequences) crashed in the sampler warm-up
    after the graphs took ~10 GiB (VERDICT-MISSES.md, 'After memfix'): 51 PIECEWISE + 51 FULL graphs x 92 layers x 2
    = 18,768 captured all-reduces; the model's 7.63 GiB margin is 0.42 MiB each, inside the logs' range, so explain
    warns with that figure and keeps its verdict."""
    from benchmarks.fidelity import FIELD6, compare, load_records

    (r,) = [r for r in load_records(*FIELD6) if r["id"] == "L002"]
    c = compare(r)
    assert c is not None and c.predicted == "ok"
    note = c.explanation.issue(IssueKind.NCCL_GRAPHS_UNCOUNTED)
    assert note is not None and note.count == 18_768 and "leaves 0.42 MiB for each" in note.message
