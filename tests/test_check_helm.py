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

from .conftest import invoke

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


def test_values_files_kept_in_the_chart_folder_are_releases_of_it(tmp_path: Path) -> None:
    """values-prod.yaml beside values.yaml, examples/values-small.yaml: each rendered over the chart's own values,
    in a folder run and when named alone; a subchart's values under charts/ are not the parent's."""
    chart = _chart(tmp_path)
    (chart / "values-prod.yaml").write_text("maxModelLen: 16384\n")
    (chart / "examples").mkdir()
    (chart / "examples" / "values-small.yaml").write_text("model: Qwen/Qwen3-0.6B\n")
    code, output, servers = _check(str(tmp_path))
    assert code == 0, output
    read = sorted((str(s["read"]["model"]), s["read"]["max_model_len"]) for s in servers)  # type: ignore[index]
    assert read == [("Qwen/Qwen3-0.6B", 8192), ("Qwen/Qwen3-8B", 8192), ("Qwen/Qwen3-8B", 16384)]
    code, output, servers = _check(str(chart / "values-prod.yaml"))
    assert code == 0 and [s["read"]["max_model_len"] for s in servers] == [16384], output  # type: ignore[index]
    assert helm_charts.chart_of(chart / "charts" / "sub" / "values.yaml") is None
    assert helm_charts.chart_of(chart / "README.md") is None


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
    # the unrendered chart may hold servers: "not evaluated" (4), not "no server found" (2)
    assert result.exit_code == 4
    assert f"({chart}: a Helm chart, not read: rendering a chart needs helm" in result.output
    result = CliRunner().invoke(cli, ["check", "--chart", str(chart)])
    assert result.exit_code == 4 and "rendering a chart needs helm" in result.output
    (tmp_path / "notes.txt").write_text("nothing here\n")
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", str(tmp_path / "notes.txt")])
    assert result.exit_code == 2  # a file with no server, and no chart left unread: still "no server found"


def test_split_rendered_groups_documents_by_template() -> None:
    text = "---\n# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B\n"
    text += "---\n# Source: c/templates/a.yaml\nkind: A2\n"
    parts = helm_charts.split_rendered(text)
    assert [p.template for p in parts] == ["c/templates/a.yaml", "c/templates/b.yaml"]
    assert "kind: A2" in parts[0].text and "kind: B" not in parts[0].text
    assert helm_charts.split_rendered("") == []


# GitOps releases: Argo CD Applications (inline values, parameters, a chart by path in the repository) and Flux
# HelmReleases. Real files of these shapes: swan2913/infra@30c8069 clusters/ubuntu-1/argocd-apps/vllm.yaml (path
# charts/vllm, a chart that runs llama.cpp's server), pkstaz/pdf-comparator-ai k8s/argocd/vllm-application.yaml
# (path helm/vllm with helm.parameters), jharmison-redhat/openshift-setup applications-templates/vllm-chart.yaml.tpl
# (a remote chart, valueFiles).
STACK_VALUES = """\
servingEngineSpec:
  modelSpec:
    - name: llama
      repository: vllm/vllm-openai
      tag: v0.9.1
      modelURL: meta-llama/Llama-3.1-8B-Instruct
      replicaCount: 1
      requestGPU: 1
      vllmConfig:
        maxModelLen: 16384
"""


def _application(source: str) -> str:
    head = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: llm\nspec:\n  project: default\n"
    return head + "  source:\n" + "".join(f"    {line}\n" for line in source.splitlines())


def _indent(text: str, spaces: int) -> str:
    return "".join(" " * spaces + line + "\n" for line in text.splitlines())


def test_argo_application_values_object_of_production_stack(tmp_path: Path) -> None:
    app = _application("repoURL: https://vllm-project.github.io/production-stack\nchart: vllm-stack\nhelm:\n")
    app += "      valuesObject:\n" + _indent(STACK_VALUES, 8)
    (tmp_path / "app.yaml").write_text(app)
    code, output, servers = _check(str(tmp_path / "app.yaml"))
    assert code in (0, 1), output  # evaluated: pass or a memory verdict, not "not evaluated" (4)
    [server] = servers
    assert server["read"]["model"] == "meta-llama/Llama-3.1-8B-Instruct"  # type: ignore[index]
    assert server["read"]["max_model_len"] == 16384  # type: ignore[index]
    assert "[Application llm, chart vllm-stack]" in str(server["file"])


