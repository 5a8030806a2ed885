"""Which GPU, and how many, a Kubernetes node or a cloud instance type carries (pure: the tables are passed in).

The tables come from profiles/instance-types.yaml (`recommender.catalog.load_node_gpu_tables`), every row with
its source. Labels are read in a fixed order, most specific first: the device's own name (GPU feature
discovery, the AMD node labeller), then the cloud instance type, then the providers' accelerator labels
(GKE, EKS/Karpenter, AKS node auto-provisioning, Alibaba ACK).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from recommender.errors import UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.hardware import Gpu

# How a label's value names the GPU: a GPU name as nvidia-smi/rocm-smi print it ("name"), a cloud instance type
# ("instance-type"), an instance family whose types all carry one GPU model ("instance-family": `g4dn`, the
# types `g4dn.*`), or one of a provider's fixed values listed in the table ("table").
LABEL_KINDS = ("name", "instance-type", "instance-family", "table")


@dataclass(frozen=True, slots=True)
class InstanceType:
    """One cloud instance type (as the provider spells it) and the whole GPUs it carries."""

    name: str
    provider: str
    gpu_key: str
    count: int
    source: str


@dataclass(frozen=True, slots=True)
class NodeLabel:
    """One node label that names the GPU; `values` maps a provider's fixed values to catalog keys (several keys
    for one value are told apart by the node's memory label)."""

    key: str
    kind: str
    values: Mapping[str, tuple[str, ...]]
    source: str


@dataclass(frozen=True, slots=True)
class NodeGpuTables:
    """Everything profiles/instance-types.yaml says, ready for lookups."""

    instance_types: Mapping[str, InstanceType]  # by lower-cased name
    labels: tuple[NodeLabel, ...]  # in the order they are consulted
    count_labels: tuple[str, ...]
    memory_labels: tuple[str, ...]  # per-GPU memory, MiB unless the value carries a unit ("192G")
    mig_labels: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeGpu:
    """The GPU a node carries, how many (None when no label says), and the label that told."""

    gpu: Gpu
    count: int | None
    evidence: str


def gpu_from_instance_type(name: str, tables: NodeGpuTables, catalog: Sequence[Gpu]) -> NodeGpu | None:
    """The GPU and count of a cloud instance type (`p5.48xlarge`, `a3-highgpu-8g`, `Standard_ND96isr_H100_v5`,
    `BM.GPU.H100.8`), ignoring case; None when the type is not in the table (CPU-only, fractional or unknown)."""
    row = tables.instance_types.get(name.strip().lower())
    if row is None:
        return None
    gpu = _by_key(row.gpu_key, catalog)
    return NodeGpu(gpu, row.count, f"instance type {row.name} ({row.provider}: {row.count} x {gpu.key})")


def gpu_from_node_labels(labels: Mapping[str, str], tables: NodeGpuTables, catalog: Sequence[Gpu]) -> NodeGpu | None:
    """The GPU a node's labels name, with the GPU count when a label gives it.

    Returns None when no label names a GPU. Raises UnknownGpuError (naming the label) when labels name a GPU
    that is not in the catalog or a MIG slice, and nothing more specific resolved.
    """
    for key in tables.mig_labels:
        if labels.get(key):
            raise UnknownGpuError(f"node label {key}={labels[key]}: MIG slices; give --gpu-memory-gib")
    memory_mib = _memory_mib(labels, tables.memory_labels)
    count = _count(labels, tables.count_labels)
    typed = _instance_type_of(labels, tables, catalog)
    first_error: UnknownGpuError | None = None
    for label in tables.labels:
        value = labels.get(label.key, "").strip()
        if not value:
            continue
        try:
            found = _from_label(label, value, tables, catalog, memory_mib)
        except UnknownGpuError as exc:
            first_error = first_error or UnknownGpuError(f"node label {label.key}={value}: {exc}")
            continue
        if found is not None:
            if count is None and typed is not None and typed.gpu.key == found.gpu.key:
                count = typed.count
            return NodeGpu(found.gpu, count if count is not None else found.count, found.evidence)
    if first_error is not None:
        raise first_error
    return None


