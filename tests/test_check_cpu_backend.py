"""A deployment of vLLM's CPU backend is not evaluated (exit 4 when nothing failed): this tool plans GPU memory.
The signs, each the platform's documented rule: a CPU build of vLLM's image (vllm-cpu), a build with
VLLM_TARGET_DEVICE=cpu (vLLM's CPU installation docs / docker/Dockerfile.cpu build with it), `--device cpu`, and a
Kubernetes pod that requests no GPU on AWS nodes of a series without accelerators (EC2 instance type naming:
docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html; Karpenter's instance-family label; the shape of
tchangkiat/aws-cdk-stacks archive/vllm-cpu/install-vllm-meta-llama.sh, benchmarks/data/check-heldout/round23/SOURCES).
Hand-written minimal inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.cli import cli
from recommender.node_gpu import cpu_only_node

from .conftest import invoke


def _deployment(selector: str, limits: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  selector:
    matchLabels: {{app: llm}}
  template:
    metadata:
      labels: {{app: llm}}
    spec:
      nodeSelector:
        {selector}
      containers:
        - name: server
          image: 123456789012.dkr.ecr.us-west-2.amazonaws.com/vllm:arm64
          command: ["/bin/sh", "-c"]
          args: ["vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 2048"]
          resources:
            {limits}
"""


def _check(tmp_path: Path, name: str, text: str, exit_code: int | None) -> dict[str, object]:
    """The one result of `check FILE`; exit_code None: pass or fail, whichever the memory model says."""
    (tmp_path / name).write_text(text)
    args = ["check", str(tmp_path / name), "--format", "json"]
    if exit_code is None:
        got = CliRunner().invoke(cli, args)
        assert got.exit_code in (0, 1), got.output
        out = got.stdout
    else:
        out = invoke(args, exit_code=exit_code).stdout
    (result,) = json.loads(out)
    assert isinstance(result, dict)
    return result


def _is_cpu(result: dict[str, object]) -> bool:
    reasons = result["not_evaluated_because"]
    assert isinstance(reasons, list)
    return result["status"] == "not-evaluated" and any(
        r.startswith("CPU backend (") and r.endswith("this tool plans GPU memory") for r in reasons
    )


def test_a_pod_on_a_graviton_cpu_family_without_a_gpu_is_the_cpu_backend(tmp_path: Path) -> None:
    text = _deployment("karpenter.k8s.aws/instance-family: m8g", "requests: {cpu: 24, memory: 96Gi}")
    result = _check(tmp_path, "deploy.yaml", text, 4)
    assert _is_cpu(result) and "instance-family=m8g" in str(result["not_evaluated_because"])


def test_a_gpu_family_or_a_gpu_request_is_not_read_as_cpu(tmp_path: Path) -> None:
    text = _deployment("karpenter.k8s.aws/instance-family: g4dn", "limits: {nvidia.com/gpu: 1}")
    result = _check(tmp_path, "deploy.yaml", text, None)
    assert result["status"] in ("pass", "fail") and result["gpu"]
    text = _deployment("karpenter.k8s.aws/instance-family: m8g", "limits: {nvidia.com/gpu: 1}")
    assert not _is_cpu(_check(tmp_path, "deploy.yaml", text, 4))


@pytest.mark.parametrize(
    ("labels", "cpu"),
    [({"karpenter.k8s.aws/instance-family": "m8g"}, True), ({"eks.amazonaws.com/instance-family": "c7i"}, True),
     ({"node.kubernetes.io/instance-type": "r7g.4xlarge"}, True), ({"node.kubernetes.io/instance-type": "i4i.large"}, True),
     ({"karpenter.k8s.aws/instance-family": "g4dn"}, False), ({"karpenter.k8s.aws/instance-family": "inf2"}, False),
     ({"karpenter.k8s.aws/instance-family": "trn1"}, False), ({"node.kubernetes.io/instance-type": "p5.48xlarge"}, False),
     ({"node.kubernetes.io/instance-type": "n2-standard-8"}, False), ({"kubernetes.io/arch": "arm64"}, False)],
)  # fmt: skip
def test_aws_series_without_accelerators(labels: dict[str, str], cpu: bool) -> None:
    assert (cpu_only_node(labels) is not None) is cpu


def test_a_dockerfile_building_vllm_for_cpu(tmp_path: Path) -> None:
    text = (
        "FROM ubuntu:22.04\nRUN git clone https://github.com/vllm-project/vllm /vllm\nWORKDIR /vllm\n"
        "RUN VLLM_TARGET_DEVICE=cpu python3 setup.py install\n"
        'ENTRYPOINT ["vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct"]\n'
    )
    assert _is_cpu(_check(tmp_path, "Dockerfile", text, 4))
    # the same Dockerfile building the default (CUDA) target is evaluated as before
    result = _check(tmp_path, "Dockerfile", text.replace("VLLM_TARGET_DEVICE=cpu ", ""), 4)
    assert not _is_cpu(result)


def test_cpu_environment_image_and_device(tmp_path: Path) -> None:
    compose = (
        "services:\n  llm:\n    image: my/vllm:latest\n    environment: {VLLM_TARGET_DEVICE: cpu}\n"
        "    command: [Qwen/Qwen2.5-0.5B-Instruct]\n"
    )
    assert _is_cpu(_check(tmp_path, "compose.yaml", compose, 4))
    run = "docker run public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.9.0 --model Qwen/Qwen2.5-0.5B-Instruct\n"
    assert _is_cpu(_check(tmp_path, "run.sh", run, 4))
    assert _is_cpu(_check(tmp_path, "serve.sh", "vllm serve Qwen/Qwen2.5-0.5B-Instruct --device cpu\n", 4))
