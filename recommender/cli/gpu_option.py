"""`--gpu NAME` as the commands read it: the catalog's name rules (recommender/gpu_names.py), and a cloud instance
type (`p5.48xlarge`, `a3-highgpu-8g`) named as what it carries, with the options that say so
(profiles/instance-types.yaml, the table `check` reads node labels with)."""

from __future__ import annotations

from recommender.catalog import load_gpus, load_node_gpu_tables
from recommender.errors import UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.hardware import Gpu
from recommender.node_gpu import gpu_from_instance_type
from recommender.quoting import quoted


def named_gpu(name: str) -> Gpu:
    """The catalog card `name` names; an instance type is refused with its card and count spelled as options."""
    catalog = load_gpus()
    try:
        return resolve_gpu(name, catalog)
    except UnknownGpuError as exc:
        node = gpu_from_instance_type(name, load_node_gpu_tables(), catalog)
        if node is None:
            raise
        raise UnknownGpuError(
            f"{quoted(name)} is a cloud instance type: {node.count} x {node.gpu.name}; --gpu names one card "
            f"(--gpu {node.gpu.key}): give the count as --gpus-per-node {node.count} to `recommend`, as -tp/-pp/-dp "
            "to `explain` and `perf`"
        ) from exc
