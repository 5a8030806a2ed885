"""Judge one found vLLM server: would it start, does it meet its SLO, and what to change (pure)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from recommender.check.found import Found
from recommender.documents import plan_annotations
from recommender.errors import PlanError
from recommender.hardware import Gpu
from recommender.memory.budget import Explanation, explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind, StartupIssue, removed_flag
from recommender.model.spec import ModelSpec
from recommender.serve_args import parse_serve_argv

ANN = plan_annotations.PREFIX


@dataclass(frozen=True, slots=True)
class Slo:
    """The load a deployment promises: N concurrent requests of S tokens."""

    concurrency: int | None = None
    context: int | None = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict for one found server."""

    found: Found
    passed: bool
    model: str
    gpu: str | None
    vllm_version: str
    explanation: Explanation | None
    failures: tuple[str, ...]
    warnings: tuple[str, ...]
    suggestions: tuple[str, ...]
    slo: Slo


def slo_for(found: Found, concurrency: int | None, context: int | None) -> Slo:
    """The command line wins over the plan annotations written by `render`."""
    claimed, _ = plan_annotations.decode(found.annotations)
    return Slo(
        concurrency if concurrency is not None else claimed.target_concurrency,
        context if context is not None else claimed.target_context,
    )


def version_for(found: Found, given: str | None, default: str) -> VllmVersion:
    """--vllm-version, else the plan annotation, else the image tag (vX.Y.Z), else the default."""
    claimed, _ = plan_annotations.decode(found.annotations)
    for candidate in (given, claimed.vllm_version, found.image_tag):
        if candidate and re.fullmatch(r"v?\d+\.\d+(\.\d+)?.*", candidate):
            try:
                return VllmVersion.parse(candidate)
            except PlanError:
                continue
    return VllmVersion.parse(default)


def removed_flags(
    argv: tuple[str, ...], version: VllmVersion, table: Mapping[str, Mapping[str, Any]]
) -> list[StartupIssue]:
    """Flags the target vLLM release no longer accepts."""
    out = []
    for word in argv:
        flag = word.split("=", 1)[0]
        entry = table.get(flag)
        if entry and entry.get("removed") and version >= VllmVersion.parse(str(entry["removed"])):
            out.append(removed_flag(flag, str(entry["removed"]), str(version)))
    return out


def _try(model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion) -> Explanation | None:
    try:
        return explain(model, gpu, flags, version)
    except PlanError:
        return None


def _warmup_fix(model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion, e: Explanation) -> str | None:
    """The highest --gpu-memory-utilization (down to 0.5) at which the post-allocation warm-up clears its margin."""
    if not e.has(IssueKind.WARMUP_OOM, IssueKind.WARMUP_HEADROOM):
        return None
    util = e.utilization
    while util > 0.5:
        util = round(util - 0.01, 2)
        alt = _try(model, gpu, replace(flags, gpu_memory_utilization=util), version)
        if alt and alt.fits and not alt.has(IssueKind.WARMUP_HEADROOM):
            return f"lower --gpu-memory-utilization to {util} (then {alt.max_concurrency:.1f} requests of " + (
                f"{alt.max_model_len:,} tokens fit)"
            )
    return None


