"""`--gpu NAME` as the commands read it: the catalog's name rules (recommender/gpu_names.py); a node label pasted
whole (`cloud.google.com/gke-accelerator=nvidia-tesla-a100`) or a provider's fixed label value
(`nvidia-tesla-a100`), read by the table `check` reads node labels with (profiles/instance-types.yaml: GKE's
`nvidia-tesla-a100` is the 40 GB A100, where the name rules' `a100` is the 80 GB one); and a cloud instance type
(`p5.48xlarge`) named as what it carries, with the options that say so."""

from __future__ import annotations

import re

from recommender.catalog import load_gpus, load_node_gpu_tables
from recommender.errors import UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.hardware import Gpu
from recommender.node_gpu import NodeGpuTables, gpu_from_instance_type, gpu_from_node_labels
from recommender.quoting import quoted

# The cloud providers' own spelling of an accelerator (GKE's and EKS's `nvidia-tesla-a100`, `nvidia-l4`), which the
# name rules would read as the bare card name (`a100`: the 80 GB one by default).
_PROVIDER_SPELLING = ("nvidia-", "amd-")
_LABEL = re.compile(r"^\s*(?P<key>[A-Za-z0-9./_-]+/[A-Za-z0-9._-]+)\s*[=:]\s*(?P<value>\S+)\s*$")


def named_gpu(name: str) -> Gpu:
    """The catalog card `name` names; an instance type is refused with its card and count spelled as options."""
    catalog = load_gpus()
    tables = load_node_gpu_tables()
    label = _LABEL.match(name)
    if label:  # a node label as `kubectl get nodes --show-labels` prints it
        node = gpu_from_node_labels({label.group("key"): label.group("value")}, tables, catalog)
        if node is not None:
            return node.gpu
    provided = _provider_value(name, tables, catalog)
    if provided is not None:
        return provided
    try:
        return resolve_gpu(name, catalog)
    except UnknownGpuError as exc:
        node = gpu_from_instance_type(name, tables, catalog)
        if node is None:
            raise
        raise UnknownGpuError(
            f"{quoted(name)} is a cloud instance type: {node.count} x {node.gpu.name}; --gpu names one card "
            f"(--gpu {node.gpu.key}): give the count as --gpus-per-node {node.count} to `recommend`, as -tp/-pp/-dp "
            "to `explain` and `perf`"
        ) from exc


def _provider_value(name: str, tables: NodeGpuTables, catalog: tuple[Gpu, ...]) -> Gpu | None:
    """A value of a provider's accelerator label (GKE, EKS, Karpenter), as its table maps it: the card when every
    provider that has the value means one card; the choices when they differ (EKS's `nvidia-tesla-a100` is either
    A100); None for a value no table has."""
    value = name.strip().lower()
    if not value.startswith(_PROVIDER_SPELLING):  # `a100`, `t4`: the catalog's names and documented defaults
        return None
    keys = {k for label in tables.labels for k in label.values.get(value, ())}
    if not keys:
        return None
    if len(keys) == 1:
        (key,) = keys
        return next(g for g in catalog if g.key == key)
    raise UnknownGpuError(
        f"GPU {quoted(name)} is a cloud provider's accelerator label value for {' or '.join(sorted(keys))} (the "
        "provider and the node's memory tell them apart): give one of them as --gpu"
    )
