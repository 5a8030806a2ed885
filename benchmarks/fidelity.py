"""Fidelity benchmark: run the memory model against real vLLM startup logs.

    python benchmarks/fidelity.py                      # the calibration records (C*, A*)
    python benchmarks/fidelity.py --records field      # the field set (F*), logs the model was not built on
    python benchmarks/fidelity.py --records field --split held-out
    python benchmarks/fidelity.py --records field2     # round 2 (G*), collected blind after the field set's fixes
    python benchmarks/fidelity.py --records field3     # round 3 (H*), collected blind after round 2's fixes
    python benchmarks/fidelity.py --records field4     # round 4 (J*), vLLM issues naming the GPU, measured blind
    python benchmarks/fidelity.py --records field5     # round 5 (K*), the same kind of threads, measured blind
    python benchmarks/fidelity.py --records field6     # round 6 (L*), threads and committed logs, measured blind
    python benchmarks/fidelity.py --records field7     # round 7 (M*), mostly vLLM issue threads, measured blind
    python benchmarks/fidelity.py --records field8     # round 8 (N*), issue threads, project reports, a blog, measured blind
    python benchmarks/fidelity.py --records field9     # round 9 (P*), committed logs and issue threads, measured blind
    python benchmarks/fidelity.py --records field10    # round 10 (Q*), committed notes and reports, measured blind
    python benchmarks/fidelity.py --records field11    # round 11 (R*), committed notes, logs and tutorials, measured blind
    python benchmarks/fidelity.py --records field12    # round 12 (S*), committed notes, logs and an issue, measured blind
    python benchmarks/fidelity.py --records field13    # round 13 (T*), notes, logs and issues, data-centre cards, blind
    python benchmarks/fidelity.py --records field14    # round 14 (U*), 2026 releases, big cards, TP and MoE, blind
    python benchmarks/fidelity.py --records field15    # round 15 (W*), 2026 notes and guides, AMD and small cards, blind
    python benchmarks/fidelity.py --records field16    # round 16 (X*), 2026 notes, logs, an issue; Blackwell, Thor, blind
    python benchmarks/fidelity.py --records field17    # round 17 (Y*), 2026 notes and guides (zh/ja/ko/de); H100 TP 4, MI300X, blind
    python benchmarks/fidelity.py --records field18    # round 18 (Z*), 2026 notes (zh/ko/it), GB10, MI325X/MI350X, A100, blind
    python benchmarks/fidelity.py --records path/to/records.jsonl --quiet

Prints, per record, predicted vs logged weights, available KV memory, KV tokens and the start/fail verdict, then
the summary the issue's targets are stated in: the share of records that resolve offline (model AND GPU, and why
the rest do not), available-KV median and p90 relative error, weights median error, verdict agreement and the
logged crashes predicted to start. `tests/test_calibration.py` asserts the targets over the same predictions.

A record resolves when its model (as written: an id, an alias, a renamed repository, a name without organisation
naming one catalog entry, or a local path whose last component does) is in the catalog, its GPU resolves (its name
by the rules `--gpu` uses, else the device total the log prints, to the catalog card of that capacity) and a vLLM
version is printed or estimated (`vllm_version_estimate`). The GPU total the log printed is used when there is one,
else the catalog's. The summary says how many GPUs were resolved by their total.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from recommender.catalog import find_model, load_gpus
from recommender.console import run_script
from recommender.errors import PlanError
from recommender.gpu_clues import GpuClue, read_gpu_clues
from recommender.gpu_names import resolve_gpu
from recommender.gpu_totals import NEAR as TOTAL_NEAR
from recommender.gpu_totals import memory_figures, resolve_total
from recommender.hardware import Gpu
from recommender.memory.budget import Explanation, explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.explanation import StageBudget
from recommender.memory.precision import gpu_refusal
from recommender.memory.startup_issues import IssueKind
from recommender.sources.resolve import resolve_model
from recommender.units import GiB, MiB

DATA = Path(__file__).resolve().parent / "data" / "calibration"
DEFAULT = (DATA / "vllm_startup_logs.jsonl", DATA / "vllm_startup_logs_added.jsonl")
FIELD = (DATA / "vllm_startup_logs_field.jsonl",)
FIELD2 = (DATA / "vllm_startup_logs_field2.jsonl",)
FIELD3 = (DATA / "vllm_startup_logs_field3.jsonl",)
FIELD4 = (DATA / "vllm_startup_logs_field4.jsonl",)
FIELD5 = (DATA / "vllm_startup_logs_field5.jsonl",)
FIELD6 = (DATA / "vllm_startup_logs_field6.jsonl",)
FIELD7 = (DATA / "vllm_startup_logs_field7.jsonl",)
FIELD8 = (DATA / "vllm_startup_logs_field8.jsonl",)
FIELD9 = (DATA / "vllm_startup_logs_field9.jsonl",)
FIELD10 = (DATA / "vllm_startup_logs_field10.jsonl",)
FIELD11 = (DATA / "vllm_startup_logs_field11.jsonl",)
FIELD12 = (DATA / "vllm_startup_logs_field12.jsonl",)
FIELD13 = (DATA / "vllm_startup_logs_field13.jsonl",)
FIELD14 = (DATA / "vllm_startup_logs_field14.jsonl",)
FIELD15 = (DATA / "vllm_startup_logs_field15.jsonl",)
FIELD16 = (DATA / "vllm_startup_logs_field16.jsonl",)
FIELD17 = (DATA / "vllm_startup_logs_field17.jsonl",)
FIELD18 = (DATA / "vllm_startup_logs_field18.jsonl",)
RECORD_SETS = {
    "calibration": DEFAULT,
    "field": FIELD,
    "field2": FIELD2,
    "field3": FIELD3,
    "field4": FIELD4,
    "field5": FIELD5,
    "field6": FIELD6,
    "field7": FIELD7,
    "field8": FIELD8,
    "field9": FIELD9,
    "field10": FIELD10,
    "field11": FIELD11,
    "field12": FIELD12,
    "field13": FIELD13,
    "field14": FIELD14,
    "field15": FIELD15,
    "field16": FIELD16,
    "field17": FIELD17,
    "field18": FIELD18,
}
KV_FP8 = ("fp8", "fp8_e4m3", "fp8_e5m2")
# the --quantization methods a record passes through: those vLLM can also apply to a 16-bit checkpoint at load
# (model/quant.py online_quant); a pre-quantized checkpoint's own method is read from its config
ONLINE_METHODS = ("fp8", "bitsandbytes")


@dataclass(frozen=True)
class Compared:
    """One calibration record next to the model's prediction for the same model, GPU, version and flags."""

    record: dict[str, Any]
    model: str
    explanation: Explanation
    gpu_named: bool = True

    @property
    def logged_ok(self) -> bool:
        return str(self.record["status"]).startswith("ok")

    @property
    def predicted(self) -> str:
        """The verdict: "ok" (starts), "risk" (no error, but a margin inside the model's uncertainty) or "FAIL"."""
        e = self.explanation
        return "FAIL" if not e.fits else "risk" if e.at_risk else "ok"

    @property
    def agrees(self) -> bool:
        """A started record predicted "ok" or a crash predicted "FAIL"; "risk" agrees with neither (README)."""
        return self.predicted == ("ok" if self.logged_ok else "FAIL")

    @property
    def quantized(self) -> bool:
        return (self.record.get("quantization") or "none") != "none" or "quantized" in self.model

    @property
    def figures_stage(self) -> StageBudget:
        """The stage the record's memory lines were printed by: `figures_stage` when the record names one (a PP
        run's lines are one worker's, e.g. the driver's on the first stage), else the tightest stage, whose blocks
        vLLM gives every worker (the executor's min over workers) and which the plan reports."""
        k = self.record.get("figures_stage")
        stages = self.explanation.stages
        return stages[k] if isinstance(k, int) and 0 <= k < len(stages) else self.explanation.stage

    @property
    def weights_gib(self) -> float:
        return self.figures_stage.weights / GiB

    @property
    def kv_gib(self) -> float:
        return self.figures_stage.available_kv / GiB


