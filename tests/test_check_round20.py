"""Readers fixed after blind round 20 (benchmarks/data/check-heldout/round20): hand-written cases of the shapes those
public files have (each names its file in the round's SOURCES): compose services that `extends:` a service of
another compose file and reserve GPUs with the service-level `gpus:` list (sergey-compose), ROCm services narrowed by
HIP_VISIBLE_DEVICES (nowls-stack), a KAITO Workspace whose `inference.template` is the pod it runs (sebassem-aks)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from recommender.check.found import Found
from recommender.check.inputs import load_inputs
from recommender.cli import cli
from recommender.serve_args import parse_serve_argv

BASE = """services:
  engine:
    image: vllm/vllm-openai:v0.17.0
    environment:
      HF_HOME: /hf
      NCCL_IB_DISABLE: "1"
    command: ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--max-model-len", "8192"]
"""

EXTENDING = """services:
  a:
    extends:
      file: ./base.yaml
      service: engine
    gpus:
      - driver: nvidia
        device_ids: ["0", "3"]
        capabilities: [gpu]
    environment:
      - LMCACHE_INSTANCE_ID=a
  b:
    extends: {file: ./base.yaml, service: engine}
    command: ["--model", "Qwen/Qwen3-4B"]
    gpus: [{driver: nvidia, count: 1, capabilities: [gpu]}]
  proxy:
    image: nginx:1.29
"""


def _found(path: Path) -> list[Found]:
    return load_inputs((str(path),)).found


def test_a_service_extending_another_files_service_runs_its_command_on_its_own_gpus(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "docker-compose.yaml").write_text(EXTENDING)
    a, b = _found(tmp_path / "docker-compose.yaml")
    assert (a.resource, b.resource) == ("service/a", "service/b")
    cmd = parse_serve_argv(list(a.argv))
    assert cmd.model == "Qwen/Qwen3-8B" and cmd.values["tensor_parallel_size"] == 2
    assert cmd.values["max_model_len"] == 8192
    assert a.gpus_per_pod == 2  # device_ids 0 and 3
    # the base's environment mapping and the extending list are merged key by key (Compose's merge rules)
    assert a.env.get("HF_HOME") == "/hf" and a.env.get("LMCACHE_INSTANCE_ID") == "a"
    # `command` is replaced, not appended to: b serves its own model alone, on the one GPU it reserves
    assert parse_serve_argv(list(b.argv)).model == "Qwen/Qwen3-4B"
    assert "--tensor-parallel-size" not in b.argv and b.gpus_per_pod == 1


def test_extends_within_the_file_and_in_a_folder(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "base.yaml").write_text(BASE)
    (tmp_path / "docker-compose.yaml").write_text(
        "services:\n"
        "  first:\n    extends: {file: common/base.yaml, service: engine}\n"
        "  second:\n    extends: first\n    gpus: all\n"
    )
    first, second = _found(tmp_path / "docker-compose.yaml")
    assert parse_serve_argv(list(first.argv)).model == parse_serve_argv(list(second.argv)).model == "Qwen/Qwen3-8B"
    assert second.gpus_per_pod is None  # `gpus: all` is not a count


def test_a_base_not_beside_the_file_leaves_the_service_as_written(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yaml").write_text(
        "services:\n  a:\n    extends: {file: ./missing.yaml, service: engine}\n"
        "    image: vllm/vllm-openai:v0.17.0\n    command: [--model, m]\n"
    )
    (a,) = _found(tmp_path / "docker-compose.yaml")
    assert parse_serve_argv(list(a.argv)).model == "m"


def test_an_extends_cycle_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yaml"
    path.write_text("services:\n  a:\n    extends: b\n    command: [--model, m]\n  b:\n    extends: a\n")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    said = "`extends` comes back to service 'a': a circular reference Compose refuses"
    assert result.output.strip() == f"Error: {path} (service/a): {said}"


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


def test_a_list_stands_for_its_items(tmp_path: Path) -> None:
    """`kubectl get deploy -o yaml` writes a `kind: List`: its Deployment is read as if given alone (a List has no
    `spec`: without this its items would be walked as one object's fields, under the List's name)."""
    path = tmp_path / "list.yaml"
    path.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: vllm, namespace: ai}\n"
        "  spec:\n    template:\n      spec:\n        containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.30.0\n          args: [Qwen/Qwen3-8B, -tp, '2']\n"
        "          resources: {limits: {nvidia.com/gpu: 2}}\n"
        "- {apiVersion: v1, kind: Service, metadata: {name: vllm}, spec: {ports: [{port: 8000}]}}\n"
    )
    (found,) = _found(path)
    assert found.resource == "Deployment/ai/vllm" and found.gpus_per_pod == 2
    assert parse_serve_argv(list(found.argv)).values["tensor_parallel_size"] == 2


TEMPLATE = """apiVersion: template.openshift.io/v1
kind: Template
metadata:
  name: vllm-template
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: "${APP}"}
  spec:
    template:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          args: ["${MODEL}", "--max-model-len", "${MAX_LEN}", "-tp", "${{GPUS}}", "--served-model-name", "${NAME}"]
          resources:
            limits: {nvidia.com/gpu: "${{GPUS}}"}
parameters:
- {name: APP, value: vllm}
- {name: MODEL, value: Qwen/Qwen3-8B}
- {name: MAX_LEN, value: "4096"}
- {name: GPUS, value: "2"}
- {name: NAME, generate: expression, from: "[a-z]{8}"}
"""


def test_an_openshift_template_stands_for_its_objects_with_the_parameters_defaults(tmp_path: Path) -> None:
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE)
    (found,) = _found(path)
    assert found.resource == "Deployment/default/vllm"  # ${APP} filled in
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "Qwen/Qwen3-8B" and cmd.values["max_model_len"] == 4096
    assert cmd.values["tensor_parallel_size"] == 2 and found.gpus_per_pod == 2  # ${{GPUS}}: the JSON value 2
    # a generated parameter has no default: it stays as written
    assert found.argv[-2:] == ("--served-model-name", "${NAME}")
