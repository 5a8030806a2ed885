"""Judge one found vLLM server: would it start, does it meet its SLO, and what to change (pure)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from recommender.check.found import Found
from recommender.documents import plan_annotations
from recommender.errors import PlanError, UnsupportedArchitectureError
from recommender.hardware import Gpu
from recommender.memory import mamba_seqs, unified
from recommender.memory.budget import Explanation, explain
from recommender.memory.engine import V0_REMOVED_IN, EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.model.spec import ModelSpec
from recommender.quoting import quoted
from recommender.serve_args import parse_serve_argv
from recommender.units import GiB


@dataclass(frozen=True, slots=True)
class Slo:
    """The load a deployment promises: N concurrent requests of S tokens held at once, or (a latency plan) a
    closed loop of users that the plan's replay met its targets at, who may wait for KV blocks."""

    concurrency: int | None = None
    context: int | None = None
    users: int | None = None


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
        claimed.target_users,
    )


def version_for(found: Found, given: str | None, default: str) -> VllmVersion:
    """--vllm-version, else the plan annotation, else the image tag (vX.Y.Z), else the default."""
    claimed, _ = plan_annotations.decode(found.annotations)
    for candidate in (given, claimed.vllm_version, found.image_tag):
        release = VllmVersion.from_tag(candidate) if candidate else None
        if release is not None:
            return release
    return VllmVersion.parse(default)


@dataclass(frozen=True, slots=True)
class VllmEnv:
    """The environment variables vLLM reads that change its memory or its limits (vllm/envs.py, 0.33), as the
    server's environment sets them."""

    allow_long_max_model_len: bool = False  # VLLM_ALLOW_LONG_MAX_MODEL_LEN: a too-long max_model_len only warns
    estimate_cudagraphs: bool | None = None  # VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (None: the default)
    notes: tuple[str, ...] = ()
    use_v1: bool | None = None  # VLLM_USE_V1 before 0.11 (None: not set, or a release that ignores it)

    @classmethod
    def read(cls, env: Mapping[str, str], version: VllmVersion) -> VllmEnv:
        """As vLLM parses them: ALLOW_LONG is "1"/"true" (any case); ESTIMATE_CUDAGRAPHS is bool(int(value)),
        which only exists with CUDA-graph profiling in 0.21+; VLLM_USE_V1=0 chose the V0 engine until 0.10."""
        notes = []
        allow = env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0").strip().lower() in ("1", "true")
        estimate = None
        raw = env.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")
        if raw is not None and version >= VllmVersion(0, 21):
            if re.fullmatch(r"\s*[+-]?\d+\s*", raw):
                estimate = bool(int(raw))
            else:
                notes.append(
                    f"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS={quoted(raw)} is not an integer: vLLM fails reading it"
                )
        use_v1, note = _use_v1(env.get("VLLM_USE_V1"), version)
        notes += [note] if note else []
        return cls(allow, estimate, tuple(notes), use_v1)


def _use_v1(raw: str | None, version: VllmVersion) -> tuple[bool | None, str | None]:
    """VLLM_USE_V1 as vLLM 0.7-0.10 read it (envs.py: bool(int(value))); 0.11 and later ignore it (V1 only)."""
    if raw is None:
        return None, None
    if version >= V0_REMOVED_IN:
        return None, f"VLLM_USE_V1={quoted(raw)} is ignored by vLLM {version} (the V1 engine only)"
    if not re.fullmatch(r"\s*[+-]?\d+\s*", raw):
        return None, f"VLLM_USE_V1={quoted(raw)} is not an integer: vLLM fails reading it"
    use_v1 = bool(int(raw))
    return use_v1, None if use_v1 else f"VLLM_USE_V1=0: vLLM {version} runs the V0 engine, judged with its accounting"


@dataclass(frozen=True, slots=True)
class _Engine:
    """What stays fixed while check tries other flags for a server: the model, GPU, release, the server's
    environment and the free memory it runs on."""

    model: ModelSpec
    gpu: Gpu
    version: VllmVersion
    vllm_env: VllmEnv
    free_bytes: int | None

    def explain(self, flags: EngineFlags) -> Explanation:
        return explain(
            self.model,
            self.gpu,
            flags,
            self.version,
            free_bytes=self.free_bytes,
            estimate_cudagraphs=self.vllm_env.estimate_cudagraphs,
        )

    def attempt(self, flags: EngineFlags) -> Explanation | None:
        """The explanation with these flags, or None when they cannot be planned at all."""
        try:
            return self.explain(flags)
        except PlanError:
            return None