def _version(text: str | None) -> VllmVersion | None:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    if not m:
        return None
    try:
        return VllmVersion.parse(m.group(0))
    except PlanError:
        return None


def record_version(r: dict[str, Any]) -> VllmVersion | None:
    """The version the log printed, else the collector's estimate (from the log's format and date)."""
    return _version(r.get("vllm_version")) or _version(r.get("vllm_version_estimate"))


def _version_reason(r: dict[str, Any]) -> str:
    """Why a record has no usable version: none printed or estimated, or one the memory model does not cover (the
    round-4 logs of vLLM 0.3, early 2024)."""
    written = [t for key in ("vllm_version", "vllm_version_estimate") if (t := r.get(key))]
    if any(re.search(r"\d+\.\d+", str(t)) for t in written):
        return "vLLM version outside the supported range"
    return "no vLLM version"


def _other_flag(r: dict[str, Any], name: str) -> float | None:
    """A numeric flag as the record's logged non-default args show it (`'cpu_offload_gb': 6`) or as its command
    passes it (`--cpu-offload-gb 6`, `--cpu_offload_gb=6`)."""
    dashed = name.replace("_", "[-_]")
    m = re.search(rf"'{name}': ([\d.]+)|--{dashed}[= ]([\d.]+)", r.get("other_flags") or "")
    return float(m.group(1) or m.group(2)) if m else None


CHUNKED_PREFILL = re.compile(r"(--no-)?enable[-_]chunked[-_]prefill(?:'?[:=]?\s*(True|False))?")
BLOCK_SIZE = re.compile(r"block[-_]size'?[:= ]\s*(\d+)")
PREFIX_CACHING = re.compile(r"(--no-)?enable[-_]prefix[-_]caching(?:'?[:=]?\s*(True|False))?")