def test_argo_parameters_override_the_values_string_as_helm_set_types_them(tmp_path: Path) -> None:
    app = _application("repoURL: https://vllm-project.github.io/production-stack\nchart: vllm-stack\nhelm:\n")
    app += "      values: |\n" + _indent(STACK_VALUES, 8)
    app += "      parameters:\n        - name: servingEngineSpec.modelSpec[0].vllmConfig.maxModelLen\n"
    app += "          value: '8192'\n"
    (tmp_path / "app.yaml").write_text(app)
    code, output, servers = _check(str(tmp_path / "app.yaml"))
    assert code in (0, 1), output  # evaluated: pass or a memory verdict, not "not evaluated" (4)
    assert [s["read"]["max_model_len"] for s in servers] == [8192], output  # type: ignore[index]


def test_flux_helm_release_values_and_values_from(tmp_path: Path) -> None:
    release = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: stack\nspec:\n"
    release += "  chart:\n    spec:\n      chart: vllm-stack\n  values:\n" + _indent(STACK_VALUES, 4)
    (tmp_path / "hr.yaml").write_text(release)
    code, output, servers = _check(str(tmp_path / "hr.yaml"))
    assert code in (0, 1), output  # evaluated: pass or a memory verdict, not "not evaluated" (4)
    assert [s["read"]["model"] for s in servers] == ["meta-llama/Llama-3.1-8B-Instruct"]  # type: ignore[index]
    (tmp_path / "hr.yaml").write_text(release + "  valuesFrom:\n    - kind: ConfigMap\n      name: llm-values\n")
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", str(tmp_path / "hr.yaml")])
    assert result.exit_code == 2
    assert "its Helm values also come from ConfigMap llm-values, not in this file" in result.output


def test_a_release_of_another_chart_is_no_server_and_an_unknown_vllm_chart_is_named(tmp_path: Path) -> None:
    other = _application("repoURL: https://charts.jetstack.io\nchart: cert-manager\nhelm:\n  valuesObject:\n")
    other += "        installCRDs: true\n"
    (tmp_path / "cert.yaml").write_text(other)
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", str(tmp_path / "cert.yaml")])
    assert result.exit_code == 2 and "no vLLM server found" in result.output
    remote = _application("repoURL: https://example.org/charts\nchart: vllm\nhelm:\n  valueFiles: [prod.yaml]\n")
    (tmp_path / "remote.yaml").write_text(remote)
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", str(tmp_path / "remote.yaml")])
    assert result.exit_code == 2 and "its Helm values also come from prod.yaml, not in this file" in result.output


def test_an_application_whose_chart_is_in_the_repository_is_rendered_with_its_parameters(tmp_path: Path) -> None:
    _chart(tmp_path)
    app = _application("repoURL: https://example.org/repo.git\npath: charts/servers\nhelm:\n  parameters:\n")
    app += "      - {name: model, value: Qwen/Qwen3-4B}\n      - {name: tp, value: '2'}\n"
    (tmp_path / "argocd").mkdir()
    (tmp_path / "argocd" / "llm.yaml").write_text(app)
    code, output, servers = _check(str(tmp_path / "argocd" / "llm.yaml"))
    assert code in (0, 1), output  # evaluated: pass or a memory verdict, not "not evaluated" (4)
    [server] = servers
    assert (server["read"]["model"], server["read"]["tensor_parallel_size"]) == ("Qwen/Qwen3-4B", 2)  # type: ignore[index]
    assert "[Application llm, chart charts/servers] [helm template: servers/templates/deployment.yaml]" in str(
        server["file"]
    )
    (tmp_path / "argocd" / "llm.yaml").write_text(app.replace("charts/servers", "charts/vllm"))
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", str(tmp_path / "argocd" / "llm.yaml")])
    assert result.exit_code == 2 and "the values of a chart check does not know" in result.output


