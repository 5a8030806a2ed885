"""Settings for `recommend` from the command line, environment variables and a project file (I/O edge).

Precedence: command line > environment (VLLM_PLAN_*) > project file (`vllm-plan.yaml` in the working directory,
or `--config FILE`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recommender.errors import InputError

PROJECT_FILE = "vllm-plan.yaml"
KEYS = {
    "model": str,
    "gpu": str,
    "gpus_per_node": int,
    "nodes": int,
    "gpu_memory_gib": float,
    "free_memory_gib": float,
    "concurrency": int,
    "context": str,
    "objective": str,
    "vllm_version": str,
    "quantization": str,
    # latency planning
    "input_len": int,
    "output_len": int,
    "request_rate": float,
    "ttft_ms": float,
    "tpot_ms": float,
    "itl_ms": float,
    "slo_percentile": str,
    "gpu_hour_cost": float,
}
ENV_PREFIX = "VLLM_PLAN_"


def _coerce(key: str, value: Any, origin: str) -> Any:
    kind = KEYS[key]
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise InputError(f"{origin}: {key} must be {kind.__name__}, got {value!r}") from None


def read_project_file(path: Path | None, cwd: Path) -> dict[str, Any]:
    """Settings from `--config FILE` or ./vllm-plan.yaml (missing default file = no settings)."""
    import yaml

    file = path or (cwd / PROJECT_FILE)
    if path is None and not file.exists():
        return {}
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {file}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InputError(f"{file} is not valid YAML{where}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{file} must be a mapping of settings ({', '.join(KEYS)})")
    data = {str(k).replace("-", "_"): v for k, v in data.items()}
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise InputError(f"{file}: unknown settings {', '.join(unknown)} (known: {', '.join(KEYS)})")
    return {k: _coerce(k, v, str(file)) for k, v in data.items() if v is not None}


def read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings from VLLM_PLAN_MODEL, VLLM_PLAN_GPU, VLLM_PLAN_CONCURRENCY, ..."""
    out = {}
    for key in KEYS:
        raw = environ.get(ENV_PREFIX + key.upper())
        if raw not in (None, ""):
            out[key] = _coerce(key, raw, ENV_PREFIX + key.upper())
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
    if settings.get(key) is None:
        raise InputError(
            f"no {key.replace('_', ' ')} given: "
            + MISSING_HELP.format(flag="--" + key.replace("_", "-"), env=ENV_PREFIX + key.upper(), key=key)
        )
    return settings[key]
