"""`vllm-plan perf` and `vllm-plan calibrate` through click's CliRunner, with real `vllm bench serve` results
(tests/data/bench_results, sources in SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from recommender.perf_profile import local_calibrations
from tests.conftest import invoke

RESULTS = Path(__file__).resolve().parent / "data" / "bench_results"
L40S_INF = RESULTS / "nerdalert-llama-3.2-3b-4xl40s-inf.json"
L40S_10 = RESULTS / "nerdalert-llama-3.2-3b-4xl40s-10qps.json"
L40S_30 = RESULTS / "nerdalert-llama-3.2-3b-4xl40s-30qps.json"
BENCH_KEYS = (
    "mean_ttft_ms",
    "median_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "median_tpot_ms",
    "p99_tpot_ms",
    "mean_itl_ms",
    "median_itl_ms",
    "p99_itl_ms",
    "mean_e2el_ms",
    "median_e2el_ms",
    "p99_e2el_ms",
    "request_throughput",
    "output_throughput",
    "total_token_throughput",
)


@pytest.fixture(autouse=True)
def no_local_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_PLAN_PERF_LOCAL", "none")


def test_perf_table_names_the_command_load_and_bound() -> None:
    out = invoke(
        [
            "perf",
            "Qwen/Qwen3-8B",
            "--gpu",
            "h100",
            "--input-len",
            "2000",
            "--output-len",
            "256",
            "--max-concurrency",
            "8",
        ]
    ).stdout
    assert "vllm serve Qwen/Qwen3-8B" in out
    assert "2,000 in / 256 out (random), 1,000 prompts, all at once, at most 8 in flight" in out
    assert "TTFT" in out and "TPOT" in out and "Bound by: " in out
    assert "Outputs:" not in out  # 2,256 tokens fit Qwen3-8B's 40,960: nothing capped


def test_outputs_capped_by_max_model_len_are_named() -> None:
    """vLLM caps max_tokens at max_model_len minus the prompt (entrypoints/serve/utils/api_utils.py
    get_max_tokens): 2,000 in / 256 out under --max-model-len 2048 generates at most 48 tokens a request."""
    args = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "2000", "--output-len", "256"]
    out = invoke([*args, "--max-concurrency", "8", "--max-model-len", "2048"]).stdout
    assert "not 256: vLLM caps each request's max_tokens at --max-model-len 2,048 minus its prompt" in out


def test_perf_json_has_the_keys_vllm_bench_serve_writes() -> None:
    args = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "2000", "--output-len", "256", "--format", "json"]
    doc = json.loads(invoke([*args, "--max-concurrency", "16", "--num-prompts", "100"]).stdout)
    for key in BENCH_KEYS:
        assert isinstance(doc[key], float), key
    assert doc["max_concurrency"] == 16 and doc["num_prompts"] == 100 and doc["request_rate"] == "inf"
    assert doc["bound"] in ("bandwidth", "compute", "overhead", "communication", "kv-capacity", "max-num-seqs")
    assert doc["output_throughput_per_gpu"] == pytest.approx(doc["output_throughput"], rel=1e-3)
    assert doc["output_tokens_per_s_per_user"] == pytest.approx(1000 / doc["mean_tpot_ms"], rel=1e-2)
    assert doc["command"][:3] == ["vllm", "serve", "Qwen/Qwen3-8B"]


def test_perf_takes_vllm_serve_flags() -> None:
    base = ["perf", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "h100", "--input-len", "1000", "--output-len", "200"]
    base += ["--max-concurrency", "8", "--num-prompts", "100"]
    tp2 = json.loads(invoke([*base, "-tp", "2", "--max-model-len", "8k", "--format", "json"]).stdout)
    tp4 = json.loads(invoke([*base, "-tp", "4", "--max-model-len", "8k", "--format", "json"]).stdout)
    assert tp2["command"][3:] == ["--tensor-parallel-size", "2", "--max-model-len", "8000"]
    assert tp4["mean_tpot_ms"] < tp2["mean_tpot_ms"]


def test_perf_request_rate() -> None:
    args = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "500", "--output-len", "100", "--format", "json"]
    doc = json.loads(invoke([*args, "--request-rate", "2", "--num-prompts", "200"]).stdout)
    assert doc["request_rate"] == 2.0 and doc["bound"] == "arrival-rate"
    assert doc["request_throughput"] == pytest.approx(2.0, rel=0.25)


def test_sweep_gives_a_curve() -> None:
    args = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "1000", "--output-len", "200", "--sweep", "1,4,32"]
    doc = json.loads(invoke([*args, "--num-prompts", "200", "--format", "json"]).stdout)
    conc = [p["max_concurrency"] for p in doc["sweep"]]
    tput = [p["output_throughput"] for p in doc["sweep"]]
    assert conc == [1, 4, 32] and tput == sorted(tput)
    table = invoke([*args, "--num-prompts", "100"]).stdout
    assert "conc" in table and "per user" in table


def test_compare_reads_the_load_from_a_real_result() -> None:
    out = invoke(["perf", "--gpu", "l40s", "--compare", str(L40S_10), "-dp", "4"]).stdout
    # 300 prompts of 999 tokens in, 270 out, at 10 req/s (the file's totals and traffic)
    assert "meta-llama/Llama-3.2-3B-Instruct on NVIDIA L40S: 999 in / 270 out (random), 300 prompts, 10 req/s" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    assert rows["output_throughput"][2] == "2,249.25"  # measured, as the file says
    doc = json.loads(
        invoke(["perf", "--gpu", "l40s", "--compare", str(L40S_10), "-dp", "4", "--format", "json"]).stdout
    )
    assert doc["measured"]["mean_tpot_ms"] == pytest.approx(13.578, rel=1e-4)
    # at 10 req/s the 4 replicas keep up: throughput follows the Poisson arrivals (300 of them: +-15%)
    assert doc["predicted"]["request_throughput"] == pytest.approx(9.0, rel=0.15)
    assert doc["predicted"]["bound"] == "arrival-rate"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--output-len", "10"], "--input-len and --output-len"),
        (["perf", "Qwen/Qwen3-8B", "--gpu", "nosuchgpu", "--input-len", "1", "--output-len", "1"], "unknown GPU"),
        (
            ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "1", "--output-len", "1", "--request-rate", "-2"],
            "--request-rate",
        ),
        (
            ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "1", "--output-len", "1", "--sweep", "a"],
            "--sweep",
        ),
        (["perf", "--gpu", "h100", "--compare", "/nonexistent/result.json"], "cannot read"),
        (["perf", "--gpu", "l40s", "--compare", str(L40S_10), "--input-len", "5"], "reads the load"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = invoke(args, exit_code=2)
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_flags_that_do_not_start_exit_3() -> None:
    args = ["perf", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "l4", "--input-len", "10", "--output-len", "10"]
    assert "would not start" in invoke(args, exit_code=3).stderr
    # 140 GB of bf16 weights on one 24 GB L4 start at no context: no --max-model-len hint
    assert "--max-model-len" not in invoke(args, exit_code=3).stderr


def test_a_default_context_that_does_not_start_names_the_one_the_load_needs() -> None:
    # Qwen3-32B (bf16, 61 GiB) on one H100: its default 40,960-token context needs 10.0 GiB of KV where 7.91 GiB are
    # left (vLLM's own estimate: 32,384 tokens fit), so vLLM refuses to start; a benchmark of 2,000 + 500 tokens needs
    # a --max-model-len of 2,500, which starts
    load = ["--input-len", "2000", "--output-len", "500", "--max-concurrency", "8", "--num-prompts", "16"]
    args = ["perf", "Qwen/Qwen3-32B", "--gpu", "h100", *load]
    err = invoke(args, exit_code=3).stderr
    assert "estimated maximum model length is 32384" in err
    assert err.strip().endswith("(the benchmark's requests need 2,500 tokens: add --max-model-len 2500 and it starts)")
    assert len(err.strip().splitlines()) == 1
    invoke([*args, "--max-model-len", "2500"], exit_code=0)
    # a context the user chose is theirs: the refusal says why, with no hint
    assert "add --max-model-len" not in invoke([*args, "--max-model-len", "40960"], exit_code=3).stderr


def test_malformed_result_files(tmp_path: Path) -> None:
    cases = {
        "notjson.json": "{not json",
        "list.json": "[1, 2]",
        "nomodel.json": json.dumps({"completed": 3}),
        "badrate.json": json.dumps(
            {**json.loads(L40S_10.read_text()), "request_rate": "fast"},
        ),
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        err = invoke(["perf", "--gpu", "l40s", "--compare", str(path)], exit_code=2).stderr
        assert str(path) in err or "not JSON" in err, err


def test_calibrate_writes_a_local_profile_that_perf_then_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "cfg" / "vllm-plan" / "perf-local.yaml"
    monkeypatch.setenv("VLLM_PLAN_PERF_LOCAL", str(local))
    compare = ["perf", "--gpu", "l40s", "--compare", str(L40S_30), "-dp", "4", "--format", "json"]
    before = json.loads(invoke(compare).stdout)["predicted"]
    out = invoke(["calibrate", str(L40S_10), "--gpu", "l40s", "-dp", "4"]).stdout
    assert "NVIDIA L40S: bandwidth x" in out and f"wrote {local}" in out
    doc = yaml.safe_load(local.read_text())
    assert set(doc["gpus"]) == {"l40s"}
    assert doc["gpus"]["l40s"]["fitted_on"] == [str(L40S_10)]
    eff = local_calibrations(local)["l40s"]
    assert (eff.bandwidth, eff.compute, eff.overhead) != (1.0, 1.0, 1.0)
    after = json.loads(invoke(compare).stdout)["predicted"]
    assert after["mean_tpot_ms"] != before["mean_tpot_ms"]
    ignored = json.loads(invoke([*compare, "--no-local-calibration"]).stdout)["predicted"]
    assert ignored["mean_tpot_ms"] == before["mean_tpot_ms"]


def test_calibrate_dry_run_and_bad_files_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "perf-local.yaml"
    monkeypatch.setenv("VLLM_PLAN_PERF_LOCAL", str(local))
    doc = json.loads(
        invoke(["calibrate", str(L40S_10), "--gpu", "l40s", "-dp", "4", "--dry-run", "--format", "json"]).stdout
    )
    assert doc["would_write_to"] == str(local) and not local.exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    invoke(["calibrate", str(L40S_10), str(bad), "--gpu", "l40s"], exit_code=2)
    assert not local.exists()


def test_a_malformed_local_profile_is_an_input_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    local = tmp_path / "perf-local.yaml"
    local.write_text("gpus:\n  h100-sxm:\n    efficiency: {bandwidth: fast}\n")
    monkeypatch.setenv("VLLM_PLAN_PERF_LOCAL", str(local))
    err = invoke(
        ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "1", "--output-len", "2"], exit_code=2
    ).stderr
    assert "efficiencies must be numbers" in err
    local.write_bytes(b"\xff\xfe binary")  # unreadable: one line naming the file as the local calibration
    err = invoke(
        ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "1", "--output-len", "2"], exit_code=2
    ).stderr
    assert err.startswith(f"Error: local calibration file {local}: not UTF-8 text") and err.count("\n") == 1, err
    assert "VLLM_PLAN_PERF_LOCAL=none disables it" in err


V0_RUN = [
    "perf",
    "Qwen/Qwen2.5-7B-Instruct",
    "--gpu",
    "a100-80gb",
    "--vllm-version",
    "0.6.3",
    "--max-model-len",
    "8192",
]
V0_LOAD = ["--input-len", "2000", "--output-len", "200", "--max-concurrency", "32", "--num-prompts", "200"]


def _v0(*extra: str) -> dict[str, object]:
    doc: dict[str, object] = json.loads(invoke([*V0_RUN, *V0_LOAD, *extra, "--format", "json"]).stdout)
    return doc


def test_v0_chunked_prefill_reaches_the_replay() -> None:
    """vLLM 0.6's V0 engine prefills whole prompts first unless --enable-chunked-prefill (the default is off up to a
    32K context): the option, and the same flag inside a `-- vllm serve` command, change the replayed schedule."""
    default, off, on = _v0(), _v0("--no-enable-chunked-prefill"), _v0("--enable-chunked-prefill")
    assert default["mean_ttft_ms"] == off["mean_ttft_ms"] and default["mean_itl_ms"] == off["mean_itl_ms"]
    assert on["mean_ttft_ms"] != off["mean_ttft_ms"]
    assert on["command"][-1] == "--enable-chunked-prefill" and off["command"][-1] == "--no-enable-chunked-prefill"
    cmd = ["--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192", "--enable-chunked-prefill"]
    args = ["perf", "--gpu", "a100-80gb", "--vllm-version", "0.6.3", *V0_LOAD, "--format", "json", *cmd]
    assert json.loads(invoke(args).stdout)["mean_ttft_ms"] == on["mean_ttft_ms"]


def test_v0_max_num_batched_tokens_reaches_the_replay() -> None:
    """With chunked prefill the token budget sets how much of a prompt one step prefills (V0 default 512 in 0.6)."""
    small = _v0("--enable-chunked-prefill", "--max-num-batched-tokens", "512")
    large = _v0("--enable-chunked-prefill", "--max-num-batched-tokens", "8192")
    assert small["command"][-3:] == ["--max-num-batched-tokens", "512", "--enable-chunked-prefill"]
    assert small["mean_ttft_ms"] != large["mean_ttft_ms"]


def test_budget_below_context_without_chunked_prefill_exits_3() -> None:
    """SchedulerConfig refuses a token budget below --max-model-len without chunked prefill, in V0 and V1."""
    err = invoke([*V0_RUN, *V0_LOAD, "--max-num-batched-tokens", "4096"], exit_code=3).stderr
    assert "max_num_batched_tokens (4096) is smaller than max_model_len (8192)" in err
    v1 = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-model-len", "8192", "--max-num-batched-tokens", "4096"]
    invoke([*v1, *V0_LOAD, "--no-enable-chunked-prefill"], exit_code=3)
    invoke([*v1, *V0_LOAD])  # chunked prefill is V1's default: the same budget starts


def test_budget_below_max_num_seqs_does_not_start() -> None:
    """config/scheduler.py:331 (and V0 0.6.3's SchedulerConfig._verify_args): a token budget below --max-num-seqs is
    a startup error; vLLM's own default budget clamps max_num_seqs instead (V1: min(max_num_seqs, budget))."""
    explain = ["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--max-num-batched-tokens", "256", "--format", "json"]
    bad = json.loads(invoke([*explain, "--max-num-seqs", "512"]).stdout)
    assert bad["fits"] is False and bad["error_kinds"] == ["batched-tokens-below-max-num-seqs"]
    assert bad["errors"][0] == "max_num_batched_tokens (256) must be greater than or equal to max_num_seqs (512)."
    assert json.loads(invoke(explain).stdout)["fits"] is True  # max_num_seqs defaults to min(1024, 256)
    v0 = ["perf", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "a100-80gb", "--vllm-version", "0.6.3"]
    v0 += ["--max-model-len", "65536"]
    err = invoke([*v0, *V0_LOAD, "--max-num-seqs", "1024"], exit_code=3).stderr  # chunked by default above 32K: 512
    assert "max_num_batched_tokens (512) must be greater than or equal to max_num_seqs (1024)" in err


GPT_OSS_H100 = ["perf", "openai/gpt-oss-120b", "--gpu", "h100-sxm", "--max-model-len", "32768", "--input-len", "1000"]
GPT_OSS_H100 += ["--output-len", "200", "--max-concurrency", "16", "--num-prompts", "100"]


def test_a_startup_that_depends_on_the_sampler_path_is_answered_with_a_note() -> None:
    """gpt-oss-120b on one H100 at vLLM 0.10.2 (gpustack ran it, field points F018-F028): the sort-path sampler's
    1,024 x 201,088 logits at 36 B leave the KV cache no room; FlashInfer's sampler, V1's default on CUDA where
    flashinfer is installed from 0.7 to 0.11.0, takes 13.5 B: (36 - 13.5) x 1,024 x 201,088 = 4.63e9 bytes less.
    perf answers for that engine and says so; from 0.11.1 (opt-in) it refuses as before."""
    doc = json.loads(invoke([*GPT_OSS_H100, "--vllm-version", "0.10.2", "--format", "json"]).stdout)
    assert doc["mean_tpot_ms"] > 0
    assert doc["notes"][0].startswith("vLLM 0.10.2 starts this only where it samples with FlashInfer")
    assert "No available memory for the cache blocks" in doc["notes"][0]
    table = invoke([*GPT_OSS_H100, "--vllm-version", "0.10.2"]).stdout
    assert "\nNote: vLLM 0.10.2 starts this only where it samples with FlashInfer" in table
    invoke([*GPT_OSS_H100, "--vllm-version", "0.11.1"], exit_code=3)
    plain = json.loads(invoke(["perf", "Qwen/Qwen3-8B", "--gpu", "h100", *GPT_OSS_H100[4:], "--format", "json"]).stdout)
    assert "notes" not in plain  # a configuration that starts either way has no note


def test_flashinfer_sampler_window() -> None:
    """Only V1 on NVIDIA GPUs of 0.7-0.11.0, and only when the flags leave the sampler open."""
    from recommender.catalog import load_gpus
    from recommender.memory.budget import explain
    from recommender.memory.engine import EngineFlags, VllmVersion
    from recommender.memory.overheads import sampler_bytes_per_logit
    from recommender.perf.predict import flashinfer_by_default
    from recommender.sources.resolve import resolve_model

    gpus = {g.key: g for g in load_gpus()}
    model, v = resolve_model("openai/gpt-oss-120b"), VllmVersion.parse
    assert flashinfer_by_default(model, gpus["h100-sxm"], EngineFlags(), v("0.10.2"))
    assert not flashinfer_by_default(model, gpus["h100-sxm"], EngineFlags(), v("0.11.1"))
    assert not flashinfer_by_default(model, gpus["mi300x"], EngineFlags(), v("0.10.2"))  # no FlashInfer on ROCm
    assert not flashinfer_by_default(model, gpus["h100-sxm"], EngineFlags(use_v1=False), v("0.10.2"))  # V0
    assert not flashinfer_by_default(model, gpus["h100-sxm"], EngineFlags(flashinfer_sampler=False), v("0.10.2"))
    assert (sampler_bytes_per_logit((0, 10)), sampler_bytes_per_logit((0, 10), flashinfer=True)) == (36.0, 13.5)
    flags = EngineFlags(max_model_len=32768)
    sort = explain(model, gpus["h100-sxm"], flags, v("0.10.2"))
    flash = explain(model, gpus["h100-sxm"], EngineFlags(max_model_len=32768, flashinfer_sampler=True), v("0.10.2"))
    assert not sort.fits and flash.fits
    assert sort.stage.activation_peak - flash.stage.activation_peak == (36 - 13.5) * 1024 * 201_088


def test_poisson_run_spans_the_prompts_over_the_rate_from_vllm_0_10() -> None:
    # vllm bench serve of 0.10.0+ rescales its gamma delays so the 50th request goes out at 50 / 2 = 25 s; a run of
    # ten-token outputs ends a fraction of a second later. 0.9's client sends one draw after another (about 25 s, not
    # exactly: the draws of seed 0 sum to less here).
    args = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "100", "--output-len", "10"]
    args += ["--request-rate", "2", "--num-prompts", "50", "--format", "json"]
    new = invoke(args)
    old = invoke([*args, "--vllm-version", "0.9.2"])
    assert new.exit_code == 0 and old.exit_code == 0, new.output + old.output
    new_s, old_s = json.loads(new.output)["duration"], json.loads(old.output)["duration"]
    assert 25.0 < new_s < 25.5
    assert abs(old_s - new_s) > 1.0