def record_chunked_prefill(r: dict[str, Any]) -> bool | None:
    """--enable-chunked-prefill as the record's command sets it (`--enable-chunked-prefill False`, the non-default
    args' `'enable_chunked_prefill': False`, `--no-enable-chunked-prefill`), None when it does not."""
    m = CHUNKED_PREFILL.search(r.get("other_flags") or "")
    if not m:
        return None
    return not m.group(1) and m.group(2) != "False"


def record_prefix_caching(r: dict[str, Any]) -> bool | None:
    """--enable-prefix-caching as the record's command sets it (`--no-enable-prefix-caching`, the non-default args'
    `'enable_prefix_caching': False`), None when it does not (vLLM's default for the release and model)."""
    m = PREFIX_CACHING.search(r.get("other_flags") or "")
    if not m:
        return None
    return not m.group(1) and m.group(2) != "False"


def record_block_size(r: dict[str, Any]) -> int | None:
    """--block-size as the record's command sets it, None when it does not."""
    m = BLOCK_SIZE.search(r.get("other_flags") or "")
    return int(m.group(1)) if m else None


SPEC_DICT = re.compile(r"'?speculative_config'?:? (\{[^{}]*\})")  # the logged dict, with or without its key's quotes
SPEC_FLAG = re.compile(r"--speculative[-_]config[= ]'?(\{[^{}]*\}|null|None)")
SPEC_DISABLED = re.compile(r"MTP disabled|speculative_config[=:] ?None|DISABLE_MTP=1")
MTP_TOKENS = re.compile(r"MTP[- ]?(?:n=)?(\d+)\b|MTP with (\d+) draft tokens|num_speculative_tokens'?:? (\d+)")
CUT_MTP = re.compile(r"speculative_config'?:? \{'method': 'mtp'")  # also a dict the collector cut short
CUT_METHOD = re.compile(r"""["']method["']\s*:\s*["'](\w+)["']""")  # the method of a cut JSON or dict


def _literal_dict(text: str) -> dict[str, Any] | None:
    """A dict as the log prints it (Python's repr) or as the command passes it (JSON); None when the collector cut
    it short ("{'method': 'mtp', ...}")."""
    for parse in (ast.literal_eval, json.loads):
        try:
            value = parse(text)
        except (ValueError, SyntaxError):
            continue
        return value if isinstance(value, dict) else None
    return None


def record_speculative(r: dict[str, Any]) -> str | None:
    """--speculative-config as the record shows it: the logged non-default args' dict, the command's JSON, or the
    collector's words (an MTP or DFlash drafter, with its draft tokens where given); None without one."""
    text = r.get("other_flags") or ""
    if (m := SPEC_DICT.search(text)) and (config := _literal_dict(m.group(1))) is not None:
        return json.dumps(config)
    if m := SPEC_FLAG.search(text):
        if m.group(1) in ("null", "None"):
            return None
        if (config := _literal_dict(m.group(1))) is not None:
            return json.dumps(config)
        # the collector cut the command's JSON ('{"method":"qwen3_next_mtp",...}'): its method and the draft tokens
        # the record gives, as for a cut logged dict
        if method := CUT_METHOD.search(m.group(1)):
            tokens = next((int(g) for t in MTP_TOKENS.finditer(text) for g in t.groups() if g), None)
            extra = f', "num_speculative_tokens": {tokens}' if tokens else ""
            return f'{{"method": "{method.group(1)}"{extra}}}'
    if SPEC_DISABLED.search(text):
        return None
    tokens = next((int(g) for m in MTP_TOKENS.finditer(text) for g in m.groups() if g), None)
    extra = f', "num_speculative_tokens": {tokens}' if tokens else ""
    if re.search(r"\bMTP(?:\d|\b)|speculative method mtp", text) or CUT_MTP.search(text):
        return f'{{"method": "mtp"{extra}}}'
    if re.search(r"dflash", text, re.IGNORECASE):
        return '{"method": "dflash"}'
    return None


def load_records(*paths: Path) -> list[dict[str, Any]]:
    """The calibration records, one JSON object per line, from each file in turn."""
    return [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]


def model_candidates(written: str | None) -> list[str]:
    """The ids a record's model may be looked up under: as written (its first word), then the last component of a
    local path (`/models/Meta-Llama-3.1-70B-Instruct`, `~/.cache/huggingface/qwen3.6-35b-a3b-nvfp4`)."""
    first = (written or "").split(" ")[0].strip().lower()
    ids = [first] if first else []
    if first.startswith(("/", "~", ".")) or first.count("/") > 1:
        ids.append(first.rstrip("/").rsplit("/", 1)[-1])
    return ids


def record_model(r: dict[str, Any]) -> str | None:
    """The catalog id the record's model resolves to offline, or None."""
    for ref in model_candidates(r.get("model")):
        if ref and find_model(ref) is not None:
            return ref
    return None


