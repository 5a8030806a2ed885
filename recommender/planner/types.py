"""The planner's values: the target load, the hardware, the search space's points and their verdicts (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from recommender.hardware import Gpu
from recommender.memory.budget import Explanation
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.precision import auto_kv_is_fp8
from recommender.model.spec import ModelSpec

Objective = Literal["min-gpus", "quality", "max-concurrency", "max-context"]
OBJECTIVES: tuple[Objective, ...] = ("min-gpus", "quality", "max-concurrency", "max-context")


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
            parts.append(f"{self.concurrency:,} concurrent request{'' if self.concurrency == 1 else 's'}")
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


# Weight precision ranks (planner/space.py precision_of) at or below this are near-lossless: 16-bit, FP8 and 8-bit
# integer weights. 4-bit weights (AWQ/GPTQ int4, NVFP4, W4A16) cost quality the user did not ask to trade, so the
# planner takes them only when no 8/16-bit option serves the target on the GPUs searched, and otherwise names them
# as the way to fewer GPUs (PlanResult.fewer_gpus). `--quantization awq` or a 4-bit checkpoint as the model still
# plans them directly.
NEAR_LOSSLESS_RANK = 2


@dataclass(frozen=True, slots=True)
class WeightOption:
    """One way to load the weights: a checkpoint, plus `--quantization` for online methods."""

    model: ModelSpec
    quantization_flag: str | None
    label: str
    precision_rank: int  # lower is better: 0 = 16-bit, 1 = FP8, 2 = 8-bit integer, 3 = 4-bit
    # On ties, lower is better: 0 the model's own weights or its publisher's checkpoint, 1 another publisher's
    # checkpoint, 2 quantized online at load (`--quantization fp8`: per-tensor scales, no calibration).
    provenance: int = 0

    @property
    def tier(self) -> int:
        """0 for near-lossless weights (16-bit, FP8, 8-bit integer; NEAR_LOSSLESS_RANK), 1 for 4-bit."""
        return 0 if self.precision_rank <= NEAR_LOSSLESS_RANK else 1


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
        return f"TP={self.tp} PP={self.pp}{ep}, {self.weights.label}, KV {self.kv_label}"

    @property
    def kv_label(self) -> str:
        """The KV flag, with what `auto` stores where that is not the model dtype: 'auto (fp8)'."""
        model = self.weights.model
        if model.encoder_only:  # vLLM keeps no KV cache for it (memory/no_kv.py)
            return "none"
        if self.kv_cache_dtype == "auto" and auto_kv_is_fp8(model, model.quant):
            return "auto (fp8)"
        return self.kv_cache_dtype

    @property
    def precision_rank(self) -> int:
        """Lower is better: weight precision first, then KV precision (an `auto` cache the checkpoint stores in fp8
        counts as fp8, as it is)."""
        return self.weights.precision_rank * 2 + (0 if self.kv_label == "auto" else 1)


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


@dataclass(frozen=True, slots=True)
class Unevaluable:
    """A rejected candidate that could not be evaluated at all (its flags are refused before any figure exists)."""

    candidate: Candidate
    flags: EngineFlags
    reason: str
    feasible: Literal[False] = False
    concurrency: float = 0.0
    replicas: int = 0


Verdict = Evaluation | Unevaluable


@dataclass(frozen=True, slots=True)
class SearchPolicy:
    """What the search may change."""

    objective: Objective = "min-gpus"
    allow_quantization: bool = True
    only_quantization: str | None = None
    allow_fp8_kv: bool = True
    alternatives: int = 5


@dataclass(frozen=True, slots=True)
class PlanResult:
    """The chosen configuration, the runners-up, and why everything else was rejected."""

    target: Target
    hardware: Hardware
    version: VllmVersion
    policy: SearchPolicy
    best: Evaluation
    alternatives: tuple[Evaluation, ...]
    rejected: tuple[Verdict, ...]
    searched: int
    # The best feasible option on fewer GPUs than `best` when the ranking put a near-lossless `best` before it
    # (4-bit weights, see NEAR_LOSSLESS_RANK): what trading precision would save.
    fewer_gpus: Evaluation | None = None
    # With N alone: the longest-context option on more GPUs than `best`, weights as precise, when it serves at least
    # twice `best`'s context (what the GPUs the fewest-GPUs rule leaves idle would buy; search.py _longer_context).
    longer_context: Evaluation | None = None
