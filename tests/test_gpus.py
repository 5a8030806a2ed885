"""GPU catalog: coverage, sources for every figure, name resolution."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus
from recommender.errors import InputError, UnknownGpuError
from recommender.hardware import custom_gpu, resolve_gpu
from recommender.units import GiB, MiB


def test_at_least_50_gpus_with_nvidia_and_amd() -> None:
    gpus = load_gpus()
    assert len(gpus) >= 50
    assert {"nvidia", "amd"} <= {g.vendor for g in gpus}
    for key in (
        "t4",
        "v100-16gb",
        "a10g",
        "a10",
        "l4",
        "l40s",
        "a100-40gb",
        "a100-80gb",
        "h100-pcie",
        "h100-sxm",
        "h100-nvl",
        "h200",
        "gh200",
        "b200",
        "rtx3090",
        "rtx4090",
        "rtx5090",
        "rtx-a6000",
        "rtx6000-ada",
        "rtx-pro-6000",
        "mi300x",
        "mi325x",
        # issue #11: cards people deploy that were missing
        "a800-80gb",
        "a800-40gb-pcie",
        "h800",
        "h20",
        "l20",
        "rtx5080",
        "rtx5070ti",
        "rtx4070ti-super",
        "rtx4060ti-16gb",
        "rtx-a4000",
        "rtx-a4500",
        "rtx-a5000",
        "rtx-a5500",
        "rtx-pro-6000-ws",
        "rtx-pro-6000-maxq",
        "mi250x",
        "mi355x",
        "a40",
        "gb10",
    ):
        assert any(g.key == key for g in gpus), key


def _leaves(prefix: str, value: object) -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(f"{prefix}.{k}" if prefix else k, v)]
    return [prefix] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


def test_every_number_names_its_source() -> None:
    import yaml

    from recommender.resources import profiles_dir

    for path in sorted((profiles_dir() / "gpus").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        sources = doc["sources"]
        for leaf in _leaves("", {k: v for k, v in doc.items() if k not in ("sources", "estimated")}):
            assert leaf in sources or leaf.split(".")[0] in sources, f"{path.name}: {leaf} has no source"
        for field in doc["estimated"]:
            assert "ESTIMATE" in sources[field], f"{path.name}: estimated {field} must say how"


@pytest.mark.parametrize("name", ["h100", "H100 80GB", "NVIDIA H100 80GB HBM3", "h100-sxm", "NVIDIA-H100-80GB-HBM3"])
def test_h100_aliases_resolve(name: str) -> None:
    gpu = resolve_gpu(name, load_gpus())
    assert gpu.key == "h100-sxm"
    # vLLM prints 79.19 GiB as the H100's total (calibration logs).
    assert round(gpu.total_bytes / GiB, 2) == 79.19


def test_unknown_gpu_names_closest_matches() -> None:
    with pytest.raises(UnknownGpuError, match=r"closest: .*h100"):
        resolve_gpu("h10", load_gpus())


def test_custom_card() -> None:
    gpu = custom_gpu(24)
    assert gpu.total_bytes == 24 * GiB
    with pytest.raises(InputError):
        custom_gpu(0)


# GPU names as tools print them and people write them, with where each spelling was seen.
REAL_WORLD_NAMES = [
    ("NVIDIA A100-SXM4-80GB", "a100-80gb", "vllm-project/vllm#17269 collect_env 'GPU 0: NVIDIA A100-SXM4-80GB'"),
    ("NVIDIA H100 80GB HBM3", "h100-sxm", "NVIDIA/nccl#1264 nvidia-smi"),
    ("NVIDIA GeForce RTX 4090", "rtx4090", "vllm-project/vllm#7553 nvidia-smi"),
    ("NVIDIA L40S", "l40s", "modal-labs/modal-client#2797 nvidia-smi totals"),
    ("Tesla T4", "t4", "torch.cuda.get_device_properties name (profiles/gpus/t4.yaml source)"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx6000-ada", "torch device name (profiles/gpus/rtx6000-ada.yaml source)"),
    ("AMD Instinct MI300X", "mi300x", "rocm-smi/torch device name, e.g. Azure ND MI300X v5 notes"),
    ("AMD_Instinct_MI300X_OAM", "mi300x", "AMD node labeller amd.com/gpu.product-name (ROCm k8s-device-plugin docs)"),
    ("NVIDIA A10G", "a10g", "NVIDIA/DCGM#232 nvidia-smi"),
    ("NVIDIA_H200", "h200", "vLLM fused_moe config device_name (shared calibration record C001)"),
    ("NVIDIA-H100-80GB-HBM3", "h100-sxm", "GFD nvidia.com/gpu.product in public nodeSelectors"),
    ("NVIDIA-A100-SXM4-40GB", "a100-40gb", "GFD label, vllm-project/aibrix#2388"),
    ("Tesla-V100-SXM2-16GB", "v100-16gb", "GFD label, vllm-project/aibrix#2388"),
    ("RTX 3090 24GB", "rtx3090", "shared calibration records C004-C009 'gpu' field"),
    ("L40S 48GB", "l40s", "shared calibration record C002 'gpu' field"),
    ("L4 24GB", "l4", "issue #11 (names people write)"),
    ("H100 80GB HBM3", "h100-sxm", "issue #11 (names people write)"),
    ("RTX 4080 16GB", "rtx4080", "shared calibration record C000 'gpu' field"),
    ("A100-80GB", "a100-80gb", "shared calibration record C074 'gpu' field"),
    ("A100 80G", "a100-80gb", "hiyouga/LlamaFactory#4056 ('A100 80G')"),
    ("A100 40GB", "a100-40gb", "shared calibration record C010 'gpu' field"),
    ("h100-sxm", "h100-sxm", "this catalog's key"),
    ("H100", "h100-sxm", "documented default: the SXM card"),
    ("A100", "a100-80gb", "documented default: the 80 GB SXM card"),
]


@pytest.mark.parametrize(("name", "key", "seen"), REAL_WORLD_NAMES)
def test_real_world_names_resolve(name: str, key: str, seen: str) -> None:
    assert resolve_gpu(name, load_gpus()).key == key, seen


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("A100 PCIe", r"ambiguous: one of a100-40gb-pcie \(40 GB\), a100-80gb-pcie \(80 GB\)"),
        ("RTX 4090 48GB", r"no 48 GB card named 'RTX 4090 48GB' in the catalog \(known: rtx4090 \(24 GB\)\)"),
        ("H100 96GB", r"no 96 GB card .*known: h100-sxm \(80 GB\)"),
        ("NVIDIA A100-SXM4-40GB MIG 1g.5gb", r"MIG slice"),
        ("", r"empty GPU name"),
    ],
)
def test_names_that_do_not_identify_one_card(name: str, message: str) -> None:
    with pytest.raises(UnknownGpuError, match=message):
        resolve_gpu(name, load_gpus())


def test_every_name_in_the_catalog_resolves_to_its_own_card() -> None:
    catalog = load_gpus()
    for gpu in catalog:
        assert resolve_gpu(gpu.key, catalog).key == gpu.key
        for alias in gpu.aliases:
            assert resolve_gpu(alias, catalog).key == gpu.key, alias
        # nvidia-smi names and GFD labels may be shared by memory variants (RTX 4060 Ti 8/16 GB): the memory
        # total a tool reports beside them (GFD's nvidia.com/gpu.memory) tells them apart.
        mib = gpu.total_bytes // MiB
        for name in (gpu.name, *((gpu.gfd_product_label,) if gpu.gfd_product_label else ())):
            assert resolve_gpu(name, catalog, memory_mib=mib).key == gpu.key, name


def test_a_name_two_memory_variants_share_needs_the_memory() -> None:
    catalog = load_gpus()
    with pytest.raises(UnknownGpuError, match=r"ambiguous: one of rtx4060ti-8gb \(8 GB\), rtx4060ti-16gb \(16 GB\)"):
        resolve_gpu("NVIDIA GeForce RTX 4060 Ti", catalog)
    assert resolve_gpu("RTX 4060 Ti 16GB", catalog).key == "rtx4060ti-16gb"
    assert resolve_gpu("NVIDIA-GeForce-RTX-4060-Ti", catalog, memory_mib=8188).key == "rtx4060ti-8gb"


@pytest.mark.parametrize(
    ("key", "expected"),
    [("h100-sxm", (1024, 8192)), ("a100-80gb", (256, 2048)), ("a800-80gb", (1024, 8192)), ("gb10", (256, 2048))],
)
def test_batch_defaults_follow_vllm_device_checks(key: str, expected: tuple[int, int]) -> None:
    # vllm/engine/arg_utils.py get_batch_defaults: >= 70 GiB gets the large tier unless the device name holds
    # "a100" (an A800 does not) or the device is a GB10 (cc 12.1, DGX Spark).
    from recommender.memory.budget import batch_defaults
    from recommender.memory.engine import DEFAULT_VERSION, VllmVersion

    gpu = next(g for g in load_gpus() if g.key == key)
    assert batch_defaults(gpu, VllmVersion.parse(DEFAULT_VERSION)) == expected
