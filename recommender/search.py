"""Enumerate launch configurations and evaluate each with the memory model (pure: no I/O).

A candidate is (weights option, KV-cache dtype, TP, PP). For each, `evaluate` picks the flags a careful operator
would set (utilization with warm-up headroom, max_num_seqs from the target, max_model_len from the target or the
longest that serves it), runs `explain` on exactly those flags, and says whether the target is met and why not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from recommender.errors import PlanError
from recommender.hardware import Gpu
from recommender.memory import overheads
from recommender.memory.budget import REDUNDANCY_BUFFER, Explanation, batch_defaults, explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.model.spec import ModelSpec
from recommender.units import GiB

TP_SIZES = (1, 2, 4, 8)
WARMUP_SAFETY = 256 * 1024 * 1024  # extra slack kept outside the budget, beyond vLLM's 150 MiB buffer


@dataclass(frozen=True, slots=True)
class Target:
    """The load to serve: N concurrent requests, of S tokens each (either or both)."""

    concurrency: int | None = None
    context: int | None = None
    min_context: int = 4096  # with N alone: shorter contexts are not worth promising

    def describe(self) -> str:
        """'60 requests at 8,192 tokens' and the like."""
        parts = []
        if self.concurrency is not None:
            parts.append(f"{self.concurrency} concurrent requests")
        if self.context is not None:
            parts.append(f"{self.context:,}-token context")
        return " of ".join(parts) if len(parts) == 2 else parts[0] if parts else "no target"


@dataclass(frozen=True, slots=True)
class Hardware:
    """GPUs available: a type, how many per node, how many nodes, and free memory if shared."""

    gpu: Gpu
    gpus_per_node: int = 1
    nodes: int = 1
    free_bytes: int | None = None

    @property
    def total_gpus(self) -> int:
        """All GPUs across nodes."""
        return self.gpus_per_node * self.nodes


@dataclass(frozen=True, slots=True)
class WeightOption:
    """One way to load the weights: a checkpoint, plus `--quantization` for online methods."""

    model: ModelSpec
    quantization_flag: str | None
    label: str
    quality: int  # 0 = 16-bit, 1 = FP8, 2 = 8-bit integer, 3 = 4-bit


@dataclass(frozen=True, slots=True)
class Candidate:
    """A point of the search space."""

    weights: WeightOption
    kv_cache_dtype: str
    tp: int
    pp: int
    expert_parallel: bool = False

    def describe(self) -> str:
        """'TP=2 PP=1, AWQ 4-bit, KV fp8' (+ ', EP' with expert parallelism)."""
        ep = ", EP" if self.expert_parallel else ""
        return f"TP={self.tp} PP={self.pp}{ep}, {self.weights.label}, KV {self.kv_cache_dtype}"

    @property
    def quality(self) -> int:
        """Lower is better: weight precision first, then KV precision."""
        return self.weights.quality * 2 + (1 if self.kv_cache_dtype != "auto" else 0)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """A candidate with the flags chosen for it, vLLM's predicted figures, and the verdict for the target."""

    candidate: Candidate
    flags: EngineFlags
    explanation: Explanation
    replicas: int
    concurrency: float  # total over replicas, at max_model_len
    feasible: bool
    reason: str

    @property
    def gpus(self) -> int:
        """GPUs used by all replicas."""
        return self.candidate.tp * self.candidate.pp * self.replicas

    @property
    def max_model_len(self) -> int:
        """The context each request may use."""
        return self.explanation.max_model_len


def quality_of(model: ModelSpec, quantization_flag: str | None) -> tuple[int, str]:
    """Rank and label of a weights option."""
    q = model.quant
    if q is None and quantization_flag:
        return 1, f"{quantization_flag.upper()} (online)"
    if q is None:
        return 0, model.dtype
    if q.method == "fp8":
        return 1, q.label
    if q.bits >= 8:
        return 2, q.label
    return 3, q.label


def weight_options(
    base: ModelSpec,
    variants: Sequence[ModelSpec],
    gpu: Gpu,
    *,
    allow_quantization: bool = True,
    only: str | None = None,
) -> list[WeightOption]:
    """Native weights, online FP8 where vLLM runs it on this GPU, and the catalog's pre-quantized variants."""
    options: list[tuple[ModelSpec, str | None]] = [(base, None)]
    cc = gpu.cc_major_minor
    if allow_quantization:
        if base.quant is None and (cc is None or cc >= (8, 0)):
            options.append((base, "fp8"))  # FP8 W8A8 on Ada/Hopper+, FP8 weight-only Marlin on Ampere
        options += [(v, None) for v in variants]
    out = []
    for model, flag in options:
        rank, label = quality_of(model, flag)
        if only is not None and only not in (label.lower(), (flag or ""), (model.quant.method if model.quant else "")):
            continue
        out.append(WeightOption(model, flag, label, rank))
    return out


