"""An integrated GPU's profile charges the host's memory growth to non-torch memory (memory/unified.py); numbers by
hand below."""

from __future__ import annotations

from benchmarks.fidelity import RECORD_SETS, compare, load_records
from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory import overheads, unified
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

GPUS = load_gpus()
GB10 = resolve_gpu("gb10", GPUS)


def test_gb10_non_torch_holds_the_hosts_growth_and_a_discrete_card_does_not() -> None:
    """Qwen3-0.6B at 0.6 on one DGX Spark, vLLM 0.27.1 (field14 U016's launch): TP 1 from 0.19 is 0.25 GiB of non-torch
    memory on any card; the Spark's snapshot also sees the host's 1.0 GiB and 7 % of the 1,202,585,600 B of weights
    (1,157,922,816 B), and the KV
    cache is the budget less weights, activation, non-torch and the graph estimate, to the byte. An H100 (discrete)
    keeps 0.25 GiB; GH200's memory is not the LPDDR host pool the reserve was measured on, so it has no growth."""
    spec = resolve_model("Qwen/Qwen3-0.6B")
    flags = EngineFlags(gpu_memory_utilization=0.6)
    st = explain(spec, GB10, flags, VllmVersion(0, 27, 1), free_bytes=int(114.54 * GiB)).stage
    growth = GiB + int(0.07 * st.weights)  # 1.0 GiB + 7 % of the weights (memory/unified.py)
    assert st.weights == 1_202_585_600 and growth == 1_157_922_816
    assert st.non_torch == int(0.25 * GiB) + growth
    requested = -(-GB10.total_bytes * 6 // 10)  # ceil(130,602,237,952 x 0.6) = 78,361,342,772
    assert requested == 78_361_342_772
    assert st.available_kv == requested - st.weights - st.activation_peak - st.non_torch - st.cudagraph
    h100 = explain(spec, resolve_gpu("h100", GPUS), flags, VllmVersion(0, 27, 1)).stage
    assert h100.non_torch == overheads.NON_TORCH_SINGLE_GPU == int(0.25 * GiB)
    assert unified.profile_growth(GB10, 0) == GiB and unified.profile_growth(GB10, 20 * GiB) == GiB + 1_503_238_553
    assert unified.profile_growth(resolve_gpu("gh200", GPUS), 20 * GiB) == 0


def test_u016_available_kv_and_tokens_as_logged() -> None:
    """field14 U016 prints 69.40 GiB and 649,728 tokens (0.27.1, 0.6 of the 121.69 GiB it printed, Qwen3-0.6B): the
    model left 70.42 GiB and 659,232 tokens before the host's growth was counted; 1.08 GiB less now (1.0 GiB and 7 % of
    1.12 GiB), within 0.1 GiB and 0.2 % of the log (0.05 GiB and 0.1 % when U016 alone set the growth)."""
    (r,) = [r for r in load_records(*RECORD_SETS["field14"]) if r["id"] == "U016"]
    c = compare(r)
    assert c is not None and c.agrees
    assert abs(c.explanation.stage.available_kv / GiB - 69.40) < 0.1
    assert abs(c.explanation.kv_cache_tokens - 649_728) / 649_728 < 0.002
