"""Readers fixed after blind round 16 (benchmarks/data/check-heldout/round16): hand-written cases of the shapes those
public files have (each names its file in the round's SOURCES)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from recommender.catalog import load_gpus
from recommender.check import jobs
from recommender.check.gitops import applicationset_apps
from recommender.check.images import pinned_release
from recommender.check.inputs import load_inputs
from recommender.check.slurm_options import gpu_request
from recommender.errors import UnknownGpuError
from recommender.hardware import resolve_gpu
from recommender.serve_args import default_model

from .conftest import invoke

# claireg808/NLP_knowledge_graph run.sh: a Slurm job asking for one GPU of the site's gres.conf type `80g`
SBATCH = """#!/bin/bash
#SBATCH --gres=gpu:80g:1
#SBATCH --mem=100G
#SBATCH --qos=short

module load cuda/12.8
source ds_kg_venv/bin/activate

vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-32B --max-model-len 35904
"""

# brianlmerritt/vllm_docker docker-compose.yaml: services whose whole configuration is a JSON --config mounted from
# ./configs (no model on the command line); vLLM reads --config files of .yaml/.yml only
COMPOSE = """services:
  vllm-main:
    build: {context: ., dockerfile: Dockerfile.vllm}
    volumes: [./configs:/configs]
    environment: [CUDA_VISIBLE_DEVICES=0]
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]
    command: python -m vllm.entrypoints.openai.api_server --host 0.0.0.0 --port 8000 --config /configs/model_config.json
"""

# the same no-model shape on vLLM's own image of a release before vLLM's default model changed
NO_MODEL = """services:
  vllm:
    image: vllm/vllm-openai:{tag}
    command: --max-model-len 2048 --gpu-memory-utilization 0.8
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("gres", "want"),
    [
        ("gpu:80g:1", ("80g", 1)),  # a type that starts with a digit (sbatch(1): `name[[:type]:count]`)
        ("gpu:h100:4", ("h100", 4)),
        ("gpu:2", (None, 2)),
        ("gpu", (None, 1)),  # no count: one
        ("gpu:a100", ("a100", 1)),
        ("mps:100,gpu:l40s:2", ("l40s", 2)),
        ("gpu:a100:2(S:0-1)", ("a100", 2)),  # the sockets, not the request
        ("tmpfs:10G", (None, None)),
    ],
)
def test_slurm_gres_is_read_as_sbatch_documents_it(gres: str, want: tuple[str | None, int | None]) -> None:
    kind, per_node, nodes = gpu_request({"--gres": gres})
    assert (kind, per_node, nodes) == (*want, 1)


