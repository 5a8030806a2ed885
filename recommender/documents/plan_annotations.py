"""The `vllm-plan.io/*` annotations: what `render` writes into manifests, units and scripts, and `check` reads
back (names, encoding and decoding in one place; pure).

They carry the plan's promise (target load, replicas) and its prediction for the command (KV-cache tokens,
concurrency, max-model-len), so `check` can hold a deployment to the load it was planned for and notice when
the command no longer delivers the figures it claims.

Two kinds of promise: a memory plan's `target-concurrency` is N requests of `target-context` tokens held in the
KV cache at once; a latency plan's `target-users` is the closed loop of users its replay of vLLM's scheduler met
the latency targets at, where requests may wait for KV blocks (or be preempted), so only --max-num-seqs must
seat them all. A latency plan carries no `target-concurrency`; `check --concurrency N` asks for the memory promise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Literal

from recommender.documents.plan import GPU_KEY, MAX_COUNT, MAX_REPLICAS, MAX_REQUESTS, MAX_TOKENS, VERSION, Plan
from recommender.errors import FlagError
from recommender.memory.budget import Explanation
from recommender.memory.engine import VllmVersion

PREFIX = "vllm-plan.io/"

# Relative difference between a claimed figure and a fresh prediction that is still the same figure
# (claims are rounded to 2 decimals; a refit of the measured overheads moves them by more).
DRIFT_TOLERANCE = 0.01


@dataclass(frozen=True, slots=True)
class PlanAnnotations:
    """The annotations as typed values; None when absent (or empty)."""

    tool_version: str | None = None
    vllm_version: str | None = None
    gpu: str | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_model_len: int | None = None
    target_concurrency: int | None = None
    target_context: int | None = None
    replicas: int | None = None
    target_users: int | None = None  # a latency plan's closed-loop users (written only when set)


Kind = Literal["text", "version", "gpu", "int", "float"]
# field -> (annotation name, kind, highest value) in the order `render` writes them
_SPEC: dict[str, tuple[str, Kind, float]] = {
    "tool_version": ("tool-version", "text", 0),
    "vllm_version": ("vllm-version", "version", 0),
    "gpu": ("gpu", "gpu", 0),
    "kv_cache_tokens": ("kv-cache-tokens", "int", MAX_COUNT),
    "max_concurrency": ("max-concurrency", "float", MAX_COUNT),
    "max_model_len": ("max-model-len", "int", MAX_TOKENS),
    "target_concurrency": ("target-concurrency", "int", MAX_REQUESTS),
    "target_context": ("target-context", "int", MAX_TOKENS),
    "replicas": ("replicas", "int", MAX_REPLICAS),
    "target_users": ("target-users", "int", MAX_REQUESTS),
}
_ONLY_WHEN_SET = frozenset({"target_users"})  # newer annotations: absent from memory plans' artifacts
NAMES = tuple(PREFIX + name for name, _, _ in _SPEC.values())


def from_plan(plan: Plan, *, tool_version: str, replicas: int | None = None) -> PlanAnnotations:
    """The annotations for a deployment of `plan` (with `replicas` when the operator overrides the count)."""
    perf = plan.best.performance
    return PlanAnnotations(
        tool_version=tool_version,
        vllm_version=plan.inputs.vllm_version,
        gpu=plan.inputs.gpu,
        kv_cache_tokens=plan.prediction.kv_cache_tokens or None,  # none without a KV cache (memory/no_kv.py)
        max_concurrency=plan.prediction.max_concurrency,
        max_model_len=plan.prediction.max_model_len,
        target_concurrency=plan.inputs.concurrency if perf is None else None,
        target_context=plan.inputs.context,
        replicas=replicas if replicas is not None else plan.best.replicas,
        target_users=perf.max_concurrency if perf is not None else None,
    )


def encode(a: PlanAnnotations) -> tuple[tuple[str, str], ...]:
    """(name, value) pairs in a stable order; an absent value is the empty string (a newer one is left out)."""
    return tuple(
        (PREFIX + name, "" if getattr(a, f) is None else str(getattr(a, f)))
        for f, (name, _, _) in _SPEC.items()
        if getattr(a, f) is not None or f not in _ONLY_WHEN_SET
    )


def decode(raw: Mapping[str, str]) -> tuple[PlanAnnotations, tuple[str, ...]]:
    """Typed annotations from a manifest's (untrusted) strings, and one problem per malformed value."""
    values: dict[str, object] = {}
    problems: list[str] = []
    for f in fields(PlanAnnotations):
        name, kind, hi = _SPEC[f.name]
        text = raw.get(PREFIX + name)
        if text is None or text.strip() in ("", "None"):
            continue
        value = _decode_one(text.strip(), kind, hi)
        if value is None:
            shown = repr(text) if len(text) <= 40 else repr(text[:37]) + "..."
            problems.append(f"annotation {PREFIX}{name}: {shown} is not {_WHAT[kind]}")
        else:
            values[f.name] = value
    return PlanAnnotations(**values), tuple(problems)  # type: ignore[arg-type]


