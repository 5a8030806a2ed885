"""Where a setting the command line did not give came from (VLLM_PLAN_<KEY>, else the project file), so that an
error about its value names it: a stale `export VLLM_PLAN_GPU=...` or a `gpu:` in ./vllm-plan.yaml is otherwise an
'unknown GPU' the user never typed."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recommender.errors import PlanError
from recommender.project import ENV_PREFIX, PROJECT_FILE, read_project_file


def origin_of(key: str, config: Path | None = None) -> str | None:
    """`VLLM_PLAN_<KEY>` when it is set, else `FILE: key` when the project file holds the key, else None."""
    name = ENV_PREFIX + key.upper()
    if os.environ.get(name) not in (None, ""):
        return name
    try:
        held = key in read_project_file(config, Path.cwd())
    except PlanError:
        return None
    return f"{config or Path.cwd() / PROJECT_FILE}: {key}" if held else None


@contextmanager
def said_from(origin: str | None) -> Iterator[None]:
    """Errors raised inside prefixed with where the value came from (`VLLM_PLAN_GPU: unknown GPU 'x' ...`)."""
    try:
        yield
    except PlanError as exc:
        if origin is None:
            raise
        named = copy.copy(exc)
        named.args = (f"{origin}: {exc}",)
        raise named from None
