"""Readers fixed after blind round 20 (benchmarks/data/check-heldout/round20): hand-written cases of the shapes those
public files have (each names its file in the round's SOURCES): ROCm services narrowed by HIP_VISIBLE_DEVICES
(nowls-stack), a KAITO Workspace whose `inference.template` is the pod it runs (sebassem-aks)."""

from __future__ import annotations

from pathlib import Path

from recommender.check.found import Found
from recommender.check.inputs import load_inputs
from recommender.serve_args import parse_serve_argv


def _found(path: Path) -> list[Found]:
    return load_inputs((str(path),)).found


ROCM = """services:
  vllm:
    image: vllm/vllm-openai-rocm:v0.26.0
    devices: [/dev/kfd, /dev/dri]
    environment:
      {var}: "{value}"
    command: [--model, Qwen/Qwen3-8B, --tensor-parallel-size, "2"]
"""


def test_hip_and_rocr_visible_devices_give_the_gpus_of_a_rocm_service(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yml"
    for var, value, gpus in [("HIP_VISIBLE_DEVICES", "0,1", 2), ("ROCR_VISIBLE_DEVICES", "3", 1), ("HSA_X", "1", None)]:
        path.write_text(ROCM.replace("{var}", var).replace("{value}", value))
        (found,) = _found(path)
        assert found.gpus_per_pod == gpus, var
        assert found.not_evaluable  # AMD GPUs either way


def test_a_unit_and_a_pod_without_a_gpu_request_see_the_rocm_devices_listed(tmp_path: Path) -> None:
    unit = tmp_path / "vllm.service"
    unit.write_text(
        "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0,1,2,3\nExecStart=/opt/venv/bin/vllm serve m --tensor-parallel-size 4\n"
    )
    (found,) = _found(unit)
    assert found.gpus_per_pod == 4
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: rocm/vllm:latest\n    command: [vllm, serve, m]\n"
        "    env: [{name: ROCR_VISIBLE_DEVICES, value: '0,1'}]\n"
    )
    (found,) = _found(pod)
    assert found.gpus_per_pod == 2


KAITO = """apiVersion: kaito.sh/v1alpha1
kind: Workspace
metadata:
  name: workspace-gpt-oss
resource:
  labelSelector:
    matchLabels: {apps: llm-inference}
inference:
  template:
    spec:
      containers:
        - name: vllm-openai
          image: vllm/vllm-openai:v0.10.1
          args: [--model, openai/gpt-oss-20b, --gpu-memory-utilization, "0.85"]
          resources:
            limits: {nvidia.com/gpu: 1}
"""


def test_a_kaito_workspace_runs_its_inference_template(tmp_path: Path) -> None:
    path = tmp_path / "workspace.yaml"
    path.write_text(KAITO)
    (found,) = _found(path)
    assert found.resource == "Workspace/default/workspace-gpt-oss" and found.container == "vllm-openai"
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "openai/gpt-oss-20b" and cmd.values["gpu_memory_utilization"] == 0.85
    assert found.gpus_per_pod == 1


def test_a_kaito_preset_workspace_names_no_command(tmp_path: Path) -> None:
    path = tmp_path / "workspace.yaml"
    path.write_text(KAITO.split("inference:")[0] + "inference:\n  preset:\n    name: phi-4-mini-instruct\n")
    loaded = load_inputs((str(path),))
    assert loaded.found == [] and "no vLLM server found" in " ".join(loaded.problems)