SIZE_REMARK = re.compile(r"\s*\((\d+(?:\.\d+)?\s*(?:GB|GiB|G))\)", re.IGNORECASE)  # a remark that is only a size
# a remark that is a MiB total: nvidia-smi prints memory.total in MiB ("16311MiB"; a reporter may add the thousands
# separator), the figure resolve_gpu's memory_mib takes to pick the variant of a shared name (8 vs 16 GB cards)
MIB_REMARK = re.compile(r"\(\s*(\d{1,3}(?:,\d{3})+|\d+)\s*MiB\s*\)", re.IGNORECASE)


def record_gpu(r: dict[str, Any]) -> Gpu | None:
    """The catalog card the record's GPU name resolves to (parenthesised remarks dropped; a written size, or a MiB
    total as nvidia-smi prints it, picks the variant), or None."""
    written = SIZE_REMARK.sub(r" \1", r.get("gpu") or "")  # "NVIDIA H100 (96GB)": the size the reporter wrote
    mib = MIB_REMARK.search(written)
    name = re.sub(r"\s*\(.*\)", "", written).strip()
    if not name:
        return None
    try:
        return resolve_gpu(name, load_gpus(), memory_mib=int(mib.group(1).replace(",", "")) if mib else None)
    except PlanError:
        return None


AMD_WORDS = re.compile(r"AMD|ROCm|gfx\d|Radeon|Instinct|MI\d{3}", re.IGNORECASE)
OFFLOAD_ARCH = re.compile(r"gfx[0-9a-f]{3,4}", re.IGNORECASE)


def gpu_by_total(r: dict[str, Any]) -> Gpu | None:
    """When the log names no card that resolves but prints the device total (total_gpu_memory=, "Free memory on
    device (free/total GiB)", the OOM message's "total capacity"), the catalog card of that vendor (and offload
    architecture, when the log prints one) with that total: recommender.gpu_totals.resolve_total, which answers
    only when the cards of that total predict alike for this record (else they are told apart by the figures the
    memory model reads)."""
    total = r.get("gpu_total_gib")
    if not total:
        return None
    written, clues = r.get("gpu") or "", record_clues(r)
    # the vendor the record's GPU field names, else the one the log's own lines imply (its platform, a ROCm
    # offload architecture, an NVIDIA-only kernel line), else NVIDIA
    vendor = "amd" if AMD_WORDS.search(written) else None if any(c.vendor for c in clues) else "nvidia"
    arch = OFFLOAD_ARCH.search(written)
    version = record_version(r)
    cards = load_gpus()
    if version is not None and r.get("weights_gib"):  # the log shows the model loaded: not on a card vLLM refuses
        cards = tuple(g for g in cards if gpu_refusal(g, version) is None)
    try:
        match = resolve_total(
            total,
            cards,
            vendor=vendor,
            arch=arch.group(0) if arch else None,
            same=_prediction_key(r),
            clues=clues,
        )
    except PlanError:
        return None
    return match.gpu


def record_clues(r: dict[str, Any]) -> tuple[GpuClue, ...]:
    """What the record's log excerpt and error line say about the card (the rules `explain --log` applies:
    recommender.gpu_clues)."""
    return read_gpu_clues("\n".join(str(r.get(k) or "") for k in ("raw", "error")))


def _prediction_key(r: dict[str, Any]) -> Callable[[Gpu], Hashable]:
    """What tells two cards of one total apart for this record: the memory model's prediction on each (with the
    logged total), or the card figures it reads when the record's model or version does not resolve."""
    model_id, version, total = record_model(r), record_version(r), float(r["gpu_total_gib"])
    if model_id is None or version is None:
        return memory_figures
    spec, flags, free = resolve_model(model_id), record_flags(r), r.get("free_memory_gib")

    def key(gpu: Gpu) -> Hashable:
        try:
            e = explain(
                spec,
                replace(gpu, total_bytes=int(total * GiB)),
                flags,
                version,
                free_bytes=int(free * GiB) if free else None,
            )
        except PlanError as err:
            return str(err).replace(gpu.name, "")
        s = e.stage
        figures = (s.weights, s.activation_peak, s.non_torch, s.cudagraph, s.available_kv, e.num_gpu_blocks)
        return (*figures, e.max_num_seqs, e.max_num_batched_tokens, e.error_kinds)

    return key


def unresolved_reason(r: dict[str, Any]) -> str | None:
    """Why the record does not resolve offline (model, GPU by name or printed total, version), or None when it
    does. A GPU miss says whether the log printed a device total and why that total did not decide the card."""
    if record_model(r) is None:
        return "model not in the catalog"
    if record_gpu(r) is None and gpu_by_total(r) is None:
        return _gpu_miss(r)
    if _total_unknown(r):
        return "GPU's memory is a setting of the machine (BIOS carve-out + GTT), no device total printed"
    if record_version(r) is None:
        return _version_reason(r)
    return None


def _total_unknown(r: dict[str, Any]) -> bool:
    """An integrated GPU whose device total is the machine's BIOS / GTT setting (hardware.Gpu.total_is_a_setting),
    named without a size and with no total printed: its name does not say its memory, so the catalog's one reading
    would stand in for the machine's (field7 M016/M024 started models a 64 GiB share cannot hold)."""
    gpu = record_gpu(r)
    catalogued = gpu is not None and any(g.key == gpu.key for g in load_gpus())
    return bool(catalogued and gpu is not None and gpu.total_is_a_setting and not r.get("gpu_total_gib"))


