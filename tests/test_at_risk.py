"""Startups the model cannot call safe: a hybrid model's Mamba state blocks against max_num_seqs (memory/mamba_seqs.py)
and an integrated GPU whose host holds part of its memory (memory/unified.py); numbers worked by hand below."""

from __future__ import annotations

import json
from dataclasses import replace

from click.testing import CliRunner

from benchmarks.fidelity import RECORD_SETS, compare, load_records
from recommender.catalog import load_gpus
from recommender.check.evaluate import startup_fixes
from recommender.cli import cli
from recommender.gpu_names import resolve_gpu
from recommender.memory import mamba_seqs, unified
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.planner.evaluation import evaluate_candidate, probe_flags
from recommender.planner.types import Candidate, Evaluation, Hardware, Target, WeightOption
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

MAXQ = resolve_gpu("rtx-pro-6000-maxq", load_gpus())
GB10 = resolve_gpu("gb10", load_gpus())
V26 = VllmVersion(0, 26)


def _field4(record_id: str) -> dict[str, object]:
    (r,) = [r for r in load_records(*RECORD_SETS["field4"]) if r["id"] == record_id]
    return r


def test_mamba_blocks_error_is_vllms_text_with_the_logged_counts() -> None:
    # field4 J050 / J051 (vllm-project/recipes#831): vLLM's own message, reproduced from the two counts alone.
    for record_id, blocks in (("J050", 939), ("J051", 556)):
        r = _field4(record_id)
        issue = mamba_seqs.exceeds_mamba_blocks(1024, blocks)
        assert issue.fatal and issue.message == r["error"].removeprefix("ValueError: ")


def test_hybrid_page_and_the_check_on_qwen38_bf16() -> None:
    """Qwen3.8-27B (48 Gated DeltaNet + 16 attention layers) on one RTX PRO 6000 Max-Q at 0.95, vLLM's defaults for a
    96 GB card (1,024 sequences). A GDN layer's state: conv 3 x (2 x 16 x 128 + 48 x 128 = 10,240) x 2 B = 61,440 B,
    SSM 48 x 128 x 128 x 4 B (float32) = 3,145,728 B: 3,207,168 B. An attention token: 4 KV heads x (256 + 256) x 2 B
    = 4,096 B, so the attention block grows to 16 x ceil(3,207,168 / (16 x 4,096)) = 784 tokens, a page of 3,211,264 B;
    four groups of 16 layers share one block of 16 pages = 51,380,224 B. 721 such blocks fit the predicted KV memory
    (556 logged), fewer than 1,024 sequences: vLLM refuses to start."""
    spec = resolve_model("Qwen/Qwen3.8-27B")
    e = explain(spec, MAXQ, EngineFlags(gpu_memory_utilization=0.95), V26)
    assert e.block_size == 784 and e.stage.layout.bytes_per_block == 16 * 784 * 4096 == 51_380_224
    assert e.max_num_seqs == 1024 and e.num_gpu_blocks == e.stage.available_kv // 51_380_224 < 1024
    issue = e.issue(IssueKind.MAMBA_BLOCKS)
    assert issue is not None and issue.count == 1024 and issue.requested == e.num_gpu_blocks and not e.fits


def test_a_pool_just_above_max_num_seqs_is_at_risk_and_the_release_and_eager_gate_it() -> None:
    # FP8 Qwen3.8-27B at the default 0.92: ~1,120 blocks predicted for 1,024 sequences (939 logged, J050): less than
    # 25 % to spare, so at risk, not a start; --enforce-eager captures no FULL graph, and 0.19 had no such check.
    spec = resolve_model("Qwen/Qwen3.8-27B-FP8")
    e = explain(spec, MAXQ, EngineFlags(), V26)
    assert 1024 <= e.num_gpu_blocks < 1024 / 0.75 and e.fits and e.at_risk
    assert e.has(IssueKind.MAMBA_BLOCKS_MARGIN) and f"--max-num-seqs {int(e.num_gpu_blocks * 0.75)}" in e.warnings[-1]
    assert not explain(spec, MAXQ, EngineFlags(enforce_eager=True), V26).at_risk
    assert not explain(spec, MAXQ, EngineFlags(), VllmVersion(0, 19)).has(IssueKind.MAMBA_BLOCKS_MARGIN)
    safe = explain(spec, MAXQ, EngineFlags(max_num_seqs=mamba_seqs.safe_max_num_seqs(e.num_gpu_blocks)), V26)
    assert safe.fits and not safe.at_risk