def _from_label(
    label: NodeLabel, value: str, tables: NodeGpuTables, catalog: Sequence[Gpu], memory_mib: int | None
) -> NodeGpu | None:
    evidence = f"{label.key}={value}"
    if label.kind == "instance-type":
        return gpu_from_instance_type(value, tables, catalog)
    if label.kind == "instance-family":
        return _gpu_of_family(value, tables, catalog, evidence)
    if label.kind == "name":
        return NodeGpu(resolve_gpu(value, catalog, memory_mib=memory_mib), None, evidence)
    keys = label.values.get(value.lower())
    if keys is None:
        raise UnknownGpuError(f"{value!r} is not a GPU in the catalog")
    candidates = [_by_key(k, catalog) for k in keys]
    if len(candidates) > 1:
        if memory_mib is None:
            names = ", ".join(g.key for g in candidates)
            raise UnknownGpuError(f"{value!r} may be {names}, and no memory label tells which")
        candidates = [min(candidates, key=lambda g: abs((g.marketed_gb or 0) - memory_mib / 1024))]
    return NodeGpu(candidates[0], None, evidence)


def _gpu_of_family(family: str, tables: NodeGpuTables, catalog: Sequence[Gpu], evidence: str) -> NodeGpu | None:
    """The GPU every instance type of a family (`g4dn`: g4dn.xlarge ... g4dn.metal) carries, the count left open
    (it differs by size); None for a family the table has no GPU type of (CPU families) or whose types differ."""
    rows = [r for r in tables.instance_types.values() if r.name.lower().split(".")[0] == family.strip().lower()]
    keys = {r.gpu_key for r in rows}
    if len(keys) != 1 or "." not in rows[0].name:
        return None
    return NodeGpu(_by_key(keys.pop(), catalog), None, evidence)


def _instance_type_of(labels: Mapping[str, str], tables: NodeGpuTables, catalog: Sequence[Gpu]) -> NodeGpu | None:
    for label in tables.labels:
        if label.kind == "instance-type" and labels.get(label.key):
            return gpu_from_instance_type(labels[label.key], tables, catalog)
    return None


def _by_key(key: str, catalog: Sequence[Gpu]) -> Gpu:
    for gpu in catalog:
        if gpu.key == key:
            return gpu
    raise UnknownGpuError(f"GPU key {key!r} is not in the catalog")


def _count(labels: Mapping[str, str], keys: Sequence[str]) -> int | None:
    for key in keys:
        value = labels.get(key, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return None


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(gib|gi|gb|g|mib|mi|mb|m)?", re.IGNORECASE)


def _memory_mib(labels: Mapping[str, str], keys: Sequence[str]) -> int | None:
    """Per-GPU memory from the first memory label present: plain numbers are MiB, `192G` is GiB."""
    for key in keys:
        m = _SIZE.fullmatch(labels.get(key, "").strip())
        if m and float(m.group(1)) > 0:
            unit = (m.group(2) or "m").lower()
            return int(float(m.group(1)) * (1024 if unit.startswith("g") else 1))
    return None


# AWS instance types are named series + generation + options (docs.aws.amazon.com/ec2/latest/instancetypes/
# instance-type-names.html): the series C (compute optimized), D (dense storage), H (HDD storage), I / Im / Is
# (storage optimized), M (general purpose), R (memory optimized), T (burstable), U (high memory), X (memory
# intensive), Z (high memory) carry no accelerator; G and P carry GPUs, Inf / Trn / DL / F / VT other accelerators
_AWS_CPU_FAMILY = re.compile(r"^(c|d|h|i|im|is|m|r|t|u|x|z)\d+[a-z-]*$")
_AWS_FAMILY_LABELS = ("karpenter.k8s.aws/instance-family", "eks.amazonaws.com/instance-family")
_INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def cpu_only_node(labels: Mapping[str, str]) -> str | None:
    """The label that puts a pod on AWS nodes without any accelerator (`karpenter.k8s.aws/instance-family: m8g`,
    `node.kubernetes.io/instance-type: c7i.4xlarge`), as `key=value`, or None."""
    for key in (*_AWS_FAMILY_LABELS, *_INSTANCE_TYPE_LABELS):
        value = labels.get(key, "").strip().lower()
        family, dot, _ = value.partition(".")
        if value and (dot or key in _AWS_FAMILY_LABELS) and _AWS_CPU_FAMILY.match(family):
            return f"{key}={labels[key].strip()}"
    return None
