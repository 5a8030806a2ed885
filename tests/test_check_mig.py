"""A container given MIG devices runs on one instance of its card, not the whole card (hand-written manifests in the
shape of round 17's `nvidia.com/mig-4g.96gb` Deployment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from recommender.catalog import load_gpus
from recommender.check.inputs import load_inputs
from recommender.check.manifest_values import mig_profile
from recommender.errors import UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.hardware import mig_slice

from .conftest import invoke


def test_an_instance_holds_its_profiles_share_of_the_card() -> None:
    h100 = resolve_gpu("h100", load_gpus())
    half = mig_slice(h100, "3g.40gb")
    assert half.total_bytes == int(h100.total_bytes * 40 / 80)  # 4 of the 8 memory slices
    assert half.name == "NVIDIA H100 80GB HBM3 MIG 3g.40gb" and not half.nvlink
    assert "memory.cuda_total_mib" in half.estimated
    eighth = mig_slice(h100, "1g.10gb")
    assert eighth.total_bytes == h100.total_bytes // 8
    with pytest.raises(UnknownGpuError, match="larger than"):
        mig_slice(h100, "7g.141gb")
    for profile in ("whole", "1g." + "9" * 5000 + "gb"):  # a count int() refuses is no profile either
        with pytest.raises(UnknownGpuError, match=r"not a <compute>g\.<memory>gb profile"):
            mig_slice(h100, profile)


@pytest.mark.parametrize(
    ("resources", "profile"),
    [
        ({"limits": {"nvidia.com/mig-3g.40gb": 1}}, "3g.40gb"),
        ({"requests": {"nvidia.com/mig-1g.10gb": "2"}}, "1g.10gb"),
        ({"limits": {"nvidia.com/gpu": 1, "nvidia.com/mig-1g.10gb": 1}}, None),  # whole GPUs as well: not one size
        ({"limits": {"nvidia.com/mig-1g.10gb": 1, "nvidia.com/mig-2g.20gb": 1}}, None),  # two sizes
        ({"limits": {"nvidia.com/gpu": 2}}, None),
    ],
)
def test_the_profile_a_container_requests(resources: dict[str, dict[str, object]], profile: str | None) -> None:
    assert mig_profile(resources) == profile


def _deployment(tmp_path: Path, profile: str) -> Path:
    container = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.10.1",
        "args": ["Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"],
        "resources": {"limits": {f"nvidia.com/mig-{profile}": 1}},
    }
    spec = {"template": {"spec": {"containers": [container]}}}
    path = tmp_path / f"{profile}.yaml"
    path.write_text(
        yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "v"}, "spec": spec})
    )
    return path


def test_check_judges_the_instance(tmp_path: Path) -> None:
    # Qwen2.5-7B's 14.2 GiB of bf16 weights fit half an H100, not an eighth of it
    half = invoke(["check", str(_deployment(tmp_path, "3g.40gb")), "--gpu", "h100"], exit_code=0)
    assert "PASS" in half.stdout
    eighth = invoke(["check", str(_deployment(tmp_path, "1g.10gb")), "--gpu", "h100"], exit_code=1)
    assert "not enough GPU memory" in eighth.stdout
    wrong = invoke(["check", str(_deployment(tmp_path, "7g.141gb")), "--gpu", "h100"], exit_code=4)
    assert "larger than" in wrong.stdout and "Traceback" not in wrong.output


def test_mig_devices_are_the_gpus_the_container_gets(tmp_path: Path) -> None:
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "google/gemma-3-27b-it", "--tensor-parallel-size", "2"]
        resources:
          limits:
            nvidia.com/mig-4g.96gb: "2"
        volumeMounts: [{name: shm, mountPath: /dev/shm}]
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""
    path = tmp_path / "vllm.yaml"
    path.write_text(manifest)
    (found,) = load_inputs((str(path),)).found
    assert found.gpus_per_pod == 2
    path.write_text(manifest.replace('4g.96gb: "2"', '4g.96gb: "two"'))
    result = invoke(["check", str(path), "--format", "json"], exit_code=2)
    assert str(path) in result.stderr and "not a whole number of GPUs" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    path.write_text(manifest)
    (r,) = json.loads(invoke(["check", str(path), "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated"  # the GPU type is not named: a MIG profile is a slice, not a card