def test_planner_lowers_max_num_seqs_below_the_mamba_blocks() -> None:
    # The BF16 model at its full context on the Max-Q: the release default of 1,024 sequences would be refused; the
    # plan keeps a quarter of the predicted pool spare (540 of 721 would also pass the 556 logged).
    spec = resolve_model("Qwen/Qwen3.8-27B")
    c = Candidate(WeightOption(spec, None, "BF16", 0), "auto", 1, 1)
    hw = Hardware(MAXQ, 1)
    target = Target(context=262_144)
    v = evaluate_candidate(c, target, hw, V26)
    assert isinstance(v, Evaluation) and v.feasible, v.reason
    e = v.explanation
    assert e.max_num_seqs <= mamba_seqs.safe_max_num_seqs(e.num_gpu_blocks) and e.max_num_seqs < 1024
    assert e.fits and not e.at_risk
    assert probe_flags(c, target, hw, V26).max_num_seqs == 1024


def test_gb10_startup_check_takes_the_hosts_share() -> None:
    """DGX Spark: 121.63 GiB to CUDA (124,552 MiB), 12 GiB held by the host at startup, so 109.63 GiB free. The default
    0.92 asks for ceil(0.92 x 121.63) = 111.9 GiB: refused with vLLM's message (field5 K017); 0.85 asks for 103.39 GiB,
    leaving 18.2 GiB, above the 16 GiB share: starts (K018); 0.88 leaves 14.6 GiB: passes the check, at risk."""
    spec = resolve_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4")
    flags = EngineFlags(max_model_len=131_072, max_num_seqs=4)
    assert unified.startup_free(GB10) == GB10.total_bytes - 12 * GiB
    k017 = explain(spec, GB10, replace(flags, gpu_memory_utilization=0.92), VllmVersion(0, 24))
    issue = k017.issue(IssueKind.FREE_BELOW_BUDGET)
    assert issue is not None and not k017.fits
    assert issue.message.startswith("Free memory on device cuda:0 (109.63/121.63 GiB) on startup is less than desired")
    k018 = explain(spec, GB10, replace(flags, gpu_memory_utilization=0.85), VllmVersion(0, 24))
    assert k018.fits and not k018.at_risk
    close = explain(spec, GB10, replace(flags, gpu_memory_utilization=0.88), VllmVersion(0, 24))
    assert close.fits and close.at_risk and close.has(IssueKind.UNIFIED_MEMORY_HEADROOM)
    stated = explain(
        spec, GB10, replace(flags, gpu_memory_utilization=0.92), VllmVersion(0, 24), free_bytes=int(118 * GiB)
    )
    assert stated.fits and not stated.at_risk  # the machine's own free memory replaces the reserve
    assert unified.max_utilization(GB10) == 0.86 and unified.host_reserve(resolve_gpu("gh200", load_gpus())) is None


def test_fidelity_counts_at_risk_as_neither_safe_nor_a_match() -> None:
    j050 = compare(_field4("J050"))
    assert j050 is not None and j050.predicted == "risk" and not j050.agrees


def test_check_fixes_name_the_flag_that_clears_the_risk() -> None:
    # The fix each new class gets in `explain` / `check`: fewer sequences for the Mamba pool, a lower utilization for
    # the host's share of a GB10 (0.86: (121.63 - 16) / 121.63 rounded down).
    qwen = resolve_model("Qwen/Qwen3.8-27B")
    flags = EngineFlags(gpu_memory_utilization=0.95)
    e = explain(qwen, MAXQ, flags, V26)
    (fix, *_) = startup_fixes(qwen, MAXQ, flags, V26, e, free_bytes=None)
    assert fix.startswith(f"lower --max-num-seqs to {mamba_seqs.safe_max_num_seqs(e.num_gpu_blocks)} ")
    nemotron = resolve_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4")
    flags = EngineFlags(max_model_len=131_072, max_num_seqs=4)
    e = explain(nemotron, GB10, flags, VllmVersion(0, 24))
    (fix, *_) = startup_fixes(nemotron, GB10, flags, VllmVersion(0, 24), e, free_bytes=None)
    assert fix.startswith("lower --gpu-memory-utilization to 0.86 ")


def test_before_the_check_the_shortage_is_the_capture_assertion() -> None:
    """vLLM 0.15-0.19 (memory/mamba_seqs.py): Qwen3.6-27B-FP8 on an L40S at 65,536 tokens, the small-card defaults
    (256 sequences). ~9.6 GiB of KV / 51,380,224 B a block = 200 blocks; the FULL decode graph pads its batch to
    min(256, 512) = 256 > 200: causal_conv1d_update's assertion. 128 sequences (<= 0.75 x 200 = 150) start; 0.14 is
    before the reports and is not judged."""
    spec = resolve_model("Qwen/Qwen3.6-27B-FP8")
    l40s = resolve_gpu("l40s", load_gpus())
    flags = EngineFlags(max_model_len=65_536)
    e = explain(spec, l40s, flags, VllmVersion(0, 17))
    issue = e.issue(IssueKind.MAMBA_BLOCKS)
    assert e.max_num_seqs == 256 and e.num_gpu_blocks < 256 and issue is not None and not e.fits
    assert issue.message.startswith("AssertionError: assert num_cache_lines >= batch") and issue.count == 256
    assert explain(spec, l40s, replace(flags, max_num_seqs=128), VllmVersion(0, 17)).fits
    assert not explain(spec, l40s, flags, VllmVersion(0, 14)).has(IssueKind.MAMBA_BLOCKS)