def _gpu_miss(r: dict[str, Any]) -> str:
    """The GPU class of an unresolved record: no name and no total; a name the catalog lacks (and no total that
    resolves); or a printed total that matches no catalog card, or fits cards that predict apart."""
    if len(record_cards(r)) > 1:
        return "different cards in one pipeline (a plan holds one GPU type)"
    named = "GPU name not resolved" if r.get("gpu") else "GPU not named"
    total = r.get("gpu_total_gib")
    if not total:
        return named if r.get("gpu") else "GPU not named, no device total printed"
    fits = [g for g in load_gpus() if abs(g.total_bytes / GiB / total - 1) <= TOTAL_NEAR]
    why = "its printed total fits cards that predict apart" if fits else "its printed total matches no catalog card"
    return f"{named}, {why}"


def record_cards(r: dict[str, Any]) -> list[Gpu]:
    """The catalog cards a record names joined by ' + ' (a pipeline over different cards), each resolved alone."""
    names = [re.sub(r"\s*\(.*\)", "", n).strip() for n in (r.get("gpu") or "").split(" + ")]
    cards: list[Gpu] = []
    for name in names:
        try:
            cards.append(resolve_gpu(name, load_gpus()))
        except PlanError:
            continue
    return cards


def _gpu(r: dict[str, Any]) -> tuple[Gpu, bool] | None:
    """The record's GPU (with the logged total when printed) and whether its name resolved: the named card, else
    the card of the printed total."""
    card = record_gpu(r)
    named = card is not None
    card = card or gpu_by_total(r)
    if card is None:
        return None
    total = r.get("gpu_total_gib")
    if total:
        return replace(card, total_bytes=int(total * GiB)), named
    if card.smi_total_mib and on_windows(r):
        return replace(card, total_bytes=card.smi_total_mib * MiB), named
    return card, named


# Under WSL2 (and native Windows) the CUDA device total is nvidia-smi's, to a few MiB, where Linux's driver keeps
# back more (the RTX 5090: 32,607 MiB by nvidia-smi, 31.36-31.4 GiB in vLLM's logs on Linux): an RTX 4080 under WSL2
# prints 15.99 GiB of 16,376 MiB (calibration C000), an RTX 4090 23.99 of 24,564 (field14 U017), torch reads an RTX
# 5060 Ti's as 15.9 GiB of 16,311 (field17 Y020) and an RTX 5080's as 16,302 MiB of 16,303 on a Windows host
# (profiles/gpus/rtx5080.yaml). The catalog holds the Linux total; a record whose card runs under WSL takes the
# card's nvidia-smi total when the catalog has it and the log prints none.
WINDOWS = re.compile(r"\bWSL2?\b|Windows 1[01]")


def on_windows(r: dict[str, Any]) -> bool:
    """The record's card runs under WSL2 or Windows, as its GPU field, flags, notes or log excerpt say."""
    return any(WINDOWS.search(str(r.get(k) or "")) for k in ("gpu", "other_flags", "notes", "raw", "source"))


def record_flags(r: dict[str, Any]) -> EngineFlags:
    """The engine flags the record's log shows (None: vLLM's default for that version and GPU)."""
    quant = r.get("quantization") or "none"
    kv_dtype = r.get("kv_cache_dtype") or "auto"
    return EngineFlags(
        tensor_parallel_size=r.get("tp") or 1,
        pipeline_parallel_size=r.get("pp") or 1,
        data_parallel_size=r.get("dp") or 1,
        quantization=quant if quant in ONLINE_METHODS else None,
        dtype=r["dtype"] if r.get("dtype") in ("bfloat16", "float16", "float32") else "auto",
        kv_cache_dtype="fp8" if kv_dtype in KV_FP8 else "auto",
        gpu_memory_utilization=r.get("gpu_memory_utilization"),
        max_model_len=r.get("max_model_len"),
        max_num_seqs=r.get("max_num_seqs"),
        max_num_batched_tokens=record_batched_tokens(r),
        enforce_eager=bool(r.get("enforce_eager")),
        enable_chunked_prefill=record_chunked_prefill(r),
        enable_prefix_caching=record_prefix_caching(r),
        block_size=record_block_size(r),
        language_model_only=bool(re.search(r"language[-_]model[-_]only(?!'?: False)", r.get("other_flags") or "")),
        limit_mm_per_prompt=record_mm_limits(r),
        enable_expert_parallel=bool(
            re.search(r"enable[-_]expert[-_]parallel(?!'?: False)", r.get("other_flags") or "")
        ),
        cpu_offload_gb=_other_flag(r, "cpu_offload_gb") or 0.0,
        mm_encoder_tp_mode="data"
        if re.search(r"mm[-_]encoder[-_]tp[-_]mode\W+data", r.get("other_flags") or "")
        else None,
        use_v1=record_engine_is_v1(r),
        speculative_config=record_speculative(r),
        max_cudagraph_capture_size=record_max_capture_size(r),
        llm_class=record_llm_class(r),
        engine_context=record_engine_context(r),
        **record_lora(r),
    )