def kv_dtypes(gpu: Gpu, *, allow_fp8: bool = True) -> tuple[str, ...]:
    """`auto`, plus `fp8` where the GPU supports an fp8 KV cache in vLLM (compute capability 8.0+ / CDNA3)."""
    cc = gpu.cc_major_minor
    return ("auto", "fp8") if allow_fp8 and (cc is None or cc >= (8, 0)) else ("auto",)


def parallel_shapes(model: ModelSpec, hw: Hardware) -> list[tuple[int, int]]:
    """(TP, PP) pairs: TP within a node (heads must divide), PP across nodes."""
    shapes = [(tp, 1) for tp in TP_SIZES if tp <= hw.gpus_per_node and model.num_heads % tp == 0]
    if hw.nodes > 1 and model.num_heads % hw.gpus_per_node == 0 and hw.nodes <= model.num_layers:
        shapes.append((hw.gpus_per_node, hw.nodes))
    return shapes


def _gpus(n: int) -> str:
    return f"{n} GPU" if n == 1 else f"{n} GPUs"


def _round_len(length: int) -> int:
    """Round a context length down to a value operators write: a multiple of 1024 (256 below 4096)."""
    step = 1024 if length >= 4096 else 256 if length >= 512 else 16
    return max(step, length // step * step) if length >= step else length


def _utilization(model: ModelSpec, hw: Hardware, version: VllmVersion, max_seqs: int, max_tokens: int) -> float:
    """The version default, lowered so the post-allocation sampler warm-up (and graphs before 0.21) fit outside."""
    total = hw.gpu.total_bytes
    per_logit = overheads.sampler_bytes_per_logit((version.major, version.minor))
    warmup = int(per_logit * min(max_seqs, max_tokens) * model.vocab_size)
    if not version.cudagraph_memory_before_kv:
        warmup += overheads.cudagraph_bytes(model, layers_on_gpu=model.num_layers, enforce_eager=False)
    room = (total - warmup - WARMUP_SAFETY + REDUNDANCY_BUFFER) / total
    util = min(version.default_gpu_memory_utilization, math.floor(room * 100) / 100)
    if hw.free_bytes is not None:
        util = min(util, math.floor(hw.free_bytes / total * 100) / 100)
    return max(0.05, util)


def evaluate(c: Candidate, target: Target, hw: Hardware, version: VllmVersion) -> Evaluation:
    """Choose flags for one candidate and judge it against the target."""
    model = c.weights.model
    limit = model.max_model_len
    need = target.concurrency or 1
    seqs_default, tokens_default = batch_defaults(hw.gpu, version)
    gpus_per_replica = c.tp * c.pp
    max_replicas = max(1, hw.total_gpus // gpus_per_replica)
    length = target.context or limit
    max_seqs = min(max(need, 1), seqs_default) if target.concurrency else seqs_default
    max_tokens = tokens_default
    util = _utilization(model, hw, version, max_seqs, max_tokens)
    flags = EngineFlags(
        tensor_parallel_size=c.tp,
        pipeline_parallel_size=c.pp,
        quantization=c.weights.quantization_flag,
        enable_expert_parallel=c.expert_parallel,
        kv_cache_dtype=c.kv_cache_dtype,
        gpu_memory_utilization=util,
        max_model_len=min(length, limit),
        max_num_seqs=max_seqs,
        max_num_batched_tokens=max_tokens,
    )
    try:
        probe = explain(model, hw.gpu, flags, version, free_bytes=hw.free_bytes)
    except PlanError as exc:
        return Evaluation(c, flags, _empty(model, hw), 0, 0.0, False, f"{c.describe()}: {exc}")
    label = c.describe()
    st = probe.stage
    if st is None or st.available_kv <= 0 or any("Failed to load" in m for m in probe.errors):
        w = st.weights / GiB if st else 0.0
        return Evaluation(
            c,
            flags,
            probe,
            0,
            0.0,
            False,
            f"{label}: weights {w:.1f} GiB + overheads exceed the {probe.requested_bytes / GiB:.1f} GiB budget per GPU",
        )
    hard = [
        m for m in probe.errors if not m.startswith(("To serve at least one request", "User-specified max_model_len"))
    ]
    if hard:
        return Evaluation(c, flags, probe, 0, 0.0, False, f"{label}: {hard[0]}")
    if target.context is not None and target.context > limit:
        return Evaluation(
            c, flags, probe, 0, 0.0, False, f"{label}: {target.context:,} tokens exceed the model's limit of {limit:,}"
        )
    kv = st.available_kv / GiB
    if target.context is None:
        # N alone: the longest context at which the fewest engines hold N requests, at least `min_context`.
        floor = min(limit, target.min_context)
        best_len, replicas = 0, 1
        for r in range(1, max_replicas + 1):
            best_len = probe.longest_len(math.ceil(need / r), limit)
            replicas = r
            if best_len >= floor:
                break
        if best_len < floor:
            held = probe.concurrency_for(floor) * max_replicas
            return Evaluation(
                c,
                flags,
                probe,
                0,
                held,
                False,
                f"{label}: {kv:.1f} GiB KV per GPU holds {held:.0f} requests of {floor:,} tokens "
                f"on {_gpus(max_replicas * gpus_per_replica)}, below {need}"
                + (
                    f" (N requests fit only up to {best_len:,} tokens; --min-context lowers the floor)"
                    if best_len
                    else ""
                ),
            )
        length = best_len if best_len == limit else _round_len(best_len)
    else:
        per = probe.concurrency_for(length)
        if not probe.fits_one_request(length) or per < 1:
            return Evaluation(
                c,
                flags,
                probe,
                0,
                per,
                False,
                f"{label}: {kv:.1f} GiB KV per GPU cannot hold one {length:,}-token request",
            )
        replicas = max(1, math.ceil(need / math.floor(per))) if target.concurrency else 1
        if replicas > max_replicas:
            engines = f"{max_replicas} engines on {hw.total_gpus} GPUs hold" if max_replicas > 1 else "that is"
            return Evaluation(
                c,
                flags,
                probe,
                0,
                per * max_replicas,
                False,
                f"{label}: weights {st.weights / GiB:.1f} GiB + overheads leave {kv:.1f} GiB KV per GPU "
                f"= {math.floor(per)} requests at {length:,} per engine; {engines} "
                f"{math.floor(per) * max_replicas}, below {need}",
            )
    per_replica_seqs = math.ceil(need / replicas) if target.concurrency else max_seqs
    final_flags = replace(
        flags,
        max_model_len=length,
        max_num_seqs=min(per_replica_seqs, seqs_default) if target.concurrency else max_seqs,
        data_parallel_size=1,
    )
    final = explain(model, hw.gpu, final_flags, version, free_bytes=hw.free_bytes)
    total_conc = final.max_concurrency * replicas
    ok = final.fits and total_conc >= need
    reason = (
        f"{label}: {final.max_concurrency:.1f} requests of {length:,} tokens per replica x {replicas}"
        if ok
        else f"{label}: re-check with the chosen flags failed ({'; '.join(final.errors) or 'concurrency'})"
    )
    return Evaluation(c, final_flags, final, replicas, total_conc, ok, reason)


def _empty(model: ModelSpec, hw: Hardware) -> Explanation:
    return Explanation(
        model=model.name,
        gpu=hw.gpu.name,
        vllm_version="",
        gpu_total_bytes=hw.gpu.total_bytes,
        free_bytes=hw.gpu.total_bytes,
        utilization=0.0,
        requested_bytes=0,
        weight_dtype=model.dtype,
        quantization="",
        kv_cache_dtype="",
        tp=1,
        pp=1,
        dp=1,
        max_model_len=0,
        max_num_seqs=0,
        max_num_batched_tokens=0,
        stage=None,
        stages=(),
        num_gpu_blocks=0,
        kv_cache_tokens=0,
        max_concurrency=0.0,
        blocks_per_request=0,
        fits=False,
    )


def candidates(options: Sequence[WeightOption], model: ModelSpec, hw: Hardware, kv: Sequence[str]) -> list[Candidate]:
    """The full search space, in a deterministic order."""
    out = []
    for w in options:
        for k in kv:
            for tp, pp in parallel_shapes(model, hw):
                out.append(Candidate(w, k, tp, pp))
                # MoE over several GPUs: experts held whole per GPU (--enable-expert-parallel) instead of sliced.
                if model.is_moe and tp > 1:
                    out.append(Candidate(w, k, tp, pp, expert_parallel=True))
    return out
