"""Read a cluster's GPU nodes through the kubernetes client (imported lazily): product label, allocatable GPUs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from recommender.errors import FetchError, InputError


@dataclass(frozen=True, slots=True)
class GpuNode:
    """One schedulable node with GPUs."""

    name: str
    product: str | None
    allocatable: int


def read_gpu_nodes(context: str | None = None) -> list[GpuNode]:
    """GPU nodes of the cluster in the kubeconfig (KUBECONFIG or ~/.kube/config), optionally a named context."""
    try:
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException
    except ImportError:
        raise InputError("--from-cluster needs the Kubernetes client: pip install 'vllm-plan[cluster]'") from None

    try:
        config.load_kube_config(context=context)  # type: ignore[no-untyped-call]
    except (ConfigException, OSError) as exc:
        raise InputError(f"--from-cluster: cannot load the kubeconfig ({exc})") from exc
    try:
        items = client.CoreV1Api().list_node(_request_timeout=15).items
    except Exception as exc:  # ApiException, urllib3 errors: the cluster did not answer usefully
        raise FetchError(f"--from-cluster: cannot list nodes ({exc.__class__.__name__}: {str(exc)[:200]})") from exc
    nodes = []
    for n in items:
        alloc = (n.status.allocatable or {}) if n.status else {}
        count = int(str(alloc.get("nvidia.com/gpu", "0")) or 0)
        unschedulable = bool(n.spec and n.spec.unschedulable)
        meta = n.metadata
        if count and not unschedulable and meta is not None:
            labels = meta.labels or {}
            nodes.append(GpuNode(str(meta.name), labels.get("nvidia.com/gpu.product"), count))
    return nodes


def common_product(nodes: list[GpuNode]) -> str | None:
    """The GPU product most nodes carry (ties: the first alphabetically)."""
    counts = Counter(n.product for n in nodes if n.product)
    if not counts:
        return None
    best = max(counts.values())
    return sorted(p for p, c in counts.items() if c == best)[0]


def schedulable(nodes: list[GpuNode], product: str | None, gpus_per_pod: int) -> str | None:
    """None when some node can take the pod, otherwise why not."""
    fitting = [n for n in nodes if (product is None or n.product == product) and n.allocatable >= gpus_per_pod]
    if fitting:
        return None
    same = [n for n in nodes if product is None or n.product == product]
    if not same:
        have = ", ".join(sorted({n.product or "?" for n in nodes})) or "none"
        return f"no node in the cluster has {product} GPUs (products: {have})"
    top = max(n.allocatable for n in same)
    return f"no {product} node has {gpus_per_pod} allocatable GPUs (at most {top})"
