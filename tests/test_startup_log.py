"""Reading vLLM server logs (recommender/startup_log.py) and `explain --log FILE`.

The parser is checked against the real log lines kept with every calibration and field record (their `raw`
excerpts, each line as vLLM printed it, joined by ' | ' by the collector): the figures it reads must be the
figures the collector read by hand. Then a few whole logs written line by line as vLLM's releases print them
(0.6.4's V0, 0.10's V1, 0.22's V1 with a fused-MoE config path), and the CLI's refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.fidelity import load_records
from recommender.startup_log import read_startup_log
from tests.conftest import CALIBRATION, invoke

RECORDS = load_records(*sorted(CALIBRATION.glob("vllm_startup_logs*.jsonl")))
# the excerpts that hold two values of one figure, the first of which is not the record's: C074 quotes the block
# count before and after the pull request it comes from (7449, then 7351); H007 captured graphs twice (0.3 GiB
# for the first engine, 0.2 for the one the record is about)
TWO_VALUES = {("C074", "num_gpu_blocks"), ("H007", "cudagraph_gib")}


def _excerpt(record: dict[str, object]) -> str:
    return str(record.get("raw") or "").replace(" | ", "\n")


@pytest.mark.parametrize(
    ("figure", "field"),
    [
        ("weights_gib", "weights_gib"),
        ("available_kv_gib", "kv_available_gib"),
        ("kv_cache_tokens", "kv_cache_tokens"),
        ("num_gpu_blocks", "num_gpu_blocks"),
        ("max_concurrency", "max_concurrency"),
        ("cudagraph_gib", "cudagraph_gib"),
    ],
)
def test_figures_read_from_real_excerpts_are_the_collectors(figure: str, field: str) -> None:
    read = 0
    for r in RECORDS:
        value = getattr(read_startup_log(_excerpt(r)).figures, figure)
        if value is None or (r["id"], field) in TWO_VALUES:
            continue
        if field == "cudagraph_gib" and "Estimated CUDA graph memory" in _excerpt(r):
            continue  # the collectors took the capture's "took X GiB"; from 0.21 the parser reads the estimate
        read += 1
        assert r.get(field) is not None and value == pytest.approx(r[field], rel=0.011, abs=0.011), (r["id"], value)
    assert read >= 25, read  # each figure is printed by many of the records' releases


def test_from_021_the_cuda_graph_figure_is_the_estimate_the_budget_holds() -> None:
    text = (
        "INFO [gpu_model_runner.py:6042] Estimated CUDA graph memory: 0.88 GiB total\n"
        "INFO [gpu_model_runner.py:4600] Graph capturing finished in 9 secs, took 0.95 GiB\n"
    )
    assert read_startup_log(text).figures.cudagraph_gib == 0.88


def test_arguments_read_from_real_excerpts_match_the_records() -> None:
    compared = 0
    for r in RECORDS:
        log = read_startup_log(_excerpt(r))
        for name, field in (
            ("tensor_parallel_size", "tp"),
            ("max_num_seqs", "max_num_seqs"),
            ("max_num_batched_tokens", "max_num_batched_tokens"),
            ("gpu_memory_utilization", "gpu_memory_utilization"),
        ):
            if (value := log.option(name)) is not None and r.get(field) is not None:
                compared += 1
                # V0's budget line prints the utilisation to two places (U012: Unsloth's 0.7828 shows as 0.78)
                places = 0.005 if name == "gpu_memory_utilization" else 0.0
                assert float(value) == pytest.approx(float(r[field]), abs=places), (r["id"], name, value, r[field])
    assert compared >= 150, compared


V0_LOG = """\
INFO 12-01 10:00:00 api_server.py:585] vLLM API server version 0.6.4.post1
INFO 12-01 10:00:00 api_server.py:586] args: Namespace(host=None, port=8000, model='microsoft/phi-1_5', \
tokenizer=None, dtype='auto', max_model_len=None, tensor_parallel_size=1, pipeline_parallel_size=1, \
gpu_memory_utilization=0.9, max_num_seqs=256, quantization=None, enforce_eager=False, kv_cache_dtype='auto')
INFO 12-01 10:00:05 llm_engine.py:249] Initializing an LLM engine (v0.6.4.post1) with config: \
model='microsoft/phi-1_5', speculative_config=None, tokenizer='microsoft/phi-1_5', dtype=torch.float16, \
max_seq_len=2048, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=1, \
pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, \
kv_cache_dtype=auto, device_config=cuda, seed=0
INFO 12-01 10:00:20 model_runner.py:1077] Loading model weights took 2.6419 GB
INFO 12-01 10:00:21 worker.py:232] Memory profiling results: total_gpu_memory=7.92GiB \
initial_memory_usage=3.09GiB peak_torch_memory=3.12GiB memory_usage_post_profile=3.12GiB \
non_torch_memory=0.47GiB kv_cache_size=3.54GiB gpu_memory_utilization=0.90
INFO 12-01 10:00:21 gpu_executor.py:113] # GPU blocks: 1207, # CPU blocks: 1365
INFO 12-01 10:00:21 gpu_executor.py:117] Maximum concurrency for 2048 tokens per request: 9.43x
INFO 12-01 10:00:42 model_runner.py:1527] Graph capturing finished in 21 secs, took 0.54 GiB
INFO 12-01 10:00:43 launcher.py:19] Available routes are:
INFO:     Started server process [1]
INFO:     Application startup complete.
"""


def test_a_v0_log_names_release_engine_model_options_and_figures() -> None:
    log = read_startup_log(V0_LOG)
    assert (log.version, log.engine, log.model) == ("0.6.4.post1", "V0", "microsoft/phi-1_5")
    assert log.option("max_model_len") == "2048"  # resolved on the config line; the Namespace's None is skipped
    assert log.option("gpu_memory_utilization") == "0.9"  # the argument, before the profiling line's 0.90
    assert log.option("quantization") is None
    assert log.total_gib == 7.92 and log.device_names == ()
    f = log.figures
    assert (f.weights_gib, f.available_kv_gib, f.num_gpu_blocks, f.max_concurrency) == (2.6419, 3.54, 1207, 9.43)
    assert (f.concurrency_tokens, f.cudagraph_gib, f.kv_cache_tokens) == (2048, 0.54, None)
    assert log.started and not log.failed


V1_FAILED_LOG = """\
\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO 08-20 09:00:00 [api_server.py:1805] vLLM API server version 0.10.1.1
(APIServer pid=1) INFO 08-20 09:00:00 [utils.py:326] non-default args: {'model_tag': 'Qwen/Qwen3-8B', \
'model': 'Qwen/Qwen3-8B', 'max_model_len': 32768, 'gpu_memory_utilization': 0.95, 'kv_cache_dtype': 'fp8', \
'served_model_name': ['qwen'], 'enable_expert_parallel': False}
(EngineCore_0 pid=2) INFO 08-20 09:00:05 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with config: \
model='Qwen/Qwen3-8B', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, \
pipeline_parallel_size=1, data_parallel_size=1, quantization=None, enforce_eager=False, kv_cache_dtype=fp8
(EngineCore_0 pid=2) INFO 08-20 09:00:30 [gpu_model_runner.py:1892] Model loading took 15.27 GiB and 20.1 seconds
(EngineCore_0 pid=2) ERROR 08-20 09:00:40 [core.py:700] ValueError: To serve at least one request with the \
models's max seq len (32768), (4.50 GiB KV cache is needed, which is larger than the available KV cache memory \
(1.20 GiB). Based on the available memory, the estimated maximum model length is 8736.
"""


def test_a_v1_failed_log_reads_its_arguments_and_error() -> None:
    log = read_startup_log(V1_FAILED_LOG)
    assert (log.version, log.engine, log.model) == ("0.10.1.1", "V1", "Qwen/Qwen3-8B")
    assert log.option("gpu_memory_utilization") == "0.95" and log.option("kv_cache_dtype") == "fp8"
    assert log.option("enable_expert_parallel") == "False"
    assert log.failed and log.error is not None and log.error.startswith("ValueError: To serve at least one")
    assert log.figures.weights_gib == 15.27


def test_device_names_from_a_fused_moe_config_path_and_collect_env() -> None:
    text = (
        "WARNING [fused_moe.py:727] Using default MoE config. Config file not found at /usr/lib/python3/vllm/model_"
        "executor/layers/fused_moe/configs/E=128,N=768,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8.json\n"
        "GPU models and configuration:\nGPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1234)\n"
        "|   1  NVIDIA GeForce RTX 4090        Off |   00000000:01:00.0 Off |                  Off |\n"
    )
    assert read_startup_log(text).device_names == (
        "NVIDIA H100 80GB HBM3",
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA GeForce RTX 4090",
    )


def _write(tmp_path: Path, text: str | bytes, name: str = "server.log") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def test_explain_log_predicts_the_logged_startup_and_compares(tmp_path: Path) -> None:
    out = invoke(["explain", "--log", str(_write(tmp_path, V0_LOG)), "--gpu", "rtx4060ti-8gb"]).stdout
    assert "microsoft/phi-1_5 on NVIDIA GeForce RTX 4060 Ti" in out and "vLLM 0.6.4" in out
    assert "max_model_len 2,048" in out and "[" in out
    section = out[out.index("Compared with the log") :]
    assert "GPU as given, with the total the log printed (7.92 GiB)" in section
    for name in ("model weights", "available KV cache memory", "GPU blocks", "CUDA graph memory"):
        assert name in section
    assert "maximum concurrency" in section and "verdict: vLLM started per the log" in section


def test_explain_log_takes_the_gpu_from_the_logged_total_and_options_win(tmp_path: Path) -> None:
    log = _write(tmp_path, V0_LOG)
    doc = json.loads(invoke(["explain", "--log", str(log), "--max-model-len", "1024", "--format", "json"]).stdout)
    assert doc["max_model_len"] == 1024  # the option given wins over the log's resolved 2048
    assert doc["gpu_total_gib"] == pytest.approx(7.92)  # the card the total identifies, with the logged total
    assert "device total the log printed (7.92 GiB)" in doc["log"]["source"]
    names = [f["name"] for f in doc["log"]["figures"]]
    assert "model weights" in names and "maximum concurrency" not in names  # logged for 2,048, asked 1,024
    assert doc["log"]["notes"] and doc["log"]["verdict"]["logged"] == "started"


def test_explain_log_reads_a_log_piped_in() -> None:
    out = invoke(["explain", "--log", "-", "--gpu", "rtx4060ti-8gb"], input=V0_LOG).stdout
    assert "Compared with the log (-; GPU as given" in out


def test_explain_log_of_a_failed_start_reports_both_verdicts(tmp_path: Path) -> None:
    log = _write(tmp_path, V1_FAILED_LOG)
    out = invoke(["explain", "--log", str(log), "--gpu", "rtx4090"]).stdout
    assert "Qwen/Qwen3-8B on NVIDIA GeForce RTX 4090 — vLLM 0.10.1" in out
    assert "KV fp8" in out and "verdict: vLLM failed per the log" in out


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (None, [], "cannot read it"),
        (b"\xff\xfe\x00binary", [], "not UTF-8 text"),
        ("hello\nworld\n", [], "no vLLM startup lines found"),
        ("Model loading took 15.27 GiB and 20.1 seconds\n", ["--gpu", "h100"], "does not name the model"),
        (V1_FAILED_LOG.replace("vLLM API server version 0.10.1.1", "").replace("(v0.10.1.1)", ""), [], "release"),
        (V1_FAILED_LOG.replace("API server version 0.10.1.1", "API server version 0.2.7"), [], "outside the releases"),
        (V1_FAILED_LOG, [], "names no GPU and prints no device total: pass --gpu"),
        (V1_FAILED_LOG + "GPU 0: NVIDIA Imaginary X1 (UUID: GPU-1)\n", [], "'NVIDIA Imaginary X1' is not in the"),
        (V1_FAILED_LOG + V1_FAILED_LOG.replace("max_seq_len=32768", "max_seq_len=8192"), [], "starts 2 engines"),
        (V1_FAILED_LOG, ["--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen3-8B"], "not both"),
    ],
)
def test_explain_log_refuses_bad_logs_in_one_line(
    tmp_path: Path, content: str | bytes | None, args: list[str], message: str
) -> None:
    path = tmp_path / "missing.log" if content is None else _write(tmp_path, content)
    result = invoke(["explain", "--log", str(path), *args], exit_code=2)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.output, result.stderr


def test_an_at_risk_prediction_is_not_called_a_start_beside_a_log() -> None:
    """Nemotron-3-Super NVFP4 on one DGX Spark at 0.89 leaves the host 13.4 GiB of its 121.69 GiB, under the 16 GiB
    memory/unified.py keeps for it: "at risk". Beside a log that started (field5 K018's shape), the comparison must
    say so instead of claiming the prediction was a start that agrees."""
    from recommender.catalog import load_gpus
    from recommender.cli.log_input import render_comparison
    from recommender.gpu_names import resolve_gpu
    from recommender.log_comparison import compare_with_log
    from recommender.memory.budget import explain
    from recommender.memory.engine import EngineFlags, VllmVersion
    from recommender.sources.resolve import resolve_model
    from recommender.startup_log import LoggedFigures, LoggedStartup

    flags = EngineFlags(gpu_memory_utilization=0.89, max_model_len=131072, max_num_seqs=4)
    e = explain(
        resolve_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4"),
        resolve_gpu("gb10", load_gpus()),
        flags,
        VllmVersion.parse("0.24.0"),
    )
    assert e.fits and e.at_risk
    logged = LoggedStartup("0.24.0", "V1", None, (), (), None, LoggedFigures(available_kv_gib=36.0), None, True)
    c = compare_with_log(e, logged)
    assert c.predicted_verdict == "at risk"
    assert c.verdicts_agree is None
    assert "predicted at risk (a margin inside the model's uncertainty: not a verdict)" in render_comparison(c, "x")


def test_an_integrated_gpu_takes_the_total_its_log_printed() -> None:
    # Strix Halo's device total is the GPU's share of the machine (BIOS carve-out + GTT): field7 M015's HIP OOM
    # printed 61.35 GiB on a Radeon 8060S catalogued at 64 GiB; 120 GiB would be its own too. A discrete card keeps
    # its catalogued total when the log's is far off (the log is of another card).
    from recommender.catalog import load_gpus
    from recommender.cli.log_input import with_logged_total
    from recommender.gpu_names import resolve_gpu
    from recommender.units import GiB

    catalog = load_gpus()
    for printed in (61.35, 120.0):
        logged = read_startup_log(f"GPU 0 has a total capacity of {printed} GiB of which 655.29 MiB is free.\n")
        card, how = with_logged_total(resolve_gpu("AMD Radeon 8060S", catalog), logged)
        assert card.total_bytes == int(printed * GiB) and f"({printed} GiB)" in how
        assert with_logged_total(resolve_gpu("rtx4090", catalog), logged)[1] == "as given"
    too_big = read_startup_log("GPU 0 has a total capacity of 200.00 GiB of which 655.29 MiB is free.\n")
    assert with_logged_total(resolve_gpu("AMD Radeon 8060S", catalog), too_big)[1] == "as given"
