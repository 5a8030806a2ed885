"""Read and write the performance model's constants: the bundled `profiles/perf.yaml` (fitted by
`benchmarks/fit_perf.py`) and the user's local calibration `$XDG_CONFIG_HOME/vllm-plan/perf-local.yaml`
(written by `vllm-plan calibrate`; `VLLM_PLAN_PERF_LOCAL` names another file, `none` disables it).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from recommender.errors import InputError
from recommender.perf.params import FAMILIES, Efficiency, PerfParams, SustainedGemm
from recommender.resources import profiles_dir
from recommender.safe_load import path_kind

_GLOBAL_KEYS = (
    "bandwidth_efficiency",
    "compute_efficiency",
    "attention_efficiency",
    "triton_attention_efficiency",
    "fp8_moe_efficiency",
    "moe_efficiency",
    "dequant_efficiency",
    "step_overhead_ms",
    "layer_overhead_us",
    "moe_layer_overhead_us",
    "seq_overhead_us",
    "request_overhead_ms",
    "request_latency_ms",
    "allreduce_latency_us",
    "pcie_allreduce_latency_us",
    "link_efficiency",
    "pcie_link_efficiency",
    "eager_layer_overhead_us",
    "trtllm_moe_layer_overhead_us",
    "triton_moe_layer_overhead_us",
    "marlin_moe_layer_overhead_us",
    "trtllm_moe_bandwidth_efficiency",
)
_EFFICIENCY_KEYS = ("bandwidth", "compute", "overhead")


def local_profile_path() -> Path | None:
    """Where `calibrate` writes and `perf` reads the local calibration (None when disabled)."""
    override = os.environ.get("VLLM_PLAN_PERF_LOCAL")
    if override:
        return None if override.lower() == "none" else Path(override).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "vllm-plan" / "perf-local.yaml"


def _efficiency(d: Any, where: str) -> Efficiency:
    if not isinstance(d, Mapping) or set(d) - set(_EFFICIENCY_KEYS):
        raise InputError(f"{where}: expected a mapping with keys among {', '.join(_EFFICIENCY_KEYS)}")
    try:
        values = {k: float(d[k]) for k in _EFFICIENCY_KEYS if k in d}
    except (TypeError, ValueError):
        raise InputError(f"{where}: efficiencies must be numbers") from None
    if any(not 0.01 <= v <= 100 for v in values.values()):
        raise InputError(f"{where}: efficiency multipliers must be between 0.01 and 100")
    return Efficiency(**values)


def params_from_document(doc: Mapping[str, Any], origin: str) -> PerfParams:
    """PerfParams from a perf.yaml document, rejecting unknown keys and non-numbers."""
    g = doc.get("global")
    if not isinstance(g, Mapping) or set(g) - set(_GLOBAL_KEYS):
        raise InputError(f"{origin}: 'global' must map {', '.join(_GLOBAL_KEYS)} to numbers")
    try:
        values: dict[str, Any] = {k: float(g[k]) for k in _GLOBAL_KEYS if k in g}
    except (TypeError, ValueError):
        raise InputError(f"{origin}: global constants must be numbers") from None
    families = doc.get("families") or {}
    if not isinstance(families, Mapping) or set(families) - set(FAMILIES):
        raise InputError(f"{origin}: 'families' keys must be among {', '.join(FAMILIES)}")
    return PerfParams(
        **values,
        families={k: _efficiency(v, f"{origin}: families.{k}") for k, v in families.items()},
        fitted_on=tuple(str(x) for x in doc.get("fitted_on") or ()),
        source=origin,
        expected_errors=_errors(doc.get("expected_error") or {}, origin),
    )


def _errors(d: Any, origin: str) -> dict[str, dict[str, float]]:
    """The expected_error section: {all|family: {ttft, tpot, throughput: relative error}}."""
    if not isinstance(d, Mapping):
        raise InputError(f"{origin}: 'expected_error' must be a mapping")
    out: dict[str, dict[str, float]] = {}
    for key, errs in d.items():
        if (key != "all" and key not in FAMILIES) or not isinstance(errs, Mapping):
            raise InputError(f"{origin}: expected_error.{key}: not a family with error figures")
        try:
            out[str(key)] = {m: float(errs[m]) for m in ("ttft", "tpot", "throughput") if m in errs}
        except (TypeError, ValueError):
            raise InputError(f"{origin}: expected_error.{key}: figures must be numbers") from None
    return out


MAX_PROFILE_BYTES = 4 << 20  # the local calibration file holds a few lines per GPU


def _read(path: Path) -> dict[str, Any]:
    """A YAML mapping from a profile file (the local one is the user's: read bounded, UTF-8, one-line errors)."""
    from recommender.safe_load import UntrustedDocumentError, load_yaml, read_text

    try:
        data = load_yaml(read_text(path, MAX_PROFILE_BYTES))
    except UntrustedDocumentError as exc:
        raise InputError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping")
    return data


@cache
def sustained_gemm() -> SustainedGemm:
    """The measured sustained / datasheet GEMM fractions of profiles/gemm_measured.yaml (bundled, trusted)."""
    from recommender.catalog import load_gpus
    from recommender.perf.sustained import sustained_table

    rows = _read(profiles_dir() / "gemm_measured.yaml")["measured"]
    return sustained_table(((str(r["gpu"]), str(r["dtype"]), float(r["tflops"])) for r in rows), load_gpus())


@cache
def read_ceiling() -> SustainedGemm:
    """The measured streaming / datasheet bandwidth fractions of profiles/bandwidth_measured.yaml (bundled)."""
    from recommender.catalog import load_gpus
    from recommender.perf.sustained import read_ceiling_table

    rows = _read(profiles_dir() / "bandwidth_measured.yaml")["measured"]
    return read_ceiling_table(((str(r["gpu"]), float(r["gbps"])) for r in rows), load_gpus())


@cache
def bundled_params() -> PerfParams:
    """The constants shipped in profiles/perf.yaml, on the measured sustained GEMM and streaming rates."""
    path = profiles_dir() / "perf.yaml"
    doc = params_from_document(_read(path), "profiles/perf.yaml")
    return replace(doc, sustained=sustained_gemm(), read_ceiling=read_ceiling())


def local_calibrations(path: Path | None = None) -> dict[str, Efficiency]:
    """Per-GPU multipliers from the local calibration file ({} when there is none)."""
    where = path or local_profile_path()
    if where is None or path_kind(where) == "missing":
        return {}
    try:
        doc = _read(where)
    except InputError as exc:  # the file is read on every perf and latency plan: say which one and how to skip it
        raise InputError(
            f"local calibration file {exc} (`perf --no-local-calibration` ignores it, VLLM_PLAN_PERF_LOCAL=none "
            "disables it)"
        ) from None
    gpus = doc.get("gpus") or {}
    if not isinstance(gpus, Mapping):
        raise InputError(f"{where}: 'gpus' must map GPU keys to efficiencies")
    return {
        str(k): _efficiency(v.get("efficiency", v) if isinstance(v, Mapping) else v, f"{where}: gpus.{k}")
        for k, v in gpus.items()
    }


def load_params(*, local: bool = True) -> PerfParams:
    """The bundled constants, with the user's local GPU calibrations on top."""
    params = bundled_params()
    if not local:
        return params
    for key, eff in local_calibrations().items():
        params = params.with_local(key, eff)
    return params


def save_local(key: str, eff: Efficiency, record: Mapping[str, Any], path: Path | None = None) -> Path:
    """Write (atomically) GPU `key`'s calibration into the local file, keeping the other GPUs'."""
    where = path or local_profile_path()
    if where is None:
        raise InputError("VLLM_PLAN_PERF_LOCAL=none: local calibration is disabled")
    doc: dict[str, Any] = _read(where) if path_kind(where) != "missing" else {}
    if not isinstance(doc.get("gpus") or {}, Mapping):
        raise InputError(f"{where}: 'gpus' must map GPU keys to efficiencies")
    gpus = dict(doc.get("gpus") or {})
    gpus[key] = {
        "efficiency": {"bandwidth": eff.bandwidth, "compute": eff.compute, "overhead": eff.overhead},
        **record,
    }
    doc = {"comment": "written by `vllm-plan calibrate`; multipliers on profiles/perf.yaml", **doc, "gpus": gpus}
    where.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=where.parent, prefix=".perf-local.", suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yaml.safe_dump(doc, fh, sort_keys=False)
        Path(tmp).replace(where)
    except BaseException:  # a full disk, Ctrl-C: no half-written temporary file left beside the profile
        Path(tmp).unlink(missing_ok=True)
        raise
    return where
