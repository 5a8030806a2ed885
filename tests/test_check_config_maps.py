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
from recommender.check.inputs import load_inputs
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


def test_env_from_a_configmap_of_the_same_manifest() -> None:
    manifest = """apiVersion: v1
kind: ConfigMap
metadata: {name: vllm-config}
data: {MODEL_NAME: /models/Qwen2.5-72B-Instruct-AWQ, MAX_LEN: "8192", UTIL: "0.40"}
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
          envFrom: [{configMapRef: {name: vllm-config}}]
          env:
            - {name: UTIL, value: "0.5"}
            - name: MODEL
              valueFrom: {configMapKeyRef: {name: vllm-config, key: MODEL_NAME}}
            - name: TP
              valueFrom: {configMapKeyRef: {name: elsewhere, key: TP}}
          args: ["--model", "$(MODEL)", "--max-model-len", "$(MAX_LEN)", "--gpu-memory-utilization", "$(UTIL)",
                 "-tp", "$(TP)"]
"""
    (found,) = read_text(manifest, "m.yaml", ".yaml")
    # env wins over envFrom; a ConfigMap the file does not hold stays unresolved
    assert found.argv[2:] == (
        "--model",
        "/models/Qwen2.5-72B-Instruct-AWQ",
        "--max-model-len",
        "8192",
        "--gpu-memory-utilization",
        "0.5",
        "-tp",
        "$(TP)",
    )
    assert found.unresolved == ("$(TP)",)


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          args: ["--config", "/etc/vllm/config.yaml", "--port", "8000"]
          env:
            - name: TP
              valueFrom: {configMapKeyRef: {name: vllm-env, key: TP}}
          command: ["vllm", "serve", "--tensor-parallel-size", "$(TP)"]
          resources: {limits: {nvidia.com/gpu: 2}}
          volumeMounts: [{name: config, mountPath: /etc/vllm}]
      volumes:
        - name: config
          configMap: {name: vllm-config}
"""


KUSTOMIZATION = """apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - ./vllm-deployment.yaml
configMapGenerator:
  - name: vllm-config
    files:
      - config.yaml=vllm-config.yaml
  - name: vllm-env
    literals:
      - TP=2
"""


def test_a_kustomize_config_map_generator_beside_the_deployment_is_what_it_mounts(tmp_path: Path) -> None:
    (tmp_path / "vllm-deployment.yaml").write_text(DEPLOYMENT)
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION)
    (tmp_path / "vllm-config.yaml").write_text("model: /models/qwen3-4b\ngpu-memory-utilization: 0.92\n")
    (found,) = load_inputs((str(tmp_path / "vllm-deployment.yaml"),)).found
    assert found.files["/etc/vllm/config.yaml"].startswith("model: /models/qwen3-4b")
    assert found.argv[found.argv.index("--tensor-parallel-size") + 1] == "2" and not found.unresolved
    # a kustomization that does not list the file generates nothing for it; nor does a file outside its folder
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION.replace("./vllm-deployment.yaml", "other.yaml"))
    (found,) = load_inputs((str(tmp_path / "vllm-deployment.yaml"),)).found
    assert found.files == {} and "$(TP)" in found.unresolved
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION.replace("=vllm-config.yaml", "=../vllm-config.yaml"))
    (tmp_path.parent / "vllm-config.yaml").write_text("model: elsewhere\n")
    (found,) = load_inputs((str(tmp_path / "vllm-deployment.yaml"),)).found
    assert found.files == {}


def test_a_config_map_of_another_resource_of_the_kustomization_gives_the_container_its_env(tmp_path: Path) -> None:
    """Check-heldout round 24's coreweave base (ErTasselli/coreweave-vllm-inference, no licence to copy it: the shape
    written here): the kustomization lists configmap.yaml and deployment.yaml in `resources`, kustomize builds them
    into one output (kubectl.docs.kubernetes.io, kustomization resources), and the container's `envFrom:
    configMapRef` expands its `$(MODEL_NAME)`-style args (Kubernetes, dependent environment variables)."""
    (tmp_path / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inference-config}\n"
        'data: {MODEL_NAME: meta-llama/Meta-Llama-3-8B-Instruct, TENSOR_PARALLEL_SIZE: "1", MAX_MODEL_LEN: "8192"}\n'
    )
    (tmp_path / "deployment.yaml").write_text(
        """apiVersion: apps/v1
kind: Deployment
metadata: {name: inference-server}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.1
          command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
          args: ["--model=$(MODEL_NAME)", "--tensor-parallel-size=$(TENSOR_PARALLEL_SIZE)", "--max-model-len=$(MAX_MODEL_LEN)"]
          envFrom: [{configMapRef: {name: inference-config}}, {secretRef: {name: inference-secrets}}]
          resources: {limits: {nvidia.com/gpu: "1"}}
"""
    )
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: ai\n"
        "resources: [configmap.yaml, deployment.yaml]\n"
    )
    (found,) = load_inputs((str(tmp_path / "deployment.yaml"),)).found
    assert found.argv[-3:] == (
        "--model=meta-llama/Meta-Llama-3-8B-Instruct",
        "--tensor-parallel-size=1",
        "--max-model-len=8192",
    )
    assert not found.unresolved
    # a ConfigMap the kustomization does not list is not in its output
    (tmp_path / "kustomization.yaml").write_text("resources: [deployment.yaml]\n")
    (found,) = load_inputs((str(tmp_path / "deployment.yaml"),)).found
    assert "$(MODEL_NAME)" in found.unresolved