# the offline LLM class as the record's launch shows it: `LLM(...)`, `vllm bench latency|throughput` (which build an
# LLM), the older benchmark scripts, or the collector's words
LLM_CLASS = re.compile(
    r"(?<![A-Za-z])LLM\(|vllm bench (?:latency|throughput)|benchmark_(?:latency|throughput)|\bLLM class\b"
)


def record_llm_class(r: dict[str, Any]) -> bool:
    """The record's engine is the offline LLM class (its batch defaults, memory/engine.py LLM_CLASS_TOKENS)."""
    return any(LLM_CLASS.search(str(r.get(k) or "")) for k in ("other_flags", "source_type"))


# an engine built from (Async)EngineArgs directly, as the record's launch shows it (`AsyncEngineArgs(...)`,
# `AsyncLLMEngine.from_engine_args`): SchedulerConfig's own batch defaults (memory/engine.py ENGINE_CONTEXT_DEFAULTS)
ENGINE_CONTEXT = re.compile(r"\b(?:Async)?EngineArgs\(|AsyncLLMEngine\.from_engine_args")


def record_engine_context(r: dict[str, Any]) -> bool:
    """The record's engine is built from EngineArgs directly (UsageContext.ENGINE_CONTEXT), not `vllm serve` or LLM."""
    return not record_llm_class(r) and bool(ENGINE_CONTEXT.search(str(r.get("other_flags") or "")))


# the scheduler's own line, "Chunked prefill is enabled with max_num_batched_tokens=8192" (vllm/config/scheduler.py),
# prints the batched tokens the engine runs with, whatever chose them (the flag, or the defaults of the entry point:
# the LLM class gets 8,192 where `vllm serve` gets 2,048 below 70 GiB, engine/arg_utils.py get_batch_defaults)
SCHEDULER_TOKENS = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)")


def record_batched_tokens(r: dict[str, Any]) -> int | None:
    """--max-num-batched-tokens as the record gives it, else as the scheduler's line quoted in `raw` prints it, else
    None (vLLM's default for the release, the GPU and `vllm serve`)."""
    if r.get("max_num_batched_tokens"):
        return int(r["max_num_batched_tokens"])
    m = SCHEDULER_TOKENS.search(str(r.get("raw") or ""))
    return int(m.group(1)) if m else None


# --limit-mm-per-prompt as the record's command passes it (`--limit-mm-per-prompt '{"image":0,"video":0}'`, the older
# `--limit-mm-per-prompt image=4,video=0`) or its logged non-default args show it (`'limit_mm_per_prompt': {'image': 1,
# 'video': 0}`, `limit_mm_per_prompt {'image': 1}`); an engine config's `limit_mm_per_prompt=None` is not a limit
MM_LIMITS = re.compile(
    r"limit[-_]mm[-_]per[-_]prompt'?(?::\s*|\s+|=)(?:'(\{[^}]*\})'|(\{[^}]*\})|([a-z]+=\d+(?:,[a-z]+=\d+)*))"
)


def record_mm_limits(r: dict[str, Any]) -> str | None:
    """The --limit-mm-per-prompt the record's launch sets, as vLLM's JSON (EngineFlags reads it: a tower whose every
    modality is limited to 0 is not loaded, memory/engine.py), None when it sets none."""
    m = MM_LIMITS.search(str(r.get("other_flags") or ""))
    if m is None:
        return None
    if m.group(3):
        return m.group(3)
    return (m.group(1) or m.group(2)).replace("'", '"')


# --max-cudagraph-capture-size as the record's command passes it (`--max-cudagraph-capture-size 1`) or its logged
# non-default args show it (`max_cudagraph_capture_size 256`, `'max_cudagraph_capture_size': 256`)
MAX_CAPTURE_SIZE = re.compile(r"max[-_]cudagraph[-_]capture[-_]size'?(?:[:=]\s*|\s+)(\d+)")


def record_max_capture_size(r: dict[str, Any]) -> int | None:
    """The largest CUDA-graph capture size the record's launch sets, None when it does not (vLLM's default)."""
    m = MAX_CAPTURE_SIZE.search(str(r.get("other_flags") or ""))
    return int(m.group(1)) if m else None


# LoRA as the record's command or notes show it: `--enable-lora`, the non-default args' `'enable_lora': True`,
# `enable_lora=True`, or the collector's "LoRA enabled" / "LoRA (PunicaWrapperGPU)" / "LoRA via PunicaWrapperGPU"
# (the wrapper vLLM only builds with a LoRA config); the slot count and rank when given, else vLLM's defaults
LORA_ON = re.compile(r"--enable-lora\b|'enable_lora': True|enable_lora=True|\bLoRA (?:enabled|via Punica|\(Punica)")
MAX_LORA_RANK = re.compile(r"max[-_]lora[-_]rank'?[:= ]\s*(\d+)")
MAX_LORAS = re.compile(r"max[-_]loras'?[:= ]\s*(\d+)")