_WHAT: dict[Kind, str] = {
    "text": "text",
    "version": "a version like 0.33.0",
    "gpu": "a GPU catalog key",
    "int": "a positive integer in range",
    "float": "a finite number in range",
}


def _decode_one(text: str, kind: Kind, hi: float) -> object | None:
    if kind == "version":
        return text if re.fullmatch(VERSION, text) else None
    if kind == "gpu":
        return text if re.fullmatch(GPU_KEY, text) else None
    if kind == "int":
        return int(text) if re.fullmatch(r"\d{1,18}", text) and 0 < int(text) <= hi else None
    if kind == "float":
        try:
            number = float(text) if re.fullmatch(r"\d{1,18}(\.\d{1,18})?", text) else math.nan
        except ValueError:  # pragma: no cover - the pattern admits only decimals
            return None
        return number if 0 <= number <= hi else None
    return text if len(text) <= 200 and text.isprintable() else None


def prediction_drift(
    claimed: PlanAnnotations, e: Explanation, *, gpu_key: str, version: VllmVersion
) -> tuple[list[str], list[str]]:
    """(failures, warnings) where the claimed figures disagree with a fresh prediction for the same command.

    Compared only when the claim was made for this GPU and vLLM version (a custom card is not identified by
    its key): on other hardware the figures differ by design.

    Overstated figures fail, not warn: they are what reviewers read and what the deployment promises, and a
    command that cannot reach them is either a tampered plan or a stale one; either way the promise is false.
    Understated figures harm no one (the deployment does better than it says): a warning that the plan is stale.
    """
    if not _same_setup(claimed, gpu_key, version):
        return [], []
    failures: list[str] = []
    warnings: list[str] = []
    pairs: tuple[tuple[str, float | None, float], ...] = (
        ("KV-cache tokens", claimed.kv_cache_tokens, e.kv_cache_tokens),
        ("maximum concurrency", claimed.max_concurrency, round(e.max_concurrency, 2)),
        ("max-model-len", claimed.max_model_len, e.max_model_len),
    )
    for what, said, fresh in pairs:
        if said is None or math.isclose(said, fresh, rel_tol=DRIFT_TOLERANCE, abs_tol=0.01):
            continue
        text = f"the plan claims {_number(said)} {what} but these flags give {_number(fresh)}"
        if said > fresh:
            failures.append(f"{text}: a tampered or stale plan (re-run `vllm-plan recommend`)")
        else:
            warnings.append(f"{text}: a stale plan (re-run `vllm-plan recommend`)")
    return failures, warnings


def _same_setup(claimed: PlanAnnotations, gpu_key: str, version: VllmVersion) -> bool:
    if claimed.gpu != gpu_key or gpu_key == "custom" or claimed.vllm_version is None:
        return False
    try:
        return VllmVersion.parse(claimed.vllm_version) == version
    except FlagError:
        return False


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.2f}"