def suggest(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion, e: Explanation, need: int, length: int
) -> list[str]:
    """Concrete changes that fix the problem, each with what it would give (alternatives must start)."""
    warmup = _warmup_fix(model, gpu, flags, version, e)
    out: list[str] = [warmup] if warmup else []
    if e.stage.available_kv > 0:
        shorter = e.longest_len(need, length)
        if not e.fits_one_request(length) and shorter > 0:
            out.append(f"lower --max-model-len to {shorter:,}")
        elif e.concurrency_for(length) < need and shorter >= 256:
            out.append(f"lower --max-model-len to {shorter:,} ({need} requests of that length fit)")
    if flags.kv_cache_dtype == "auto" and e.kv_cache_dtype == "auto":
        alt = _try(model, gpu, replace(flags, kv_cache_dtype="fp8"), version)
        if alt and alt.fits and alt.fits_one_request(length) and alt.concurrency_for(length) >= need:
            out.append(
                f"add --kv-cache-dtype fp8 (then {alt.concurrency_for(length):.1f} requests of {length:,} tokens fit)"
            )
    tp = flags.tensor_parallel_size * 2
    while tp <= 8:
        if model.num_heads % tp == 0:
            alt = _try(model, gpu, replace(flags, tensor_parallel_size=tp), version)
            if alt and alt.fits and alt.fits_one_request(length) and alt.concurrency_for(length) >= need:
                out.append(
                    f"{'or ' if out else ''}-tp {tp} (then {alt.concurrency_for(length):.1f} requests of {length:,} tokens fit)"
                )
                break
        tp *= 2
    per = e.concurrency_for(length)
    if e.fits_one_request(length) and per >= 1 and per < need:
        out.append(
            f"{'or ' if out else ''}run {-(-need // int(per))} replicas ({int(per)} requests of {length:,} tokens each)"
        )
    return out


def evaluate(
    found: Found,
    *,
    resolve: Callable[[str], ModelSpec],
    gpu: Gpu | None,
    version: VllmVersion,
    flag_table: Mapping[str, Mapping[str, Any]],
    slo: Slo,
) -> CheckResult:
    """Predict vLLM's startup with exactly these flags and judge the deployment."""
    claimed, malformed = plan_annotations.decode(found.annotations)
    failures: list[str] = [*found.problems, *malformed]
    warnings: list[str] = []
    cmd = parse_serve_argv(list(found.argv))
    model_ref = cmd.model or ""
    failures += [i.message for i in removed_flags(found.argv, version, flag_table)]

    def result(e: Explanation | None, suggestions: list[str] | None = None) -> CheckResult:
        return CheckResult(
            found,
            not failures,
            model_ref,
            gpu.name if gpu else None,
            str(version),
            e,
            tuple(failures),
            tuple(warnings),
            tuple(suggestions or ()),
            slo,
        )

    if gpu is None:
        failures.append("no GPU type: pass --gpu, or select nodes with nvidia.com/gpu.product")
        return result(None)
    values = dict(cmd.values)
    try:
        model = resolve(model_ref)
        flags = EngineFlags(**values)
        e = explain(model, gpu, flags, version)
    except PlanError as exc:
        failures.append(str(exc))
        return result(None)
    # A warm-up that does not fit outside the budget crashes after the KV cache is allocated: a failure here.
    for issue in e.issues:
        (failures if issue.fatal or issue.kind is IssueKind.WARMUP_HEADROOM else warnings).append(issue.message)
    gpus_engine = e.tp * e.pp
    if found.gpus_per_pod is not None and found.gpus_per_pod * found.pods_per_replica != gpus_engine:
        failures.append(
            f"{found.gpus_per_pod * found.pods_per_replica} GPU(s) requested but TP x PP = "
            f"{e.tp} x {e.pp} = {gpus_engine}: vLLM will not start (or wastes GPUs)"
        )
    if found.has_shm is False and gpus_engine > 1:
        failures.append(
            "TP/PP > 1 without a memory-backed /dev/shm: NCCL will fail or crawl (mount an emptyDir "
            "with medium: Memory at /dev/shm)"
        )
    overstated, understated = plan_annotations.prediction_drift(claimed, e, gpu_key=gpu.key, version=version)
    failures += overstated
    warnings += understated
    replicas = claimed.replicas or 1
    length = slo.context or e.max_model_len
    need = slo.concurrency or 1
    if slo.context and slo.context > e.max_model_len:
        failures.append(f"promised {slo.context:,}-token requests exceed --max-model-len {e.max_model_len:,}")
    elif e.fits and slo.concurrency is not None:
        have = e.concurrency_for(length) * replicas
        if have < slo.concurrency:
            failures.append(
                f"holds {have:.1f} concurrent requests of {length:,} tokens, below the promised {slo.concurrency}"
            )
    fixable = any(f not in overstated for f in failures)  # a false claim is fixed by re-planning, not by flags
    suggestions = suggest(model, gpu, flags, version, e, -(-need // replicas), length) if fixable else []
    return result(e, suggestions)