def test_helm_set_typing_and_paths() -> None:
    from recommender.check import gitops
    from recommender.errors import InputError

    assert [gitops._set_typed(v) for v in ("true", "FALSE", "null", "0", "8192", "0.95", "007", "-3")] == [
        True,
        False,
        None,
        0,
        8192,
        "0.95",
        "007",
        -3,
    ]
    values: dict[str, object] = {"a": {"b": 1}}
    gitops._set_path(values, "a.c[1].d", 5, "x")
    assert values == {"a": {"b": 1, "c": [None, {"d": 5}]}}
    with pytest.raises(InputError, match="does not match the values' shape"):
        gitops._set_path(values, "a[0]", 1, "x")


RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: {{ .Release.Name }}-vllm
spec:
  supportedModelFormats: [{name: vLLM, autoSelect: true}]
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.11.0
      args:
        - --port=8080
        - --model=/mnt/models
        - '--served-model-name={{ "{{.Name}}" }}'
"""
ISVC = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: llm
spec:
  predictor:
    model:
      modelFormat: {name: vLLM}
      runtime: {{ .Release.Name }}-vllm
      storageUri: hf://{{ .Values.model }}
      args: [--max-model-len={{ .Values.maxModelLen }}, --gpu-memory-utilization=0.90]
      resources: {limits: {nvidia.com/gpu: "1"}}
"""


def test_a_release_s_inference_service_runs_on_the_serving_runtime_of_another_template(tmp_path: Path) -> None:
    """redhat-ai-services' vllm-kserve chart (check-heldout round 14) renders its InferenceService and its
    ServingRuntime from two templates of one release: they are combined as KServe combines them."""
    chart = _chart(tmp_path, deployment=ISVC)
    (chart / "templates" / "runtime.yaml").write_text(RUNTIME)
    code, output, servers = _check("--chart", str(chart))
    assert code in (0, 1), output
    [server] = servers
    read = server["read"]
    assert (read["model"], read["max_model_len"], read["gpu_memory_utilization"]) == ("Qwen/Qwen3-8B", 8192, 0.9)  # type: ignore[index]


def test_chart_roots_are_outermost_whatever_the_names_sort_as(tmp_path: Path) -> None:
    """A subchart folder whose name sorts before Chart.yaml (`Addons/`) is still rendered by its parent only."""
    for folder in (tmp_path / "app", tmp_path / "app" / "Addons"):
        (folder / "templates").mkdir(parents=True)
        (folder / "Chart.yaml").write_text(CHART_YAML)
    assert helm_charts.chart_roots(tmp_path) == [tmp_path / "app"]


def test_an_application_s_value_files_stay_inside_the_repository(tmp_path: Path) -> None:
    """Manifests come from pull requests: a valueFiles entry that climbs out of the repository is not handed to helm."""
    repo = tmp_path / "repo"
    _chart(repo)
    app = _application("repoURL: https://example.org/repo.git\npath: charts/servers\nhelm:\n")
    app += "      valueFiles: [../../../outside.yaml]\n"
    (tmp_path / "outside.yaml").write_text("model: Qwen/Qwen3-4B\n")
    (repo / "argocd").mkdir()
    (repo / "argocd" / "llm.yaml").write_text(app)
    result = CliRunner().invoke(cli, ["check", "--gpu", "h100", str(repo / "argocd" / "llm.yaml")])
    assert result.exit_code == 2
    assert "value file(s) ../../../outside.yaml outside the repository" in result.output


def test_the_values_of_a_chart_check_does_not_know_are_named_as_such(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("image: {repository: vllm/vllm-openai, tag: v0.11.0}\nmodel: {name: Qwen/Qwen3-4B-AWQ}\n")
    result = invoke(["check", str(values)], exit_code=2)
    assert "the values of a chart check does not know (image vllm/vllm-openai, model Qwen/Qwen3-4B-AWQ)" in (
        result.stderr
    )
    assert "helm template" in result.stderr