def _warmup_fix(engine: _Engine, flags: EngineFlags, e: Explanation) -> str | None:
    """The highest --gpu-memory-utilization (down to 0.5) at which the post-allocation warm-up clears its margin."""
    if not e.has(IssueKind.WARMUP_OOM, IssueKind.WARMUP_HEADROOM):
        return None
    util = e.utilization
    while util > 0.5:
        util = round(util - 0.01, 2)
        alt = engine.attempt(replace(flags, gpu_memory_utilization=util))
        if alt and alt.fits and not alt.has(IssueKind.WARMUP_HEADROOM):
            return f"lower --gpu-memory-utilization to {util} (then {alt.max_concurrency:.1f} requests of " + (
                f"{alt.max_model_len:,} tokens fit)"
            )
    return None


def _no_kv_budget_fix(engine: _Engine, flags: EngineFlags, e: Explanation) -> str | None:
    """No KV cache (memory/no_kv.py): the warm-up of --max-num-batched-tokens tokens does not fit the free memory.
    The largest token budget (at least --max-model-len: no chunked prefill) whose warm-up clears its margin."""
    if not e.has(IssueKind.NO_KV_WARMUP_OOM, IssueKind.NO_KV_WARMUP_MARGIN):
        return None

    def clears(tokens: int) -> Explanation | None:
        seqs = min(e.max_num_seqs, tokens)
        alt = engine.attempt(replace(flags, max_num_batched_tokens=tokens, max_num_seqs=seqs))
        return alt if alt and alt.fits and not alt.at_risk else None

    lo, hi = e.max_model_len, e.max_num_batched_tokens
    best = clears(lo)
    if best is None:
        return None
    while hi - lo > max(1, e.max_model_len // 2):
        mid = (lo + hi) // 2
        found = clears(mid // e.max_model_len * e.max_model_len or mid)
        lo, hi, best = (mid, hi, found) if found else (lo, mid, best)
    tokens = best.max_num_batched_tokens
    seqs = f" and --max-num-seqs to {best.max_num_seqs:,}" if best.max_num_seqs < e.max_num_seqs else ""
    return (
        f"lower --max-num-batched-tokens to {tokens:,}{seqs} (then {int(best.max_concurrency):,} requests of "
        f"{best.max_model_len:,} tokens a step)"
    )


def _free_memory_fix(engine: _Engine, flags: EngineFlags, e: Explanation) -> str | None:
    """The --gpu-memory-utilization the free memory allows, when vLLM refuses to start for want of it (on an idle
    discrete card, the free memory vLLM's snapshot reads after its CUDA context: memory/full_budget.py)."""
    issue = e.issue(IssueKind.FREE_BELOW_BUDGET)
    snapshot = None if issue is None or engine.gpu.unified_memory else issue.available_bytes
    free_bytes = engine.free_bytes if engine.free_bytes is not None else snapshot
    if free_bytes is None or issue is None:
        return None
    util = math.floor(free_bytes / engine.gpu.total_bytes * 100) / 100
    alt = engine.attempt(replace(flags, gpu_memory_utilization=util))
    while util > 0.5 and alt and (not alt.fits or alt.has(IssueKind.WARMUP_HEADROOM)):
        # the warm-ups after the KV cache need free memory beyond the budget too (memory/warmup.py)
        util = round(util - 0.01, 2)
        alt = engine.attempt(replace(flags, gpu_memory_utilization=util))
    if not alt or not alt.fits:
        return None
    return (
        f"lower --gpu-memory-utilization to {util} (what {free_bytes / GiB:.2f} GiB free allows; then "
        f"{alt.max_concurrency:.1f} requests of {alt.max_model_len:,} tokens fit)"
    )


def _mamba_seqs_fix(engine: _Engine, flags: EngineFlags, e: Explanation) -> str | None:
    """A hybrid model's pool holds fewer Mamba state blocks than max_num_seqs, or too few to spare
    (memory/mamba_seqs.py): the --max-num-seqs that keeps the margin."""
    if not e.has(IssueKind.MAMBA_BLOCKS, IssueKind.MAMBA_BLOCKS_MARGIN):
        return None
    seqs = mamba_seqs.safe_max_num_seqs(e.num_gpu_blocks)
    alt = engine.attempt(replace(flags, max_num_seqs=seqs))
    if not alt or not alt.fits or alt.at_risk:
        return None
    return (
        f"lower --max-num-seqs to {seqs} (with it the KV pool is predicted to hold {alt.num_gpu_blocks:,} Mamba state "
        "blocks, one per decode sequence: fewer sequences leave the profiling pass more room)"
    )


def _host_share_fix(engine: _Engine, flags: EngineFlags, e: Explanation) -> str | None:
    """An integrated GPU whose host holds part of the memory at startup (memory/unified.py), with no free memory
    stated: the utilization that leaves the host its usual share."""
    util = unified.max_utilization(engine.gpu) if engine.free_bytes is None else None
    if util is None or not e.has(IssueKind.FREE_BELOW_BUDGET, IssueKind.UNIFIED_MEMORY_HEADROOM):
        return None
    alt = engine.attempt(replace(flags, gpu_memory_utilization=util))
    if not alt or not alt.fits or alt.at_risk:
        return None
    return (
        f"lower --gpu-memory-utilization to {util} (the {engine.gpu.name}'s host keeps its share of the unified "
        f"memory; then {alt.max_concurrency:.1f} requests of {alt.max_model_len:,} tokens fit)"
    )


def _block_size_fix(engine: _Engine, flags: EngineFlags, e: Explanation) -> str | None:
    """A --block-size no attention backend takes: without it vLLM picks one every backend of the model takes."""
    if not e.has(IssueKind.BLOCK_SIZE_UNSUPPORTED):
        return None
    alt = engine.attempt(replace(flags, block_size=None))
    if not alt or not alt.fits:
        return None
    return f"remove --block-size (vLLM then picks one; {alt.max_concurrency:.1f} requests of {alt.max_model_len:,} tokens fit)"


def _seats_fix(engine: _Engine, flags: EngineFlags, e: Explanation, need: int, length: int) -> str | None:
    """--max-num-seqs below the requests promised per replica: raise it, when the engine starts with that many
    (and --max-num-batched-tokens, which vLLM wants at least as large) and its KV cache holds them."""
    seqs = -(-need // e.dp)
    if e.max_num_seqs >= seqs:
        return None
    # without a KV cache the requests a step runs also need their tokens in the step's budget (memory/no_kv.py)
    tokens = max(e.max_num_batched_tokens, seqs * length if e.no_kv_cache else seqs)
    alt = engine.attempt(replace(flags, max_num_seqs=seqs, max_num_batched_tokens=tokens))
    if not (alt and alt.fits and alt.fits_one_request(length) and alt.concurrency_for(length) >= seqs):
        return None
    more = f" and --max-num-batched-tokens to {tokens:,}" if tokens > e.max_num_batched_tokens else ""
    return (
        f"raise --max-num-seqs to {seqs:,}{more} ({alt.concurrency_for(length):.1f} requests of {length:,} tokens fit)"
    )


def _shorter_fix(engine: _Engine, e: Explanation, need: int, length: int, seat: str) -> str | None:
    """The longest --max-model-len that starts (and holds `need` requests), never above the model's own limit
    unless VLLM_ALLOW_LONG_MAX_MODEL_LEN lifts it (it offered 117,968 for a 32,768-token model asked for 200k)."""
    above = e.issue(IssueKind.MAX_LEN_ABOVE_MODEL)
    model_max = above.max_len if above and not engine.vllm_env.allow_long_max_model_len else None
    limit = min(length, model_max) if model_max else length
    if e.stage.available_kv <= 0:
        return f"lower --max-model-len to {limit:,} (the model's limit){seat}" if limit < length else None
    shorter = e.longest_len(need, limit)
    why = " (the model's limit)" if shorter == model_max else ""
    if (not e.fits_one_request(length) or limit < length) and shorter > 0:
        return f"lower --max-model-len to {shorter:,}{why}{seat}"
    if e.concurrency_for(length) < need and shorter >= 256:
        each = f" in each of {e.dp} data-parallel engines" if e.dp > 1 else ""
        return f"lower --max-model-len to {shorter:,}{seat} ({need} requests of that length fit{each})"
    return None


def _seated(engine: _Engine, flags: EngineFlags, e: Explanation, need: int) -> tuple[EngineFlags, Explanation, str]:
    """The flags every other fix starts from: --max-num-seqs raised to the `need` requests per engine when it seats
    fewer (a fix that holds them in KV but runs fewer at once would still fail), re-predicted, with its wording."""
    if e.max_num_seqs >= need:
        return flags, e, ""
    seated = replace(flags, max_num_seqs=need, max_num_batched_tokens=max(e.max_num_batched_tokens, need))
    alt = engine.attempt(seated)
    return (seated, alt, f" and raise --max-num-seqs to {need:,}") if alt else (flags, e, "")


def suggest(engine: _Engine, flags: EngineFlags, e: Explanation, need: int, length: int) -> list[str]:
    """Concrete changes that fix the problem, each with what it would give (alternatives must start, on the
    same free memory). `need` is per replica; each data-parallel rank is an engine with its own KV cache."""
    first = (
        _free_memory_fix(engine, flags, e)
        or _no_kv_budget_fix(engine, flags, e)
        or _warmup_fix(engine, flags, e)
        or _mamba_seqs_fix(engine, flags, e)
        or _host_share_fix(engine, flags, e)
        or _block_size_fix(engine, flags, e)
    )
    out: list[str] = [first] if first else []
    seats = _seats_fix(engine, flags, e, need, length)
    if seats:
        out.append(seats)
    need = -(-need // e.dp)
    held = min(int(e.concurrency_for(length)), e.max_num_seqs) * e.dp if e.fits_one_request(length) else 0
    flags, e, seat = _seated(engine, flags, e, need)
    shorter = _shorter_fix(engine, e, need, length, seat)
    if shorter:
        out.append(shorter)
    if flags.kv_cache_dtype == "auto" and e.kv_cache_dtype == "auto" and not e.no_kv_cache:
        alt = engine.attempt(replace(flags, kv_cache_dtype="fp8"))
        if alt and alt.fits and alt.fits_one_request(length) and alt.concurrency_for(length) >= need:
            out.append(
                f"add --kv-cache-dtype fp8{seat} (then {alt.concurrency_for(length):.1f} requests of {length:,} "
                "tokens fit)"
            )
    tp = flags.tensor_parallel_size * 2
    while tp <= (engine.gpu.max_per_node or 8):  # a DGX Spark has one GPU: -tp 2 is a second machine
        if engine.model.num_heads % tp == 0:
            alt = engine.attempt(replace(flags, tensor_parallel_size=tp))
            if alt and alt.fits and alt.fits_one_request(length) and alt.concurrency_for(length) >= need:
                out.append(
                    f"{'or ' if out else ''}-tp {tp}{seat} (then {alt.concurrency_for(length):.1f} requests of "
                    f"{length:,} tokens fit)"
                )
                break
        tp *= 2
    if held >= 1 and held < need * e.dp:
        out.append(
            f"{'or ' if out else ''}run {-(-need * e.dp // held)} replicas ({held} requests of {length:,} tokens each)"
        )
    return out


def startup_fixes(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, version: VllmVersion, e: Explanation, *, free_bytes: int | None
) -> list[str]:
    """`suggest` for a server that has to start and serve one request of its --max-model-len (what `explain` prints
    under a failing verdict), with the environment vLLM reads left at its defaults."""
    return suggest(_Engine(model, gpu, version, VllmEnv(), free_bytes), flags, e, 1, e.max_model_len)


def evaluate(
    found: Found,
    *,
    resolve: Callable[[str], ModelSpec],
    gpu: Gpu,
    version: VllmVersion,
    slo: Slo,
) -> CheckResult:
    """Predict vLLM's startup with exactly these flags (on the free memory a plan was made for, when it says) and
    judge the memory verdict and the promise. vLLM's argument errors, flags the release lacks, the GPU type and
    count and /dev/shm are check.run's, before this."""
    claimed, malformed = plan_annotations.decode(found.annotations)
    cmd = parse_serve_argv(list(found.argv))
    model_ref = cmd.model or ""
    vllm_env = VllmEnv.read(found.env, version)
    try:
        if found.free_bytes is not None and found.free_bytes > gpu.total_bytes:
            raise PlanError(
                f"the plan's free memory ({found.free_bytes / GiB:.2f} GiB) is more than the {gpu.name} has"
            )
        engine = _Engine(resolve(model_ref), gpu, version, vllm_env, found.free_bytes)
        flags = replace(cmd.engine_flags(), use_v1=vllm_env.use_v1)
        e = engine.explain(flags)
    except UnsupportedArchitectureError:
        raise  # what is not modelled here (an online quantization, an architecture) is no verdict on the server
    except PlanError as exc:
        failed = (*found.problems, *malformed, str(exc))
        return CheckResult(found, False, model_ref, gpu.name, str(version), None, failed, vllm_env.notes, (), slo)
    verdict = startup_verdict(e, vllm_env)
    overstated, understated = plan_annotations.prediction_drift(claimed, e, gpu_key=gpu.key, version=version)
    replicas = claimed.replicas or 1
    broken = _promise_failures(e, slo, replicas, starts=verdict.starts)
    failures = (*found.problems, *malformed, *verdict.failures, *overstated, *broken)
    warnings = (*vllm_env.notes, *verdict.warnings, *understated, *_queueing_note(e, slo, replicas))
    suggestions: list[str] = []
    if found.problems or malformed or verdict.failures or broken:  # a false claim alone is fixed by re-planning
        need, length = -(-(slo.concurrency or 1) // replicas), slo.context or e.max_model_len
        suggestions = suggest(engine, flags, e, need, length)
    return CheckResult(
        found, not failures, model_ref, gpu.name, str(version), e, failures, warnings, tuple(suggestions), slo
    )


@dataclass(frozen=True, slots=True)
class StartupVerdict:
    """The startup issues as check reports them: failures (vLLM does not start, or crashes in its warm-up) and
    warnings; `starts` when no issue stops vLLM before it serves (with the server's environment)."""

    failures: tuple[str, ...]
    warnings: tuple[str, ...]
    starts: bool


def startup_verdict(e: Explanation, vllm_env: VllmEnv) -> StartupVerdict:
    """Each issue by its kind: VLLM_ALLOW_LONG_MAX_MODEL_LEN turns the too-long max_model_len error into vLLM's
    warning; a warm-up that does not fit outside the budget crashes after the KV cache is allocated (a failure)."""
    failures: list[str] = []
    warnings: list[str] = []
    starts = True
    for issue in e.issues:
        if issue.kind is IssueKind.MAX_LEN_ABOVE_MODEL and vllm_env.allow_long_max_model_len:
            warnings.append(allowed_long_warning(issue))
            continue
        starts = starts and not issue.fatal
        fatal = issue.fatal or issue.kind is IssueKind.WARMUP_HEADROOM or issue.kind.at_risk
        (failures if fatal else warnings).append(issue.message)
    return StartupVerdict(tuple(failures), tuple(warnings), starts)


def allowed_long_warning(issue: StartupIssue) -> str:
    """What vLLM does instead of the too-long max_model_len error when VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set."""
    return (
        f"VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, so vLLM only warns: max_model_len {issue.requested} is above the "
        f"model's {issue.max_len} (positions past it give NaN with RoPE, out-of-bounds errors with absolute positions)"
    )


def _promise_failures(e: Explanation, slo: Slo, replicas: int, *, starts: bool) -> list[str]:
    """Where the promised load (requests of a length, over the replicas) is more than the engine holds."""
    length = slo.context or e.max_model_len
    if slo.context and slo.context > e.max_model_len:
        return [f"promised {slo.context:,}-token requests exceed --max-model-len {e.max_model_len:,}"]
    if starts and slo.concurrency is not None:
        have = e.concurrency_for(length) * e.dp * replicas
        if have < slo.concurrency:
            why = (
                f"; the plan promises its {slo.users:,} users latency, not this: they wait for KV blocks as its "
                "replay counted"
                if slo.users is not None
                else ""
            )
            each = f" ({have / e.dp / replicas:.1f} in each of {e.dp} data-parallel engines)" if e.dp > 1 else ""
            return [
                f"holds {have:.1f} concurrent requests of {length:,} tokens{each}, below the promised "
                f"{slo.concurrency}{why}"
            ]
    seated = slo.concurrency if slo.concurrency is not None else slo.users
    if starts and seated is not None:
        # vLLM runs no more than --max-num-seqs at once (per data-parallel rank), whatever the KV cache holds
        runs = e.max_num_seqs * e.dp * replicas
        if runs < seated:
            times = f" x {e.dp * replicas} engines" if e.dp * replicas > 1 else ""
            whom = "promised" if slo.concurrency is not None else "plan's users,"
            return [
                f"--max-num-seqs {e.max_num_seqs:,}{times} runs at most {runs:,} requests at once, below the {whom} {seated:,}"
            ]
    return []


def _queueing_note(e: Explanation, slo: Slo, replicas: int) -> list[str]:
    """A latency plan whose users are more than the KV cache holds at full length: fine by its replay, said."""
    if slo.users is None or slo.concurrency is not None:
        return []
    length = slo.context or e.max_model_len
    have = e.concurrency_for(length) * e.dp * replicas
    if have >= slo.users:
        return []
    return [
        f"the KV cache holds {have:.1f} requests of {length:,} tokens at once, for the plan's {slo.users:,} users: "
        "the rest wait for KV blocks or are preempted, which the plan's latency replay counted "
        f"(`--concurrency {slo.users}` would require all held at once)"
    ]