def record_lora(r: dict[str, Any]) -> dict[str, Any]:
    """EngineFlags' LoRA fields for the record (empty when it does not enable LoRA)."""
    text = str(r.get("other_flags") or "")
    if not LORA_ON.search(text):
        return {}
    out: dict[str, Any] = {"enable_lora": True}
    if m := MAX_LORA_RANK.search(text):
        out["max_lora_rank"] = int(m.group(1))
    if m := MAX_LORAS.search(text):
        out["max_loras"] = int(m.group(1))
    return out


# VLLM_USE_V1 set for the run the record is of: not "without VLLM_USE_V1=0" (the other run) nor "also with
# VLLM_USE_V1=0" (the failure happens on both engines, so the record does not pin one)
USE_V1_ENV = re.compile(r"(?<!without )(?<!also with )\bVLLM_USE_V1=([01])\b")


def record_engine_is_v1(r: dict[str, Any]) -> bool | None:
    """The engine the log shows running (the collector notes "V0"/"V1" beside the printed or estimated version from
    the log's own lines: "Initializing a V0 LLM engine", V1's gpu_model_runner), else the VLLM_USE_V1 the command
    sets (`VLLM_USE_V1=0 vllm serve ...`; vLLM 0.7-0.10 read it as bool(int(value)), envs.py), else "V0 engine" in
    the flags; None when none of them says, or they disagree."""
    flags = str(r.get("other_flags") or "")
    for engines in (
        set(re.findall(r"\bV([01])\b", str(r.get("vllm_version") or ""))),
        set(re.findall(r"\bV([01])\b", str(r.get("vllm_version_estimate") or ""))),
        set(USE_V1_ENV.findall(flags)),
        set(re.findall(r"\bV([01]) engine\b", flags)),
    ):
        if engines:
            return engines == {"1"} if len(engines) == 1 else None
    return None


def compare(r: dict[str, Any]) -> Compared | None:
    """Predict one record, or None when its model, GPU (name or printed total) or version is unknown."""
    model_id = record_model(r)
    version = record_version(r)
    gpu = _gpu(r)
    if model_id is None or version is None or gpu is None or _total_unknown(r):
        return None
    free = r.get("free_memory_gib")
    try:
        e = explain(
            resolve_model(model_id), gpu[0], record_flags(r), version, free_bytes=int(free * GiB) if free else None
        )
    except PlanError:
        return None
    return Compared(r, model_id, e, gpu_named=gpu[1])


def refusal(r: dict[str, Any]) -> str | None:
    """Why a record that resolves offline is not compared: the planner's refusal of its flags (a PlanError's one
    line), or None when it is compared or does not resolve. Such a record is counted, not dropped."""
    if unresolved_reason(r) is not None or _total_unknown(r):
        return None
    model_id, version, gpu, free = record_model(r), record_version(r), _gpu(r), r.get("free_memory_gib")
    if model_id is None or version is None or gpu is None:
        return None
    try:
        explain(resolve_model(model_id), gpu[0], record_flags(r), version, free_bytes=int(free * GiB) if free else None)
    except PlanError as err:
        return str(err)
    return None


