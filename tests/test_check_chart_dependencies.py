"""A chart whose dependencies are not vendored under charts/ (Chart.yaml lists them; `helm dependency build` would
download them, check never does): helm refuses to render it, so check reads what its values say for a chart it knows
(production-stack's values under the umbrella's `vllm-stack:` key, as round 9's umbrella charts write them), and
otherwise names the missing dependencies. The real helm binary runs (the `helm` extra)."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.check.chart_inputs import load_chart
from recommender.check.inputs import load_inputs
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

CHART = """apiVersion: v2
name: llm-platform
version: 0.1.0
dependencies:
  - name: vllm-stack
    version: 0.1.9
    repository: https://vllm-project.github.io/production-stack
"""
VALUES = """vllm-stack:
  servingEngineSpec:
    runtimeClassName: ""
    modelSpec:
    - name: llama
      repository: vllm/vllm-openai
      tag: v0.11.0
      modelURL: meta-llama/Llama-3.1-8B-Instruct
      replicaCount: 1
      requestGPU: 1
      vllmConfig:
        maxModelLen: 8192
        gpuMemoryUtilization: 0.8
"""
PROD = """vllm-stack:
  servingEngineSpec:
    modelSpec:
    - name: llama
      repository: vllm/vllm-openai
      tag: v0.11.0
      modelURL: meta-llama/Llama-3.1-8B-Instruct
      requestGPU: 2
      vllmConfig:
        maxModelLen: 16384
        tensorParallelSize: 2
"""


def _chart(tmp_path: Path, values: str = VALUES, chart: str = CHART) -> Path:
    root = tmp_path / "llm-platform"
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(chart, encoding="utf-8")
    (root / "values.yaml").write_text(values, encoding="utf-8")
    (root / "templates" / "ingress.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    return root


def test_a_known_subchart_not_vendored_is_read_from_the_parents_values(tmp_path: Path) -> None:
    root = _chart(tmp_path)
    loaded = load_inputs((str(tmp_path),))
    (found,) = loaded.found
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "meta-llama/Llama-3.1-8B-Instruct" and cmd.values["max_model_len"] == 8192
    assert "dependencies vllm-stack not in charts/" in found.source and not loaded.problems
    assert any("vllm-stack are not vendored under charts/" in n for n in loaded.notes)
    # an overlay kept beside the chart's values is merged over them, as helm merges values files
    (root / "values-prod.yaml").write_text(PROD, encoding="utf-8")
    prod = load_chart(root, (str(root / "values-prod.yaml"),)).found
    (found,) = prod
    cmd = parse_serve_argv(list(found.argv))
    assert (cmd.values["max_model_len"], cmd.values["tensor_parallel_size"], found.gpus_per_pod) == (16384, 2, 2)
    assert cmd.values.get("gpu_memory_utilization") is None  # the overlay's modelSpec list replaces the base one


def test_an_unknown_subchart_not_vendored_is_not_evaluated_naming_it(tmp_path: Path) -> None:
    chart = CHART.replace("vllm-stack", "inference-server").replace(
        "https://vllm-project.github.io/production-stack", "oci://example.com/charts"
    )
    root = _chart(tmp_path, "inference-server:\n  image: vllm/vllm-openai:v0.11.0\n  model: Qwen/Qwen3-8B\n", chart)
    r = invoke(["check", str(root / "values.yaml"), "--gpu", "h100", "--format", "json"], exit_code=2)
    (line,) = r.stderr.strip().splitlines()
    assert "its dependencies are missing in charts/ directory: inference-server (helm dependency build" in line
    assert "the values of a chart check does not know" in line
    assert line.endswith(": not evaluated") and json.loads(r.stdout or "[]") == []
