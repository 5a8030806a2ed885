"""GPU type and count from cloud instance types and Kubernetes node labels (profiles/instance-types.yaml)."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus, load_node_gpu_tables
from recommender.errors import UnknownGpuError
from recommender.node_gpu import gpu_from_instance_type, gpu_from_node_labels


def _node(labels: dict[str, str]) -> tuple[str, int | None] | None:
    found = gpu_from_node_labels(labels, load_node_gpu_tables(), load_gpus())
    return (found.gpu.key, found.count) if found else None


def _instance(name: str) -> tuple[str, int] | None:
    found = gpu_from_instance_type(name, load_node_gpu_tables(), load_gpus())
    return (found.gpu.key, found.count or 0) if found else None


def test_every_row_names_a_catalog_gpu_and_a_source() -> None:
    keys = {g.key for g in load_gpus()}
    tables = load_node_gpu_tables()
    assert len(tables.instance_types) >= 100
    for row in tables.instance_types.values():
        assert row.gpu_key in keys, row
        assert row.count >= 1 and row.source, row
    for label in tables.labels:
        assert label.source, label.key
        for value, candidates in label.values.items():
            assert set(candidates) <= keys, (label.key, value)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # AWS (Karpenter's generated instance-type reference)
        ("g4dn.xlarge", ("t4", 1)),
        ("g4dn.12xlarge", ("t4", 4)),
        ("g5.48xlarge", ("a10g", 8)),
        ("g6.12xlarge", ("l4", 4)),
        ("gr6.4xlarge", ("l4", 1)),
        ("g6e.48xlarge", ("l40s", 8)),
        ("p3.16xlarge", ("v100-16gb", 8)),
        ("p3dn.24xlarge", ("v100-32gb", 8)),
        ("p4d.24xlarge", ("a100-40gb", 8)),
        ("p4de.24xlarge", ("a100-80gb", 8)),
        ("p5.48xlarge", ("h100-sxm", 8)),
        ("p5e.48xlarge", ("h200", 8)),
        ("p5en.48xlarge", ("h200", 8)),
        ("p6-b200.48xlarge", ("b200", 8)),
        # GCP
        ("a2-highgpu-4g", ("a100-40gb", 4)),
        ("a2-megagpu-16g", ("a100-40gb", 16)),
        ("a2-ultragpu-8g", ("a100-80gb", 8)),
        ("a3-highgpu-8g", ("h100-sxm", 8)),
        ("a3-megagpu-8g", ("h100-sxm", 8)),
        ("a3-edgegpu-8g", ("h100-sxm", 8)),
        ("a3-ultragpu-8g", ("h200", 8)),
        ("a4-highgpu-8g", ("b200", 8)),
        ("g2-standard-24", ("l4", 2)),
        ("g2-standard-96", ("l4", 8)),
        # Azure: node labels spell the size as Azure does; matching ignores case
        ("Standard_NC24ads_A100_v4", ("a100-80gb-pcie", 1)),
        ("standard_nc96ads_a100_v4", ("a100-80gb-pcie", 4)),
        ("Standard_NC40ads_H100_v5", ("h100-nvl", 1)),
        ("Standard_ND96asr_v4", ("a100-40gb", 8)),
        ("Standard_ND96amsr_A100_v4", ("a100-80gb", 8)),
        ("Standard_ND96isr_H100_v5", ("h100-sxm", 8)),
        ("Standard_ND96isr_H200_v5", ("h200", 8)),
        ("Standard_ND96isr_MI300X_v5", ("mi300x", 8)),
        ("Standard_NV36ads_A10_v5", ("a10", 1)),
        # Oracle
        ("BM.GPU.H100.8", ("h100-sxm", 8)),
        ("BM.GPU4.8", ("a100-40gb", 8)),
        ("BM.GPU.A100-v2.8", ("a100-80gb", 8)),
        ("BM.GPU.MI300X.8", ("mi300x", 8)),
        ("VM.GPU.A10.2", ("a10", 2)),
    ],
)
def test_instance_types(name: str, expected: tuple[str, int]) -> None:
    assert _instance(name) == expected


@pytest.mark.parametrize("name", ["m5.xlarge", "n2-standard-8", "g6f.xlarge", "Standard_NV6ads_A10_v5", ""])
def test_cpu_fractional_and_unknown_instance_types_give_nothing(name: str) -> None:
    assert _instance(name) is None


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        # GPU feature discovery (what the NVIDIA GPU operator puts on every node)
        ({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"}, ("h100-sxm", 8)),
        ({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, ("a100-80gb", None)),
        ({"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.count": "1"}, ("t4", 1)),
        ({"nvidia.com/gpu.product": "NVIDIA-L40S-SHARED", "nvidia.com/gpu.count": "4"}, ("l40s", 4)),
        # GFD beside an instance type: the count comes from the table when no count label is there
        ({"nvidia.com/gpu.product": "NVIDIA-A10G", "node.kubernetes.io/instance-type": "g5.12xlarge"}, ("a10g", 4)),
        # GKE
        ({"cloud.google.com/gke-accelerator": "nvidia-l4"}, ("l4", None)),
        ({"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}, ("a100-40gb", None)),
        ({"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}, ("a100-80gb", None)),
        ({"cloud.google.com/gke-accelerator": "nvidia-h100-mega-80gb"}, ("h100-sxm", None)),
        (
            {
                "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
                "node.kubernetes.io/instance-type": "a3-highgpu-8g",
            },
            ("h100-sxm", 8),
        ),
        # EKS / Karpenter / EKS Auto Mode
        ({"karpenter.k8s.aws/instance-gpu-name": "l40s", "karpenter.k8s.aws/instance-gpu-count": "4"}, ("l40s", 4)),
        (
            {"karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-memory": "81920"},
            ("a100-80gb", None),
        ),
        (
            {"karpenter.k8s.aws/instance-gpu-name": "a100", "karpenter.k8s.aws/instance-gpu-memory": "40960"},
            ("a100-40gb", None),
        ),
        ({"eks.amazonaws.com/instance-gpu-name": "h200", "eks.amazonaws.com/instance-gpu-count": "8"}, ("h200", 8)),
        ({"k8s.amazonaws.com/accelerator": "nvidia-a10g"}, ("a10g", None)),
        # an instance family whose every type carries one GPU model (round 23's tchangkiat: g4dn); a CPU family none
        ({"karpenter.k8s.aws/instance-family": "g4dn"}, ("t4", None)),
        ({"eks.amazonaws.com/instance-family": "g6e"}, ("l40s", None)),
        ({"karpenter.k8s.aws/instance-family": "g4dn", "karpenter.k8s.aws/instance-gpu-count": "4"}, ("t4", 4)),
        ({"karpenter.k8s.aws/instance-family": "m8g"}, None),
        ({"karpenter.k8s.aws/instance-family": "g5g"}, None),  # Graviton + T4G: no row, no GPU named
        # AKS: only the vendor in kubernetes.azure.com/accelerator; the instance type names the card
        (
            {
                "kubernetes.azure.com/accelerator": "nvidia",
                "node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4",
            },
            ("a100-80gb-pcie", 1),
        ),
        # CoreWeave (and Ori, which copies its scheme): the GPU's name in gpu.nvidia.com/class or /model
        ({"gpu.nvidia.com/class": "L40S"}, ("l40s", None)),
        ({"gpu.nvidia.com/model": "H200"}, ("h200", None)),
        ({"gpu.nvidia.com/class": "A100_NVLINK_80GB"}, ("a100-80gb", None)),  # CoreWeave's form-factor classes
        ({"gpu.nvidia.com/class": "A100_PCIE_40GB"}, ("a100-40gb-pcie", None)),
        ({"gpu.nvidia.com/class": "Tesla_V100_NVLINK"}, ("v100-16gb", None)),  # CoreWeave's older table: 16 GB SXM2
        # the legacy instance-type label
        ({"beta.kubernetes.io/instance-type": "p4d.24xlarge"}, ("a100-40gb", 8)),
        # AMD GPU operator node labeller
        ({"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM", "amd.com/gpu.vram": "192G"}, ("mi300x", None)),
        ({"amd.com/gpu.product-name": "AMD_Instinct_MI325_OAM"}, ("mi325x", None)),
        # no GPU label at all
        ({"kubernetes.io/hostname": "cpu-node-1", "node.kubernetes.io/instance-type": "m5.large"}, None),
    ],
)
def test_node_labels(labels: dict[str, str], expected: tuple[str, int | None] | None) -> None:
    assert _node(labels) == expected


def test_more_specific_label_wins_and_an_unknown_product_falls_through() -> None:
    # GFD names the device itself; it wins over a provider label that disagrees.
    assert _node({"nvidia.com/gpu.product": "NVIDIA-L4", "cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}) == (
        "l4",
        None,
    )
    # A product the catalog lacks does not hide a known instance type.
    labels = {"nvidia.com/gpu.product": "NVIDIA-Future-GPU", "node.kubernetes.io/instance-type": "p5.48xlarge"}
    assert _node(labels) == ("h100-sxm", 8)


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"nvidia.com/gpu.product": "NVIDIA-Future-GPU"}, r"nvidia.com/gpu.product=NVIDIA-Future-GPU: unknown GPU"),
        ({"cloud.google.com/gke-accelerator": "nvidia-tesla-p100"}, r"gke-accelerator=nvidia-tesla-p100: .*not a GPU"),
        ({"karpenter.k8s.aws/instance-gpu-name": "a100"}, r"may be a100-40gb, a100-80gb, and no memory label"),
        ({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}, r"MIG slice"),
        (
            {
                "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
                "cloud.google.com/gke-gpu-partition-size": "1g.5gb",
            },
            r"MIG",
        ),
    ],
)
def test_labels_that_name_an_unusable_gpu_say_which(labels: dict[str, str], message: str) -> None:
    with pytest.raises(UnknownGpuError, match=message):
        _node(labels)
