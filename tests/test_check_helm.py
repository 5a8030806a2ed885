"""check renders Helm charts with the real helm binary (the `helm` extra) and reads what the templates make.

The chart below is written for these tests in the shape public vLLM charts take (values for the model, the
parallelism and the GPUs; a `range` over extra arguments; an `if` that switches the server on); the real-world
case it stands for is underpass-ai/underpass-vllms@4eb49f4 (charts/vllm with env/*/MODEL.yaml overrides, rendered
by its Makefile's `helm template`), measured in check-heldout round 12.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.check import helm_charts
from recommender.cli import cli

CHART_YAML = "apiVersion: v2\nname: servers\nversion: 0.1.0\n"
VALUES = """\
enabled: true
model: Qwen/Qwen3-8B
tp: 1
maxModelLen: 8192
extraArgs: []
"""
DEPLOYMENT = """\
{{- if .Values.enabled }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-vllm
spec:
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args:
            - {{ .Values.model | quote }}
            - --tensor-parallel-size={{ .Values.tp }}
            - --max-model-len
            - {{ .Values.maxModelLen | quote }}
            {{- range .Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          resources:
            limits:
              nvidia.com/gpu: {{ .Values.tp }}
          volumeMounts: [{name: shm, mountPath: /dev/shm}]
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
{{- end }}
"""
SERVICE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  ports: [{port: 8000}]\n"
PROD = "model: meta-llama/Llama-3.1-70B-Instruct\ntp: 4\nmaxModelLen: 32768\nextraArgs: [--kv-cache-dtype, fp8]\n"


def _chart(root: Path, deployment: str = DEPLOYMENT) -> Path:
    chart = root / "charts" / "servers"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART_YAML)
    (chart / "values.yaml").write_text(VALUES)
    (chart / "templates" / "deployment.yaml").write_text(deployment)
    (chart / "templates" / "service.yaml").write_text(SERVICE)
    return chart


def _check(*args: str) -> tuple[int, str, list[dict[str, object]]]:
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", "--format", "json", *args])
    try:
        servers = json.loads(result.stdout)
    except ValueError:
        servers = []
    return result.exit_code, result.output, servers


def test_helm_is_there_where_the_extra_installs_it() -> None:
    """CI installs the `helm` extra (Linux x86-64): the tests below must not silently lose their binary."""
    if sys.platform == "linux" and platform.machine() == "x86_64":
        assert helm_charts.find_helm() is not None


def test_check_chart_with_a_values_file_reads_the_rendered_deployment(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    (tmp_path / "prod.yaml").write_text(PROD)
    code, output, servers = _check("--chart", str(chart), str(tmp_path / "prod.yaml"))
    assert code == 0, output
    [server] = servers
    assert server["read"] == {
        "model": "meta-llama/Llama-3.1-70B-Instruct",
        "tensor_parallel_size": 4,
        "pipeline_parallel_size": 1,
        "data_parallel_size": 1,
        "max_model_len": 32768,
        "gpu_memory_utilization": None,
        "quantization": None,
        "kv_cache_dtype": "fp8",
    }
    assert str(server["file"]).endswith("prod.yaml [helm template: servers/templates/deployment.yaml]")


def test_a_folder_renders_its_chart_with_its_own_values_and_reads_the_other_files(tmp_path: Path) -> None:
    """The chart's files are not read one by one (its templates are not manifests); a manifest beside it is."""
    _chart(tmp_path)
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: v\n"
    pod += "      image: vllm/vllm-openai:v0.11.0\n      args: [Qwen/Qwen3-4B, --max-model-len, '4096']\n"
    (tmp_path / "pod.yaml").write_text(pod)
    code, output, servers = _check(str(tmp_path))
    assert code == 0, output
    assert sorted(str(s["read"]["model"]) for s in servers) == ["Qwen/Qwen3-4B", "Qwen/Qwen3-8B"]  # type: ignore[index]
    assert "Helm template" not in output


def test_a_chart_values_file_named_alone_is_rendered_with_its_chart(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    code, output, servers = _check(str(chart / "values.yaml"))
    assert code == 0, output
    assert [s["read"]["max_model_len"] for s in servers] == [8192]  # type: ignore[index]


def test_a_chart_that_renders_no_server_says_so(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    (tmp_path / "off.yaml").write_text("enabled: false\n")
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", "--chart", str(chart), str(tmp_path / "off.yaml")])
    assert result.exit_code == 2
    assert (
        result.output.strip() == f"Error: {tmp_path / 'off.yaml'}: no vLLM server in what chart {chart} renders with it"
    )


def test_helm_errors_are_one_line_naming_the_chart(tmp_path: Path) -> None:
    """`fail` in a template, a dependency not vendored under charts/: helm's own message, exit 2 (nothing read)."""
    chart = _chart(tmp_path, deployment='{{ fail "set .Values.model" }}\n')
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", "--chart", str(chart)])
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {chart}: helm template failed: Error: ")
    assert "set .Values.model" in result.output and len(result.output.strip().splitlines()) == 1
    (chart / "Chart.yaml").write_text(CHART_YAML + "dependencies:\n  - name: redis\n    version: 1.0.0\n")
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", "--chart", str(chart)])
    assert result.exit_code == 2 and "missing in charts/ directory: redis" in result.output


def test_bad_chart_arguments(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--chart", str(tmp_path)])
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == f"Error: --chart {tmp_path}: not a Helm chart folder (no Chart.yaml and templates/ in it)"
    )
    chart = _chart(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", "--chart", str(chart), str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and result.output.strip() == f"Error: {tmp_path / 'nope.yaml'}: no such values file"


def test_without_helm_a_folder_reads_as_before_and_names_what_was_not_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(helm_charts, "find_helm", lambda: None)
    chart = _chart(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", str(tmp_path)])
    assert result.exit_code == 2
    assert f"({chart}: a Helm chart, not read: rendering a chart needs helm" in result.output
    result = CliRunner().invoke(cli, ["check", "--chart", str(chart)])
    assert result.exit_code == 2 and "rendering a chart needs helm" in result.output


def test_split_rendered_groups_documents_by_template() -> None:
    text = "---\n# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B\n"
    text += "---\n# Source: c/templates/a.yaml\nkind: A2\n"
    parts = helm_charts.split_rendered(text)
    assert [p.template for p in parts] == ["c/templates/a.yaml", "c/templates/b.yaml"]
    assert "kind: A2" in parts[0].text and "kind: B" not in parts[0].text
    assert helm_charts.split_rendered("") == []
