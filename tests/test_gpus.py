"""GPU catalog: coverage, sources for every figure, name resolution."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus
from recommender.errors import InputError, UnknownGpuError
from recommender.hardware import custom_gpu, resolve_gpu
from recommender.units import GiB


def test_at_least_25_gpus_with_nvidia_and_amd() -> None:
    gpus = load_gpus()
    assert len(gpus) >= 25
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
