"""The published vLLM serving points (benchmarks/data/perf/), read as inputs to the performance model.

Each row of `vllm_perf_calibration.jsonl` (a copy of shared/calibration's, ids and sources kept) becomes a
`Point`: the model and GPU, the flags the source states, the load as `vllm bench serve` would take it, and the
measured mean TTFT / mean TPOT / output throughput. The rules below read each source's notes; rows a source
cannot support are kept with the reason they are not used. Which points the constants are fitted on and which
are held out is decided here too (by model x GPU, so held-out errors are on combinations the fit never saw).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from recommender.catalog import load_gpus, model_files
from recommender.gpu_names import resolve_gpu
from recommender.hardware import Gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.perf.load import DEFAULT_JITTER, Load
from recommender.serve_args import parse_serve_argv
from recommender.units import GiB

DATA = Path(__file__).resolve().parent / "data" / "perf" / "vllm_perf_calibration.jsonl"
ADDED = Path(__file__).resolve().parent / "data" / "perf" / "added_points.jsonl"  # ids A..., with their sources
# Ids F...: published points of model x GPU combinations absent from the two files above. Never fitted on: the
# fidelity report's --field option measures the model on them alone (the honest estimate of unseen combinations).
FIELD = Path(__file__).resolve().parent / "data" / "perf" / "field_points.jsonl"
# Ids N...: a second blind set, collected after the field points had been seen while the model was fixed; measured
# once with the model on main when they were added (FIELD-FINDINGS.md), never fitted on.
HELDOUT_2 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_2.jsonl"
# Ids S...: a third blind set, collected after the second had been seen; measured blind the same way, never fitted on.
HELDOUT_3 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_3.jsonl"
# Ids T...: a fourth blind set, collected after the third had been seen; measured blind the same way, never fitted on.
HELDOUT_4 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_4.jsonl"
# Ids V...: a fifth blind set (IOG-Foundation's vLLM 0.8.5 runs on H100 PCIe and RTX 4090), measured blind the same way.
HELDOUT_5 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_5.jsonl"
# Ids W...: a sixth blind set (Gemma 4 31B on 2 x A100, Qwen3-8B BF16/AWQ, DeepSeek-V3.2 on 8 x H20, ...), measured the same way.
HELDOUT_6 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_6.jsonl"
# Ids X...: a seventh blind set (Llama-3.3-70B on 8 x A100 40GB, QwQ-32B on H200, gemma-3-4b on A100, ...), measured the same way.
HELDOUT_7 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_7.jsonl"
# Ids Y...: an eighth blind set (six 7B-14B models on an A40, five on a GB10 DGX Spark, ...), measured the same way.
HELDOUT_8 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_8.jsonl"
# Ids Z...: a ninth blind set (five more models on a GB10, Qwen3.5-122B-A10B-FP8 on an MI300X, ...), measured the same way.
HELDOUT_9 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_9.jsonl"
# Ids Q...: a tenth blind set (Lambda's vLLM 0.5.4 ShareGPT bursts of Mistral/Mixtral on H100 and A100, Qwen3-30B-A3B
# on an H200, MiniMax-M2 on 4 x H100, DeepSeek-V3.1 on 8 x H200), measured the same way.
HELDOUT_10 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_10.jsonl"
# Ids K...: an eleventh blind set (vLLM pull requests' baseline runs: MiniMax-M2 and MiniMax-M2.5 TP4 on 4 x H100,
# Nemotron-3-Nano-30B-A3B-FP8 on an H200), measured the same way.
HELDOUT_11 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_11.jsonl"
# Ids M...: a twelfth blind set (GLM-4.6 TP8 on 8 x MI300X, MiniMax-M2.5 and Qwen3.5-397B TP8 on 8 x H200, stock-vLLM
# 0.27.1 plateaus of Qwen3-32B and Nemotron-3-Nano-30B-A3B BF16 on H200, RTX PRO 6000 and RTX PRO 4500, Qwen3-Coder-480B
# on 8 x H20-3e, gemma-4-31B-it on a GH200, Qwen3.5-4B on an RTX 5090 and an A100-40GB), measured the same way.
HELDOUT_12 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_12.jsonl"
# Ids J...: a thirteenth blind set (MiniMax-M2.5 FP8 TP4 on 4 x B200 from Vultr's cookbook, Ministral-3-3B/8B-Instruct
# on an MI300X from the vLLM recipes' Ministral 3 guide), measured the same way.
HELDOUT_13 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_13.jsonl"
# Ids R...: a fourteenth blind set (gpt-oss-120b TP8/TP4/TP2 on H100 SXM, vLLM 0.15.1, InferenceX's power-sweep runs of issue
# #828 at 4-64 in flight and 1k/1k, 1k/8k and 8k/1k lengths), measured the same way.
HELDOUT_14 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_14.jsonl"
# Ids U...: a fifteenth blind set (DeepSeek-R1 TP8 on 8 x MI300X and 8 x H200 with vLLM 0.7, dstack's sweep of 4-128 in
# flight; Llama-3.1-405B-FP8 TP8 on 8 x H100 with a vLLM 0.6 nightly, ShareGPT at 16-1,000 req/s under five flag sets),
# measured the same way.
HELDOUT_15 = Path(__file__).resolve().parent / "data" / "perf" / "heldout_points_15.jsonl"

GPU_KEYS = {
    "A100-80GB": "a100-80gb",
    "A100-SXM-80GB": "a100-80gb",
    "A100-40GB": "a100-40gb",
    "H100-SXM-80GB": "h100-sxm",
    "H100-SXM-80GB (H100 80GB HBM3)": "h100-sxm",
    "H100-80GB": "h100-sxm",
    "H100-PCIe": "h100-pcie",
    "H200-SXM-141GB": "h200",
    "B200": "b200",
    "MI300X": "mi300x",
    "L40S": "l40s",
}
MODEL_IDS = {
    "Qwen2-7B-Instruct": "Qwen/Qwen2-7B-Instruct",
    "Qwen2.5-32B": "Qwen/Qwen2.5-32B",
    "gpt-oss-120b": "openai/gpt-oss-120b",
}
# Used only while the exact checkpoint is missing from the catalog: the same architecture (config.json layers,
# widths, heads, experts, vocabulary) under another name; the 2507 releases only raise max_position_embeddings.
SAME_ARCHITECTURE = {
    "Qwen/Qwen2-7B-Instruct": "Qwen/Qwen2.5-7B-Instruct",
    "Qwen/Qwen3-235B-A22B-Instruct-2507": "Qwen/Qwen3-235B-A22B",
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": "Qwen/Qwen3-235B-A22B-FP8",
    "Qwen/Qwen3-30B-A3B-Instruct-2507": "Qwen/Qwen3-30B-A3B-Thinking-2507",
    # profiles/aliases.yaml: the Llama 3.1 Instruct configs equal their base configs except eos_token_id.
    "meta-llama/Llama-3.1-405B-Instruct": "meta-llama/Meta-Llama-3.1-405B",
    # Meta's FP8 releases of the 405B base and Instruct models: the same config and fbgemm_fp8 quantization (layers 0
    # and 125 and every self_attn kept in BF16, transformers' quantize_fp8_llama.py), eos_token_id aside.
    "meta-llama/Llama-3.1-405B-FP8": "meta-llama/Llama-3.1-405B-Instruct-FP8",
}
EXCLUDED = {
    **dict.fromkeys(
        [f"P{i:03d}" for i in range(40, 52)],
        "tensor parallel across two nodes over a network the source does not state",
    ),
    **dict.fromkeys(
        [f"P{i:03d}" for i in (*range(52, 75), *range(95, 102))],
        "TP=2 over a link the source does not describe: slower than TP=1 from 100 requests on (P062 vs P091), so "
        "neither NVLink nor a peer-to-peer PCIe path",
    ),
    **dict.fromkeys([f"P{i:03d}" for i in range(111, 121)], "4 GPUs across nodes, parallel layout not stated"),
    **dict.fromkeys(
        [f"P{i:03d}" for i in (*range(138, 142), *range(143, 147))],
        "the A100 and H100 pages print identical figures for these cases: a copy error, GPU unknown",
    ),
    **dict.fromkeys(
        [f"P{i:03d}" for i in range(268, 274)],
        "vLLM 0.6 V0 engine with multi-step scheduling; ShareGPT lengths not stated",
    ),
    **dict.fromkeys([f"P{i:03d}" for i in range(274, 279)], "lengths and serving flags not stated"),
    "A003": "every prompt re-sent from the earlier runs (seed 0): prefix-cache hits",
    # Set 7 reading correction after the blind run (FIELD-FINDINGS 'Seventh blind set'): vLLM issue 18725 states
    # `vllm serve Qwen/QwQ-32B` on an 8 x H200 launcher; 2,663 tokens one request at a time in 23.1 s is 8.7 ms a
    # token with the TTFTs included, below the 13.6 ms one H200 needs to read 65.5 GB of BF16 weights once.
    "X010": "tensor parallel size not stated: the measured speed is above what one GPU's bandwidth allows",
}
# Runs whose source states that every prompt was one an earlier run had sent to the same server with prefix caching
# on: their prompts are read as cached (Load.cached_prompts; each computes only its last block). Other rows that
# may have re-sent prompts (P040-P120: dennislee22 repeated each configuration; S039, T009-T016: later rows "can"
# re-send) do not say which run did, and A002's 900 prompts include A001's 300 only: they are read as sent fresh.
CACHED_PROMPTS = {
    **dict.fromkeys(
        ("K005", "K006", "K008", "K009"),
        "the same default seed in every run against one server with prefix caching on: after the first run (K004, "
        "K007) the prompts are cached",
    ),
    **dict.fromkeys(("X002", "X003", "X004"), "re-sends the 200 seed-0 prompts the earlier qps runs already served"),
    "Y007": "the 4 req/s run re-sent cached prompts",
    **dict.fromkeys(
        (*(f"N{i:03d}" for i in range(2, 7)), *(f"N{i:03d}" for i in range(8, 15))),
        "TheBuccaneer's runs on one server re-send the same seeded prompts with prefix caching on (a longer profile "
        "starts with a shorter one's tokens): only N001 and N007 ran cold (FIELD-FINDINGS, 'cached prompts in "
        "TheBuccaneer's runs')",
    ),
}
# Held out of the fit, by model x GPU: the fidelity report's honest errors are measured on these. One of each
# kind the fit also sees (a dense and an MoE model on Ampere and on Hopper, FP8, a PCIe card, a closed loop), so
# the held-out errors say how the constants carry to combinations they were not fitted on.
HOLDOUT_GROUPS = frozenset(
    {
        ("Qwen/Qwen2.5-32B", "a100-80gb"),
        ("Qwen/Qwen3-32B-FP8", "a100-80gb"),
        ("Qwen/Qwen3-32B-AWQ", "a100-80gb"),
        ("openai/gpt-oss-20b", "h100-pcie"),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "h100-sxm"),
        ("zai-org/GLM-4.6", "h200"),
        ("zai-org/GLM-4.5-Air", "h100-sxm"),
        ("meta-llama/Llama-3.1-8B-Instruct", "a100-40gb"),
        ("meta-llama/Llama-3.2-3B-Instruct", "l40s"),
    }
)
TOKENS_PER_WORD = 1.33  # English text in the o200k (gpt-oss) tokenizer
METRICS = ("ttft", "tpot", "throughput")


@dataclass(frozen=True)
class Point:
    """One published measurement as the performance model's inputs, with what was measured."""

    id: str
    source: str
    model: str  # the checkpoint the source names
    catalog_model: str | None  # the catalog entry used (None: not bundled)
    gpu: str  # catalog key
    flags: EngineFlags
    version: VllmVersion
    async_scheduling: bool | None
    load: Load
    measured: dict[str, float]  # ttft (ms), tpot (ms), throughput (output tok/s): only what the row supports
    use: str  # "fit" | "holdout" | "field" (never fitted on) | "excluded"
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    chunked_prefill: bool | None = None  # --enable-chunked-prefill / --no-enable-chunked-prefill when stated

    @property
    def group(self) -> tuple[str, str]:
        return (self.model, self.gpu)


