"""Settings for `recommend` from the command line, environment variables and a project file (I/O edge).

Precedence: command line > environment (VLLM_PLAN_*) > project file (`vllm-plan.yaml` in the working directory,
or `--config FILE`). The file and the environment are untrusted input: every setting is parsed with the same
typed, bounded parser as its command-line option (recommender/values.py), nothing is coerced (`concurrency:
60.7`, `concurrency: true`, `nodes: 0`, `objective: bogus`, `vllm_version: 0.10` are refused), and the file is
read bounded (size, nesting, UTF-8) with one-line errors naming the file and the setting.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recommender import values
from recommender.errors import InputError
from recommender.planner.service_types import PERCENTILES, SERVICE_OBJECTIVES
from recommender.planner.types import OBJECTIVES
from recommender.safe_load import path_kind

PROJECT_FILE = "vllm-plan.yaml"
MAX_PROJECT_BYTES = 1 << 20  # a project file holds a dozen settings
MAX_DEPTH = 8  # a flat mapping of scalars; deeper YAML is refused before it is composed
KEYS: dict[str, values.Parser] = {
    "model": values.TEXT,
    "gpu": values.TEXT,
    "gpus_per_node": values.GPUS_PER_NODE,
    "nodes": values.NODES,
    "gpu_memory_gib": values.GPU_GIB,
    "free_memory_gib": values.FREE_GIB,
    "concurrency": values.REQUESTS,
    "context": values.TOKENS,
    "objective": values.Choice(tuple(dict.fromkeys(OBJECTIVES + SERVICE_OBJECTIVES))),
    "vllm_version": values.TEXT,
    "quantization": values.TEXT,
    # latency planning
    "input_len": values.TOKENS,
    "output_len": values.TOKENS,
    "request_rate": values.RATE,
    "ttft_ms": values.MILLISECONDS,
    "tpot_ms": values.MILLISECONDS,
    "itl_ms": values.MILLISECONDS,
    "slo_percentile": values.Choice(PERCENTILES),
    "gpu_hour_cost": values.PRICE,
}
ENV_PREFIX = "VLLM_PLAN_"


def parse_setting(key: str, value: object, origin: str) -> Any:
    """One setting through its parser, or an InputError naming where it came from."""
    try:
        return KEYS[key].parse(value)
    except ValueError as exc:
        raise InputError(f"{origin}: {key} {exc}") from None


def _load(file: Path) -> object:
    from recommender.safe_load import UntrustedDocumentError, load_yaml, read_text

    try:
        return load_yaml(read_text(file, MAX_PROJECT_BYTES), max_depth=MAX_DEPTH)
    except UntrustedDocumentError as exc:
        raise InputError(f"{file}: {exc}") from None


def read_project_file(path: Path | None, cwd: Path) -> dict[str, Any]:
    """Settings from `--config FILE` or ./vllm-plan.yaml (missing default file = no settings)."""
    file = path or (cwd / PROJECT_FILE)
    if path is None and path_kind(file) == "missing":
        return {}
    data = _load(file)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{file} must be a mapping of settings ({', '.join(KEYS)})")
    settings: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        if key not in KEYS:
            raise InputError(f"{file}: unknown setting {values.shown(raw_key)} (known: {', '.join(KEYS)})")
        if key in settings:
            raise InputError(f"{file}: {key} is given twice")
        if value is not None:
            settings[key] = parse_setting(key, value, str(file))
    return settings


def read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings from VLLM_PLAN_MODEL, VLLM_PLAN_GPU, VLLM_PLAN_CONCURRENCY, ..."""
    out = {}
    for key in KEYS:
        name = ENV_PREFIX + key.upper()
        raw = environ.get(name)
        if raw not in (None, ""):
            out[key] = parse_setting(key, raw, name)
    return out


def merge_settings(
    cli: Mapping[str, Any], config: Path | None, cwd: Path | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Command line over environment over project file."""
    merged = read_project_file(config, cwd or Path.cwd())
    merged.update(read_env(os.environ if environ is None else environ))
    merged.update({k: v for k, v in cli.items() if v is not None})
    return merged


MISSING_HELP = (
    "pass {flag} on the command line, set {env} in the environment, or add `{key}:` to ./vllm-plan.yaml "
    "(or the file given with --config)"
)


def require(settings: Mapping[str, Any], key: str) -> Any:
    """A setting that must be given, with the three ways to give it in the error."""
    if settings.get(key) in (None, ""):  # `--model ""` (an unset shell variable) gives none either
        raise InputError(
            f"no {key.replace('_', ' ')} given: "
            + MISSING_HELP.format(flag="--" + key.replace("_", "-"), env=ENV_PREFIX + key.upper(), key=key)
        )
    return settings[key]
