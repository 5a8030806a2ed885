"""Readers fixed by blind round 12 (benchmarks/data/check-heldout/round12): general rules, each with a small
hand-written case: an image named for a proxy in front of vLLM, a compose build's arguments naming the Dockerfile's
base, a KubeAI resource profile of the install's own, and `apptainer exec IMAGE bash -lc "..."` in a batch script."""

from __future__ import annotations

from pathlib import Path

from recommender.check.images import is_vllm_image
from recommender.check.inputs import load_inputs
from recommender.check.load import read_text


def test_an_image_named_for_a_proxy_or_gateway_in_front_of_vllm_is_not_a_vllm_server() -> None:
    assert not is_vllm_image("ghcr.io/someone/vllm-latency-proxy:latest")
    assert not is_vllm_image("example/vllm-gateway:1.0")
    assert is_vllm_image("ghcr.io/someone/vllm-openai-patched:latest")
    assert is_vllm_image("kloudchat-vllm:local")


def test_compose_build_args_name_the_base_image_of_the_dockerfile(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN pip install pytest\n")
    compose = tmp_path / "compose.yml"
    compose.write_text(
        "services:\n  llm:\n    image: my-vllm:local\n"
        "    build: {context: ./svc, args: {BASE_IMAGE: 'vllm/vllm-openai:v0.11.0'}}\n"
        "    command: [--model, Qwen/Qwen3-8B, --max-model-len, '8192']\n"
    )
    (found,) = load_inputs((str(compose),)).found
    assert found.argv[:3] == ("vllm", "serve", "--model") and "Qwen/Qwen3-8B" in found.argv
    assert found.image_tag == "v0.11.0"
    # without the argument the base is unknown: no server is claimed
    compose.write_text(compose.read_text().replace(", args: {BASE_IMAGE: 'vllm/vllm-openai:v0.11.0'}", ""))
    assert load_inputs((str(compose),)).found == []


_KUBEAI = """apiVersion: kubeai.org/v1
kind: Model
metadata: {name: m}
spec: {engine: VLLM, url: 'hf://Qwen/Qwen3-8B', resourceProfile: '%s'}
"""


def test_a_kubeai_profile_of_the_installs_own_is_gpus_of_an_unnamed_type_not_another_platform() -> None:
    (custom,) = read_text(_KUBEAI % "doks-nvidia:2", "m.yaml", ".yaml")
    assert custom.not_evaluable is None and custom.gpus_per_pod == 2 and custom.gpu_product is None
    (amd,) = read_text(_KUBEAI % "amd-gpu-mi300x:1", "m.yaml", ".yaml")
    assert amd.not_evaluable is not None
    (cpu,) = read_text(_KUBEAI % "cpu:4", "m.yaml", ".yaml")
    assert cpu.not_evaluable is not None


def test_a_shell_started_by_apptainer_in_a_batch_script_runs_its_server() -> None:
    script = """#!/bin/bash
#SBATCH --gres=gpu:2
export TP="${SLURM_SOMETHING:-2}"
apptainer exec --nv --bind "$HOME":/h "$HOME/vllm.sif" \\
  bash -lc "
    export X=1
    python3 -m vllm.entrypoints.openai.api_server \\\\
      --model openai/gpt-oss-20b --tensor-parallel-size \\"$TP\\" --max-model-len 8192
  "
"""
    (found,) = read_text(script, "job.sbatch", ".sbatch")
    assert "openai/gpt-oss-20b" in found.argv and "2" in found.argv and "8192" in found.argv