def rel(pred: float, logged: float | None) -> float | None:
    """Relative error, None when the log has no (positive) figure."""
    return abs(pred - logged) / logged if logged and logged > 0 else None


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation (statistics.quantiles' 'inclusive' method)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True)
class Summary:
    """The issue's figures over one set of records."""

    records: int
    resolved: int
    unresolved: dict[str, int]
    compared: list[Compared]
    kv_errors: list[float]
    weight_errors: list[float]
    agree: int
    crashes_called_safe: list[str]
    crashes_warned: list[str]  # of those, the ones explain warns may not start (the warm-up margin too close to call,
    # or NCCL's all-reduce captured in the graphs, whose memory the model does not count: nccl_graphs.nccl_graph_note)
    crashes_at_risk: list[str] = field(default_factory=list)  # crashes called "at risk" (not safe, not a match)
    starts_at_risk: list[str] = field(default_factory=list)  # started records called "at risk" (not a match)
    refused: list[str] = field(default_factory=list)  # resolved, but the planner refused the record's flags


def summarize(records: Sequence[dict[str, Any]], compared: Sequence[Compared]) -> Summary:
    reasons = Counter(reason for r in records if (reason := unresolved_reason(r)) is not None)
    kv = [e for c in compared if (e := rel(c.kv_gib, c.record.get("kv_available_gib"))) is not None]
    weights = [e for c in compared if (e := rel(c.weights_gib, c.record.get("weights_gib"))) is not None]
    return Summary(
        records=len(records),
        resolved=len(records) - sum(reasons.values()),
        unresolved=dict(reasons),
        compared=list(compared),
        kv_errors=kv,
        weight_errors=weights,
        agree=sum(c.agrees for c in compared),
        crashes_called_safe=[c.record["id"] for c in compared if not c.logged_ok and c.predicted == "ok"],
        crashes_warned=[
            c.record["id"]
            for c in compared
            if not c.logged_ok
            and c.predicted == "ok"
            and c.explanation.has(IssueKind.WARMUP_HEADROOM, IssueKind.NCCL_GRAPHS_UNCOUNTED)
        ],
        crashes_at_risk=[c.record["id"] for c in compared if not c.logged_ok and c.predicted == "risk"],
        starts_at_risk=[c.record["id"] for c in compared if c.logged_ok and c.predicted == "risk"],
        refused=[r["id"] for r in records if r["id"] not in {c.record["id"] for c in compared} and refusal(r)],
    )


def _row(c: Compared) -> str:
    r, e = c.record, c.explanation
    verdict = f"{'ok' if c.logged_ok else 'FAIL'}/{c.predicted}"
    return (
        f"{r['id']:5} {c.model[:44]:44} {r.get('weights_gib') or '-':>7} {c.weights_gib:7.2f} "
        f"{r.get('kv_available_gib') if r.get('kv_available_gib') is not None else '-':>7} {c.kv_gib:7.2f} "
        f"{r.get('kv_cache_tokens') or '-':>9} {e.kv_cache_tokens:9} {verdict}{'' if c.gpu_named else ' (GPU by total)'}"
    )


def report(s: Summary) -> None:
    print(
        f"\nrecords: {s.records}; resolved offline (model and GPU name and version): {s.resolved} "
        f"({s.resolved / s.records:.0%})"
        if s.records
        else "\nno records"
    )
    for reason, n in sorted(s.unresolved.items(), key=lambda kv: -kv[1]):
        print(f"  unresolved, {reason}: {n}")
    by_total = sum(not c.gpu_named for c in s.compared)
    print(f"compared: {len(s.compared)} ({by_total} with the GPU resolved by the total the log printed)")
    if s.refused:
        print(f"resolved but not compared (the planner refused the record's flags): {s.refused}")
    if s.kv_errors:
        print(
            f"available KV  median error {statistics.median(s.kv_errors):6.2%}   p90 {percentile(s.kv_errors, 0.9):6.2%}"
            f"   max {max(s.kv_errors):6.2%}   (n={len(s.kv_errors)})"
        )
    if s.weight_errors:
        print(
            f"weights       median error {statistics.median(s.weight_errors):6.2%}   "
            f"p90 {percentile(s.weight_errors, 0.9):6.2%}   (n={len(s.weight_errors)})"
        )
    if s.compared:
        print(f"verdict agreement: {s.agree}/{len(s.compared)} = {s.agree / len(s.compared):.0%}")
        warned = f" (with a warm-up warning: {s.crashes_warned})" if s.crashes_warned else ""
        print(f"logged crashes predicted to start: {s.crashes_called_safe or 'none'}{warned}")
        if s.crashes_at_risk or s.starts_at_risk:
            print(
                f"logged crashes called at risk (not safe, no verdict match): {s.crashes_at_risk or 'none'}; "
                f"started records called at risk (no match): {s.starts_at_risk or 'none'}"
            )


def run(*paths: Path, split: str | None = None, quiet: bool = False) -> int:
    records = [r for r in load_records(*paths) if split is None or r.get("split") == split]
    compared = [c for c in (compare(r) for r in records) if c is not None]
    if not quiet:
        print(
            f"{'id':5} {'model':44} {'W log':>7} {'W pred':>7} {'KV log':>7} {'KV pred':>7} {'tok log':>9} "
            f"{'tok pred':>9} verdict log/pred"
        )
        for c in compared:
            print(_row(c))
        for r in records:
            if (reason := unresolved_reason(r)) is not None:
                print(f"{r['id']:5} {(r.get('model') or '-')[:44]:44} unresolved: {reason} (gpu: {r.get('gpu')!r})")
            elif r["id"] not in {c.record["id"] for c in compared} and (refused := refusal(r)) is not None:
                print(f"{r['id']:5} {(r.get('model') or '-')[:44]:44} not compared: {refused}")
    report(summarize(records, compared))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="record files (JSON lines); default: the calibration set")
    parser.add_argument(
        "--records",
        action="append",
        default=[],
        help="'calibration', 'field', 'field2' ... 'field18' or a JSON-lines file (repeatable)",
    )
    parser.add_argument(
        "--split",
        choices=("dev", "held-out", *(f"held-out-{n}" for n in range(2, 19))),
        help="only the records of this split",
    )
    parser.add_argument("--quiet", action="store_true", help="the summary only")
    args = parser.parse_args(argv)
    paths = [*args.paths]
    for name in args.records:
        paths.extend(RECORD_SETS.get(name, (Path(name),)))
    return run(*(paths or DEFAULT), split=args.split, quiet=args.quiet)


if __name__ == "__main__":
    run_script(main)
