"""The server's environment in a pasted command (`VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve ...`, `docker run -e
VLLM_USE_V1=0 ...`), read and applied as `check` applies it (check/evaluate.py VllmEnv), so that `explain` and
`check` give one command one verdict: VLLM_USE_V1 picks the engine, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS the
KV budget, and VLLM_ALLOW_LONG_MAX_MODEL_LEN turns the too-long --max-model-len error into vLLM's warning."""

from __future__ import annotations

from dataclasses import replace

from recommender.check.evaluate import VllmEnv, allowed_long_warning
from recommender.cli.pasted import pasted_command
from recommender.memory.budget import Explanation
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind


def pasted_env(model_arg: str | None, serve: tuple[str, ...], version: VllmVersion) -> VllmEnv:
    """The vLLM environment variables the pasted command sets (none without one)."""
    pasted = pasted_command(model_arg, serve)
    return VllmEnv.read(pasted.found.env, version) if pasted is not None else VllmEnv()


def with_engine_choice(flags: EngineFlags, env: VllmEnv) -> EngineFlags:
    """VLLM_USE_V1 as the release reads it (before 0.11), on the flags the engine is chosen from."""
    return replace(flags, use_v1=env.use_v1) if env.use_v1 is not None else flags


def applied(result: Explanation, env: VllmEnv) -> tuple[Explanation, tuple[str, ...]]:
    """The explanation as that environment makes it, and the notes saying what the environment changed."""
    lifted = result.issue(IssueKind.MAX_LEN_ABOVE_MODEL)
    if lifted is None or not env.allow_long_max_model_len:
        return result, env.notes
    kept = tuple(i for i in result.issues if i.kind is not IssueKind.MAX_LEN_ABOVE_MODEL)
    return replace(result, issues=kept), (*env.notes, allowed_long_warning(lifted))
