"""The vLLM release a server runs and what follows from it: the release a file's pip install pins (over the image's),
the default model of a command without one, an old image's option warned about rather than failed, a JSON --config
refused as that release refuses it. The cases are hand-written in the shapes of the public files of the held-out
rounds (benchmarks/data/check-heldout/roundN, the file named in the round's SOURCES): rounds 6-7, 15 and 16."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.check.images import pinned_release
from recommender.serve_args import default_model

from .check_support import write_file
from .conftest import invoke


def test_an_old_images_option_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    # --tokenizer-pool-size is in the flag table with the release that dropped it (0.10.0): 0.8.5 has it
    script.write_text("docker run --gpus all vllm/vllm-openai:v0.8.5 --model Qwen/Qwen3-8B --tokenizer-pool-size 56\n")
    (out,) = json.loads(invoke(["check", str(script), "--gpu", "h100", "--format", "json"]).stdout)
    assert out["status"] == "pass"
    assert not any("--tokenizer-pool-size" in w for w in out["warnings"])
    # an option 0.33 lacks whose removal release is not in the table is a warning on an old image, not a failure
    script.write_text(
        "docker run --gpus all vllm/vllm-openai:v0.8.5 --model Qwen/Qwen3-8B --disable-frontend-multiprocessing\n"
    )
    (out,) = json.loads(invoke(["check", str(script), "--gpu", "h100", "--format", "json"]).stdout)
    assert out["status"] == "pass"
    assert any("--disable-frontend-multiprocessing" in w and "not judged" in w for w in out["warnings"])
    # without an image to date it, a flag is judged against the newest release, which refuses it, naming the removal
    script.write_text("vllm serve Qwen/Qwen3-8B --tokenizer-pool-size 56\n")
    (out,) = json.loads(invoke(["check", str(script), "--gpu", "h100", "--format", "json"], exit_code=1).stdout)
    assert out["status"] == "fail"
    assert any("removed in vLLM 0.10.0" in f for f in out["failures"])


# brianlmerritt/vllm_docker docker-compose.yaml: services whose whole configuration is a JSON --config mounted from
# ./configs (no model on the command line); vLLM reads --config files of .yaml/.yml only
JSON_CONFIG_COMPOSE = """services:
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


def test_default_model_follows_the_release() -> None:
    """vllm#20335 (first in 0.10.0) changed ModelConfig.model's default from facebook/opt-125m to Qwen/Qwen3-0.6B."""
    assert default_model("0.33.0") == default_model("0.10.0") == "Qwen/Qwen3-0.6B"
    assert default_model("0.9.2") == default_model("0.6.3") == "facebook/opt-125m"


def test_a_json_config_is_refused_before_the_missing_model_matters(tmp_path: Path) -> None:
    """With nothing unresolved, a command line without a model serves vLLM's default model; here vLLM stops earlier,
    at its --config file's extension, so the server fails with vLLM's message."""
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "model_config.json").write_text('{"model_configs": {}}', encoding="utf-8")
    path = write_file(tmp_path, "docker-compose.yaml", JSON_CONFIG_COMPOSE)
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "a10", "--format", "json"], exit_code=1).stdout)
    assert r["status"] == "fail" and r["model"] == "Qwen/Qwen3-0.6B"
    assert any("Config file must be of a yaml/yml type. json supplied" in f for f in r["failures"])
    assert any("no model in the command: vLLM 0.33.0 serves its default model" in w for w in r["warnings"])


@pytest.mark.parametrize(("tag", "model"), [("v0.9.2", "facebook/opt-125m"), ("latest", "Qwen/Qwen3-0.6B")])
def test_a_command_without_a_model_is_judged_on_the_releases_default_model(
    tmp_path: Path, tag: str, model: str
) -> None:
    path = write_file(tmp_path, "docker-compose.yaml", NO_MODEL.format(tag=tag))
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
    pod = write_file(tmp_path, "pod.yaml", PIP_POD)
    (r,) = json.loads(invoke(["check", str(pod), "--gpu", "l40s", "--format", "json"]).stdout)
    assert r["vllm_version"] == "0.6.6" and r["status"] == "pass"
    dockerfile = write_file(tmp_path, "Dockerfile", PIP_DOCKERFILE)
    (r,) = json.loads(invoke(["check", str(dockerfile), "--gpu", "l40s", "--format", "json"]).stdout)
    assert r["vllm_version"] == "0.10.1"
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Dockerfile").write_text(PIP_DOCKERFILE, encoding="utf-8")
    compose = write_file(tmp_path, "docker-compose.yml", "services:\n  llm:\n    build: ./app\n")
    (r,) = json.loads(invoke(["check", str(compose), "--gpu", "l40s", "--format", "json"]).stdout)
    assert r["vllm_version"] == "0.10.1"
    # pip replaces the vLLM of vLLM's own image before the server starts: the installed release runs
    tagged = PIP_POD.replace("nvcr.io/nvidia/pytorch:24.01-py3", "vllm/vllm-openai:v0.8.5")
    (r,) = json.loads(
        invoke(["check", str(write_file(tmp_path, "tagged.yaml", tagged)), "--gpu", "l40s", "--format", "json"]).stdout
    )
    assert r["vllm_version"] == "0.6.6"
