"""Load the bundled GPU and model catalogs from profiles/ (YAML files with per-figure sources)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from recommender.hardware import Gpu
from recommender.node_gpu import LABEL_KINDS, InstanceType, NodeGpuTables, NodeLabel
from recommender.resources import profiles_dir
from recommender.units import MiB

_GPU_KEYS = {
    "key",
    "name",
    "vendor",
    "aliases",
    "memory",
    "bandwidth_gbps",
    "dense_tflops",
    "compute_capability",
    "supports",
    "interconnect",
    "gfd_product_label",
    "estimated",
    "sources",
}


_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: 10x faster


def _load_yaml(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as fh:
        data = yaml.load(fh, Loader=_Loader)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping")
    return data


def gpu_from_profile(d: dict[str, Any], origin: str) -> Gpu:
    """Build a Gpu from one profile document, rejecting unknown keys."""
    unknown = set(d) - _GPU_KEYS
    if unknown:
        raise ValueError(f"{origin}: unknown keys {sorted(unknown)}")
    mem, tf, sup = d["memory"], d.get("dense_tflops") or {}, d.get("supports") or {}
    return Gpu(
        key=d["key"],
        name=d["name"],
        vendor=d["vendor"],
        total_bytes=int(mem["cuda_total_mib"]) * MiB,
        marketed_gb=mem.get("marketed_gb"),
        memory_type=str(mem.get("type", "")),
        unified_memory=bool(mem.get("unified", False)),
        bandwidth_gbps=d.get("bandwidth_gbps"),
        bf16_tflops=tf.get("bf16"),
        fp16_tflops=tf.get("fp16"),
        fp8_tflops=tf.get("fp8"),
        fp4_tflops=tf.get("fp4"),
        compute_capability=str(d["compute_capability"]),
        fp8=bool(sup.get("fp8")),
        fp4=bool(sup.get("fp4")),
        interconnect=str(d.get("interconnect", "")),
        gfd_product_label=d.get("gfd_product_label"),
        aliases=tuple(d.get("aliases") or ()),
        estimated=tuple(d.get("estimated") or ()),
        sources=dict(d.get("sources") or {}),
    )


@cache
def load_gpus() -> tuple[Gpu, ...]:
    """Every GPU profile, sorted by vendor then memory."""
    folder = profiles_dir() / "gpus"
    gpus = [gpu_from_profile(_load_yaml(p), p.name) for p in sorted(folder.glob("*.yaml"))]
    return tuple(sorted(gpus, key=lambda g: (g.vendor != "nvidia", g.total_bytes, g.key)))


@cache
def load_node_gpu_tables() -> NodeGpuTables:
    """profiles/instance-types.yaml: cloud instance types and node labels that name a GPU (each row sourced)."""
    d = _load_yaml(profiles_dir() / "instance-types.yaml")
    sources = d["sources"]
    rows = [
        InstanceType(str(r["name"]), provider, str(r["gpu"]), int(r["count"]), sources[r["source"]])
        for provider, items in d["instance_types"].items()
        for r in items
    ]
    labels = tuple(_node_label(item, sources) for item in d["labels"])
    return NodeGpuTables(
        instance_types={r.name.lower(): r for r in rows},
        labels=labels,
        count_labels=tuple(d["count_labels"]),
        memory_labels=tuple(d["memory_labels"]),
        mig_labels=tuple(d.get("mig_labels") or ()),
    )


def _node_label(item: dict[str, Any], sources: dict[str, str]) -> NodeLabel:
    if item["kind"] not in LABEL_KINDS:
        raise ValueError(f"instance-types.yaml: label {item['key']}: unknown kind {item['kind']!r}")
    values = {
        str(v).lower(): tuple(keys) if isinstance(keys, list) else (str(keys),)
        for v, keys in (item.get("values") or {}).items()
    }
    return NodeLabel(item["key"], item["kind"], values, sources.get(item["source"], item["source"]))


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """One bundled model: its real config.json (and quant config) with where it came from."""

    id: str
    source: str
    config: dict[str, Any]
    hf_quant_config: dict[str, Any] | None
    variants: tuple[str, ...]
    base_model: str | None
    published_params: int | None
    published_params_source: str | None
    note: str | None


@cache
def model_files() -> dict[str, Path]:
    """Bundled model files keyed by lower-cased Hugging Face id (file `org--name.yaml` holds `org/name`)."""
    return {p.stem.replace("--", "/", 1).lower(): p for p in sorted((profiles_dir() / "models").glob("*.yaml"))}


@cache
def load_model(model_id: str) -> CatalogModel | None:
    """One bundled model by Hugging Face id (case-insensitive), or None."""
    path = model_files().get(model_id.lower())
    return _model_from_profile(_load_yaml(path)) if path else None


def load_models() -> dict[str, CatalogModel]:
    """Every bundled model keyed by lower-cased Hugging Face id."""
    return {key: m for key in model_files() if (m := load_model(key)) is not None}


def _model_from_profile(d: dict[str, Any]) -> CatalogModel:
    return CatalogModel(
        id=d["id"],
        source=d["source"],
        config=d["config"],
        hf_quant_config=d.get("hf_quant_config"),
        variants=tuple(d.get("variants") or ()),
        base_model=d.get("base_model"),
        published_params=d.get("published_params"),
        published_params_source=d.get("published_params_source"),
        note=d.get("note"),
    )