def _raw_figure(raw: str, label: str) -> float | None:
    m = re.search(re.escape(label) + r"[^:|]*:\s*([\d.]+)", raw)
    return float(m.group(1)) if m else None


def _model_id(name: str) -> str:
    return MODEL_IDS.get(name, name)


def _catalog(model: str) -> str | None:
    bundled = model_files()
    if model.lower() in bundled:
        return model
    alias = SAME_ARCHITECTURE.get(model)
    return alias if alias and alias.lower() in bundled else None


def _version(row: dict[str, Any]) -> VllmVersion:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", row.get("vllm_version") or "")
    if m:
        return VllmVersion(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    return VllmVersion(0, 10, 1)  # sariekr/gpu_conc: "Aug 2025, likely 0.10.x"


def _serve_flags(row: dict[str, Any]) -> tuple[dict[str, Any], bool | None]:
    """Flags from the notes: a stated `vllm serve` command, utilization, or the logged KV cache size."""
    notes = row.get("notes") or ""
    values: dict[str, Any] = {}
    async_flag: bool | None = None
    m = re.search(r"serving cmd:[^;]*?(vllm serve [^;]*)", notes)
    if m:
        cmd = parse_serve_argv(m.group(1))
        values.update({k: v for k, v in cmd.values.items() if k != "model"})
        if "--async-scheduling" in cmd.other:
            async_flag = True
    kv = re.search(r"KV ([\d.]+) GiB", notes)
    util = re.search(r"gpu_memory_utilization ([\d.]+)", notes)
    if kv:
        values["kv_cache_memory_bytes"] = int(float(kv.group(1)) * GiB)
    elif util:
        values["gpu_memory_utilization"] = float(util.group(1))
    if row.get("tp") and "tensor_parallel_size" not in values:
        values["tensor_parallel_size"] = int(row["tp"])
    if (row.get("dp") or 1) > 1:  # replicas behind a load balancer split the load like DP ranks of a dense model
        values["data_parallel_size"] = int(row["dp"])
    return values, async_flag


def _chunked_prefill(row: dict[str, Any]) -> bool | None:
    """The stated serving command's last --enable-chunked-prefill[=BOOL] / --no-enable-chunked-prefill, if any."""
    m = re.search(r"serving cmd:[^;]*?(vllm serve [^;]*)", row.get("notes") or "")
    found = re.findall(r"--(no-)?enable-chunked-prefill(?:[= ](true|false|True|False))?\b", m.group(1)) if m else []
    if not found:
        return None
    negated, value = found[-1]
    return not negated and value.lower() != "false"


def _custom_client(row: dict[str, Any]) -> bool:
    """sariekr/gpu_conc's closed-loop chat client (P000-P039, and field rows from the same repository)."""
    return "github.com/sariekr/gpu_conc/" in (row.get("source") or "")


def _load(row: dict[str, Any]) -> tuple[Load, list[str]]:
    raw = row.get("raw") or ""
    notes: list[str] = []
    dataset = "sharegpt" if "sharegpt" in (row.get("dataset") or "").lower() else "random"
    if _custom_client(row):  # sariekr/gpu_conc: a custom closed-loop client; Little's law gives what was in flight
        stats = json.loads(raw)
        inflight = stats["requests_per_second"] * stats["average_latency_per_request"] / 1000
        notes.append(f"in flight by Little's law: {inflight:.1f} (nominal {row['concurrency']})")
        return (
            Load(
                input_len=row["input_len"] * TOKENS_PER_WORD,
                output_len=row["output_len"],
                num_prompts=int(stats["successful_requests"]),
                max_concurrency=max(1, round(inflight)),
                dataset=dataset,
            ),
            notes,
        )
    n = _raw_figure(raw, "Successful requests") or row.get("num_prompts") or 1
    tin = _raw_figure(raw, "Total input tokens")
    tout = _raw_figure(raw, "Total generated tokens")
    cap = _raw_figure(raw, "Maximum request concurrency") or row.get("concurrency")
    rate = row.get("request_rate")
    output_len = tout / n if tout else float(row["output_len"] or 1)
    jitter, max_output = _random_lengths(row, output_len) if dataset == "random" else (DEFAULT_JITTER, None)
    return (
        Load(
            input_len=tin / n if tin else float(row["input_len"] or 1),
            output_len=output_len,
            num_prompts=int(n),
            max_concurrency=int(cap) if cap else None,
            request_rate=None if rate in (None, "inf") or rate == float("inf") else float(rate),
            burstiness=_burstiness(row),
            dataset=dataset,
            jitter=jitter,
            max_output=max_output,
            rescaled_arrivals=_rescaled_arrivals(row),
            cached_prompts=row["id"] in CACHED_PROMPTS,
        ),
        notes + ([f"prompts read as cached: {CACHED_PROMPTS[row['id']]}"] if row["id"] in CACHED_PROMPTS else []),
    )


_BURSTINESS = re.compile(r"--burstiness[= ]([\d.]+)\b")


def _burstiness(row: dict[str, Any]) -> float:
    """The client's stated `--burstiness` (gamma shape of the inter-arrival times; 1.0, Poisson, by default)."""
    m = _BURSTINESS.search(" ".join(str(row.get(k) or "") for k in ("raw", "notes", "benchmark_tool")))
    value = float(m.group(1)) if m else 1.0
    return value if value > 0 else 1.0


def _rescaled_arrivals(row: dict[str, Any]) -> bool:
    """vLLM's own client (`vllm bench serve`, benchmarks/benchmark_serving.py) of release 0.10.0 or later stretches
    its gamma delays so the last request is sent at num_prompts / rate (vllm-project/vllm#21108); forks and copies
    of the script (SGLang's, InferenceX's, dstack's, a user's) are of unknown vintage and keep the older sending.
    The row's vLLM release stands for the client's."""
    tool = str(row.get("benchmark_tool") or "").lower()
    own = ("vllm bench serve" in tool or "benchmark_serving.py" in tool) and not any(
        other in tool for other in ("sglang", "inferencex", "copy", "fork", "tt-inference")
    )
    return own and _version(row) >= VllmVersion(0, 10, 0)


_RANGE_RATIO = re.compile(r"range[-_ ]ratio[\s=:|]+([\d.]+)")
_REQUESTED_OUTPUT = re.compile(
    r"random[-_]output(?:[-_]len)?[\s=:|]+(\d+)|output (\d+) requested|(\d+) output tokens requested|of the (\d+) requested"
    r"|mean [\d.]+ of (\d+)|\"output_len\": (\d+)"  # nerdalert's notes and its saved result (its requested length)
)


MAX_JITTER = 0.99  # Load's jitter is below 1 (a uniform spread over [0, 2 x mean])
_IGNORE_EOS = re.compile(r"(?<!no )(?<!without )--ignore-eos(?! printed)")


def _random_lengths(row: dict[str, Any], mean_output: float) -> tuple[float, float | None]:
    """(length jitter, requested max_tokens) of a random-dataset row. vLLM's random dataset sends exact lengths
    unless a range ratio r is given (benchmark_serving.py's default 1.0 up to vLLM 0.8, `vllm bench serve`'s 0.0
    after, which draws in [L (1 - r), L (1 + r)]: +-r, benchmarks/datasets/datasets.py in 0.33). SGLang's
    bench_serving and InferenceX's fork draw in [r L, L] (SGLang's default r = 0: uniform in [1, L]), +-(1 - r) /
    (1 + r) around the mean. Without --ignore-eos an output may stop at EOS before the requested length: the mean
    generated below the request says how often."""
    text = " ".join(str(row.get(k) or "") for k in ("raw", "notes", "benchmark_tool", "dataset"))
    tool = str(row.get("benchmark_tool") or "").lower()
    upper_form = "sglang" in tool or "InferenceX" in text  # [r L, L]
    stated = _RANGE_RATIO.search(text)
    r = float(stated.group(1)) if stated else (0.0 if "sglang" in tool else None)
    if r is not None and upper_form and r < 1:
        return min(MAX_JITTER, (1 - r) / (1 + r)), None
    if r is not None and not upper_form and r > 0:
        return min(MAX_JITTER, r), None
    requested = _REQUESTED_OUTPUT.search(text)
    cap = float(next(g for g in requested.groups() if g)) if requested else None
    if _IGNORE_EOS.search(text) or cap is None or cap <= mean_output + 0.5:
        return 0.0, None
    return 0.0, cap


def _measured(row: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    src = row.get("source") or ""
    cached = "dennislee22" in src or "nerdalert" in src  # runs that re-sent cached prompts: TTFT understated
    if row.get("mean_ttft_ms") and not cached:
        out["ttft"] = float(row["mean_ttft_ms"])
    tpot = row.get("mean_tpot_ms") or row.get("derived_tpot_ms")
    if tpot:
        out["tpot"] = float(tpot)
    if row.get("output_throughput") and row["id"] != "P279":
        out["throughput"] = float(row["output_throughput"])
    for metric in row.get("not_compared") or ():  # a field row names the figures its source cannot support
        out.pop(metric, None)
    return out


def _use(row: dict[str, Any], model: str, gpu: str, catalog: str | None) -> tuple[str, str]:
    if row["id"] in EXCLUDED:
        return "excluded", EXCLUDED[row["id"]]
    if "failed=0" not in (row.get("notes") or "") and _custom_client(row):
        return "excluded", "requests failed during the run"
    if row.get("input_len") is None or row.get("output_len") is None:
        return "excluded", "lengths not stated"
    if catalog is None:
        return "excluded", f"{model} is not in the catalog"
    if row["id"][0] in "FJKMNQRSTUVWXYZ":  # field points and the second to fifteenth blind sets: never fitted on
        return "field", ""
    return ("holdout" if (model, gpu) in HOLDOUT_GROUPS else "fit"), ""


def point(row: dict[str, Any]) -> Point:
    """Interpret one row."""
    model = _model_id(row["model"])
    gpu = GPU_KEYS.get(row["gpu"]) or resolve_gpu(row["gpu"], load_gpus()).key
    catalog = _catalog(model)
    values, async_flag = _serve_flags(row)
    load, notes = _load(row)
    use, reason = _use(row, model, gpu, catalog)
    if catalog and catalog != model:
        notes.append(f"architecture from the catalog's {catalog}")
    return Point(
        id=row["id"],
        source=row["source"],
        model=model,
        catalog_model=catalog,
        gpu=gpu,
        flags=EngineFlags(**values),
        version=_version(row),
        async_scheduling=async_flag,
        load=load,
        measured=_measured(row),
        use=use,
        reason=reason,
        notes=tuple(notes),
        chunked_prefill=_chunked_prefill(row),
    )


@cache
def points(paths: tuple[Path, ...] = (DATA, ADDED)) -> tuple[Point, ...]:
    """Every row of the files, interpreted."""
    out: list[Point] = []
    for path in paths:
        with path.open(encoding="utf-8") as fh:
            out += [point(json.loads(line)) for line in fh if line.strip()]
    return tuple(out)


def gpu(key: str) -> Gpu:
    """The catalog GPU of a point."""
    return resolve_gpu(key, load_gpus())