def test_explain_json_says_at_risk() -> None:
    """The prediction document carries the verdict the text prints as "AT RISK" (Nemotron-3-Super NVFP4 on one DGX
    Spark at 0.89: 13.4 GiB left to the host, under the 16 GiB memory/unified.py keeps), and false otherwise."""
    import json

    from .conftest import invoke

    args = ["explain", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", "--gpu", "gb10", "--max-model-len", "131072"]
    args += ["--max-num-seqs", "4", "--vllm-version", "0.24.0", "--format", "json", "--gpu-memory-utilization"]
    risky = json.loads(invoke([*args, "0.89"]).stdout)
    assert risky["fits"] is True and risky["at_risk"] is True
    safe = json.loads(invoke([*args, "0.85"]).stdout)
    assert safe["fits"] is True and safe["at_risk"] is False


def test_check_json_tells_an_at_risk_failure_from_a_crash() -> None:
    """check fails both, but a script reading `failure_kinds` can tell a margin inside the model's uncertainty
    ("at-risk": the DGX Spark at 0.89) from a predicted crash ("startup": at 0.95 vLLM's free-memory check fails)."""
    import json

    from .conftest import invoke

    serve = ["vllm", "serve", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", "--max-model-len", "131072"]
    args = ["check", "--gpu", "gb10", "--vllm-version", "0.24.0", "--format", "json", "--", *serve, "--max-num-seqs"]
    kinds = {}
    for util in ("0.89", "0.95"):
        out = json.loads(invoke([*args, "4", "--gpu-memory-utilization", util], exit_code=1).stdout)
        server = out[0] if isinstance(out, list) else out["servers"][0]
        kinds[util] = server["failure_kinds"]
    assert kinds == {"0.89": ["at-risk"], "0.95": ["startup"]}


# Qwen3.8-27B-FP8 on one RTX PRO 6000 Max-Q with vLLM 0.26's defaults: 1,122 Mamba blocks predicted for 1,024
# sequences (tests/test_at_risk.py works the figures), within the ~25 % uncertainty: the table says AT RISK.
AT_RISK = ["explain", "Qwen/Qwen3.8-27B-FP8", "--gpu", "rtx-pro-6000-maxq", "--vllm-version", "0.26"]


def test_explain_json_says_at_risk_as_the_table_does() -> None:
    table = CliRunner().invoke(cli, AT_RISK)
    assert table.exit_code == 0 and "Verdict: AT RISK" in table.output
    result = CliRunner().invoke(cli, [*AT_RISK, "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # `fits` alone (true: no startup error) let a script gate this as a start
    assert doc["fits"] is True and doc["at_risk"] is True and doc["verdict"] == "at-risk"
    assert doc["risk_kinds"] == ["mamba-blocks-margin"] and doc["error_kinds"] == []


def test_explain_json_verdict_for_a_start_and_a_failure() -> None:
    starts = json.loads(
        CliRunner().invoke(cli, ["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--format", "json"]).stdout
    )
    assert (starts["verdict"], starts["at_risk"], starts["risk_kinds"]) == ("starts", False, [])
    args = ["explain", "Qwen/Qwen3-32B", "--gpu", "rtx4090", "--format", "json"]
    fails = json.loads(CliRunner().invoke(cli, args).stdout)
    assert (fails["verdict"], fails["fits"], fails["at_risk"]) == ("fails", False, False) and fails["error_kinds"]


def test_fixes_on_a_dgx_spark_offer_no_second_gpu_in_the_box() -> None:
    # Nemotron-3-Super NVFP4 at 0.88 on a GB10 (tests/test_at_risk.py): the host's share is the fix; "-tp 2" was too.
    args = ["explain", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", "--gpu", "NVIDIA GB10", "--vllm-version"]
    args += ["0.24", "--max-model-len", "131072", "--max-num-seqs", "4", "--gpu-memory-utilization", "0.88"]
    doc = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)
    assert doc["verdict"] == "at-risk" and doc["fixes"][0].startswith("lower --gpu-memory-utilization to 0.86")
    assert not any("-tp " in fix for fix in doc["fixes"]), doc["fixes"]
