"""A `--config` file the pod mounts from a ConfigMap of the same manifest (or of the same rendered chart) is read
as vLLM reads it: the container sees the ConfigMap's key as a file under the volume's mountPath (or at mountPath
itself with subPath). The chart is pseudorm/eks-vllm-terraform's helm/vllm (tests/data/charts/SOURCES): its
deployment.yaml runs `vllm serve --config /etc/vllm/config.yaml`, its configmap.yaml writes that file from
`vllm.config` (check-heldout round 9's eks-vllm-terraform, a miss until the chart was rendered with this)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.check import helm_charts
from recommender.check.load import read_text
from recommender.check.run import config_beside, engine_summary
from recommender.cli import cli
from recommender.serve_args import parse_serve_argv

_CHART = Path(__file__).parent / "data" / "charts" / "eks-vllm-terraform"

_MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: vllm-config}
data:
  config.yaml: |
    model: Qwen/Qwen3-8B
    max_model_len: 16384
    tensor_parallel_size: 2
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [serve, --config, /config/vllm.yaml]
        volumeMounts:
        - {name: cfg, mountPath: /config/vllm.yaml, subPath: config.yaml}
        resources: {limits: {nvidia.com/gpu: 2}}
      volumes:
      - name: cfg
        configMap: {name: vllm-config}
"""


def _read(text: str) -> dict[str, object]:
    (found,) = read_text(text, "m.yaml", ".yaml")
    reader = config_beside(lambda _path: None, found.source, found.files)
    cmd = parse_serve_argv(list(found.argv), read_config=reader)
    summary = engine_summary(cmd)
    return {k: summary[k] for k in ("model", "max_model_len", "tensor_parallel_size")}


def test_a_config_file_mounted_by_sub_path_from_the_manifest_config_map_is_read() -> None:
    assert _read(_MANIFEST) == {"model": "Qwen/Qwen3-8B", "max_model_len": 16384, "tensor_parallel_size": 2}


def test_a_whole_config_map_volume_puts_each_key_under_the_mount_path() -> None:
    text = _MANIFEST.replace("/config/vllm.yaml]", "/config/config.yaml]").replace(
        "{name: cfg, mountPath: /config/vllm.yaml, subPath: config.yaml}", "{name: cfg, mountPath: /config}"
    )
    assert _read(text)["max_model_len"] == 16384


def test_a_config_map_the_manifest_does_not_hold_leaves_the_config_unread() -> None:
    text = _MANIFEST.replace("metadata: {name: vllm-config}", "metadata: {name: other}")
    (found,) = read_text(text, "m.yaml", ".yaml")
    assert found.files == {}


@pytest.mark.skipif(helm_charts.find_helm() is None, reason="needs helm (the `helm` extra)")
def test_a_chart_whose_config_map_template_writes_the_config_is_read_whole() -> None:
    result = CliRunner().invoke(cli, ["check", "--chart", str(_CHART), "--format", "json"])
    assert result.exit_code == 4, result.output  # no GPU type in the chart: not evaluated, but read
    (server,) = json.loads(result.stdout)
    read = server["read"]
    assert read["model"] == "cyankiwi/Qwen3.5-9B-AWQ-4bit"
    assert read["max_model_len"] == 8192 and read["gpu_memory_utilization"] == 0.95
    assert not any("--config" in r for r in server["not_evaluated_because"])