def test_a_slurm_gpu_type_named_by_the_site_counts_one_gpu_and_is_named_as_not_a_gpu(tmp_path: Path) -> None:
    assert jobs.sbatch_gpus(SBATCH) == jobs.Gpus(1, 1, "80g")
    path = _write(tmp_path, "run.sh", SBATCH)
    (found,) = load_inputs((str(path),)).found
    assert (found.gpus_per_pod or found.gpus_total) == 1 and found.gpu_product == "80g"
    (r,) = json.loads(invoke(["check", str(path), "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated"
    assert "'80g' names no GPU model" in " ".join(r["not_evaluated_because"])
    with pytest.raises(UnknownGpuError, match="'80g' names no GPU model"):
        resolve_gpu("80g", load_gpus())


def test_default_model_follows_the_release() -> None:
    """vllm#20335 (first in 0.10.0) changed ModelConfig.model's default from facebook/opt-125m to Qwen/Qwen3-0.6B."""
    assert default_model("0.33.0") == default_model("0.10.0") == "Qwen/Qwen3-0.6B"
    assert default_model("0.9.2") == default_model("0.6.3") == "facebook/opt-125m"


def test_a_json_config_is_refused_before_the_missing_model_matters(tmp_path: Path) -> None:
    """With nothing unresolved, a command line without a model serves vLLM's default model; here vLLM stops earlier,
    at its --config file's extension, so the server fails with vLLM's message."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "model_config.json").write_text('{"model_configs": {}}', encoding="utf-8")
    path = _write(tmp_path, "docker-compose.yaml", COMPOSE)
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "a10", "--format", "json"], exit_code=1).stdout)
    assert r["status"] == "fail" and r["model"] == "Qwen/Qwen3-0.6B"
    assert any("Config file must be of a yaml/yml type. json supplied" in f for f in r["failures"])
    assert any("no model in the command: vLLM 0.33.0 serves its default model" in w for w in r["warnings"])


@pytest.mark.parametrize(("tag", "model"), [("v0.9.2", "facebook/opt-125m"), ("latest", "Qwen/Qwen3-0.6B")])
def test_a_command_without_a_model_is_judged_on_the_releases_default_model(
    tmp_path: Path, tag: str, model: str
) -> None:
    path = _write(tmp_path, "docker-compose.yaml", NO_MODEL.format(tag=tag))
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "l4", "--format", "json"]).stdout)
    assert r["status"] == "pass" and r["model"] == model


# deepaksatna/Agentic-AI-Reasoning-and-Benchmarking-Framework k8s/vllm-privileged.yaml (round 15): a PyTorch image
# whose `bash -c` script installs vLLM 0.6.6 and then runs its server
PIP_POD = """apiVersion: v1
kind: Pod
metadata: {name: vllm-arbm}
spec:
  containers:
  - name: vllm
    image: nvcr.io/nvidia/pytorch:24.01-py3
    command: ["/bin/bash", "-c"]
    args:
    - |
      pip install vllm==0.6.6 --quiet
      python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --max-model-len 8192
    resources: {limits: {nvidia.com/gpu: 1}}
"""

# gpt-oss-5090 vllm/Dockerfile (round 6) and a compose service that builds it: the release the image installs
PIP_DOCKERFILE = """FROM nvidia/cuda:12.8.1-devel-ubuntu22.04
RUN python -m pip install --pre "vllm==0.10.1+gptoss" \\
    --extra-index-url https://wheels.vllm.ai/gpt-oss/
# RUN pip install vllm==0.9.0 (an older attempt, commented out)
CMD ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
"""


@pytest.mark.parametrize(
    ("text", "release"),
    [
        ("pip install vllm==0.6.6 --quiet", "0.6.6"),
        ('RUN python -m pip install --pre "vllm==0.10.1+gptoss" \\\n  --extra-index-url x', "0.10.1+gptoss"),
        ("  uv pip install vllm==0.6.6.post1", "0.6.6.post1"),
        ("pip install vllm==0.5.3post1", "0.5.3.post1"),  # PEP 440: the same release as 0.5.3.post1
        ('pip3 install "vllm[audio]==0.11.2" flash-attn', "0.11.2"),
        ("pip install vllm-flash-attn==2.6.1 vllm==0.8.0", "0.8.0"),
        ("# pip install vllm==0.5.0", None),  # a comment is not run
        ("pip install vllm==0.6.0\npip install vllm==0.7.0", None),  # two releases: not one
        ("pip install myvllm==1.0 vllm", None),
    ],
)
def test_the_vllm_release_a_file_installs_with_pip(text: str, release: str | None) -> None:
    assert pinned_release(text) == release


def test_a_server_runs_the_release_its_script_or_dockerfile_installs(tmp_path: Path) -> None:
    pod = _write(tmp_path, "pod.yaml", PIP_POD)
    (r,) = json.loads(invoke(["check", str(pod), "--gpu", "l40s", "--format", "json"]).stdout)
    assert r["vllm_version"] == "0.6.6" and r["status"] == "pass"
    dockerfile = _write(tmp_path, "Dockerfile", PIP_DOCKERFILE)
    (r,) = json.loads(invoke(["check", str(dockerfile), "--gpu", "l40s", "--format", "json"]).stdout)
    assert r["vllm_version"] == "0.10.1"
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Dockerfile").write_text(PIP_DOCKERFILE, encoding="utf-8")
    compose = _write(tmp_path, "docker-compose.yml", "services:\n  llm:\n    build: ./app\n")
    (r,) = json.loads(invoke(["check", str(compose), "--gpu", "l40s", "--format", "json"]).stdout)
    assert r["vllm_version"] == "0.10.1"
    # pip replaces the vLLM of vLLM's own image before the server starts: the installed release runs
    tagged = PIP_POD.replace("nvcr.io/nvidia/pytorch:24.01-py3", "vllm/vllm-openai:v0.8.5")
    (r,) = json.loads(
        invoke(["check", str(_write(tmp_path, "tagged.yaml", tagged)), "--gpu", "l40s", "--format", "json"]).stdout
    )
    assert r["vllm_version"] == "0.6.6"


# An Argo CD ApplicationSet whose list generator makes one production-stack release per model (the shape of
# argo-cd's docs, operator-manual/applicationset/Generators-List.md): `{{m}}` (fasttemplate) or `{{.m}}` (goTemplate)
APPSET = """apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: vllm-models}
spec:
  generators:
  - list:
      elements:
      - {m: qwen, model: Qwen/Qwen2.5-7B-Instruct, tp: "1"}
      - {m: llama, model: meta-llama/Llama-3.1-70B-Instruct, tp: "4"}
  template:
    metadata: {name: 'vllm-{{m}}'}
    spec:
      project: default
      source:
        repoURL: https://vllm-project.github.io/production-stack
        chart: vllm-stack
        targetRevision: 0.1.7
        helm:
          valuesObject:
            servingEngineSpec:
              modelSpec:
              - name: '{{m}}'
                repository: vllm/vllm-openai
                tag: v0.10.0
                modelURL: '{{model}}'
                requestGPU: 4
                vllmConfig: {tensorParallelSize: '{{tp}}', maxModelLen: 8192}
      destination: {server: https://kubernetes.default.svc, namespace: '{{m}}'}
"""


@pytest.mark.parametrize("go", [False, True])
def test_an_applicationset_list_generator_makes_one_release_per_element(tmp_path: Path, go: bool) -> None:
    text = APPSET
    if go:  # the same set written for Go templates
        text = re.sub(r"\{\{(\w+)\}\}", r"{{ .\1 }}", text).replace(
            "spec:\n  generators", "spec:\n  goTemplate: true\n  generators"
        )
        assert "goTemplate: true" in text and "'{{ .model }}'" in text
    path = _write(tmp_path, "appset.yaml", text)
    found = load_inputs((str(path),)).found
    assert [f.argv[2] for f in found] == ["Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-70B-Instruct"]
    assert [f.argv[f.argv.index("--tensor-parallel-size") + 1] for f in found] == ["1", "4"]
    assert all(not f.unresolved for f in found)
    results = json.loads(invoke(["check", str(path), "--gpu", "h100", "--format", "json"]).stdout)
    assert [r["status"] for r in results] == ["pass", "pass"]


def test_an_applicationset_of_another_generator_keeps_its_parameters() -> None:
    doc = yaml.safe_load(APPSET.replace("  - list:\n      elements:", "  - git:\n      files: [{path: x}]\n      e:"))
    (app,) = applicationset_apps(doc)
    assert app["metadata"]["name"] == "vllm-{{m}}"
