"""Readers fixed after blind round 17 (benchmarks/data/check-heldout/round17): hand-written cases of the shapes those
public files have (each names its file in the round's SOURCES): a Dockerfile whose ENTRYPOINT is a script it COPYs
from its build context (windrichie-vllm, custom-vllm), a compose service built from such a Dockerfile (laguna-vllm),
a compose entrypoint that runs a bind-mounted script with a shell, and a `--config` bind-mounted from beside the
compose file (shivam-vllm), MIG devices requested by a Deployment (deploy-vllm-k8s)."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.check.found import Found
from recommender.check.inputs import load_inputs
from recommender.check.run import config_beside, engine_summary
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

START = '#!/bin/bash\nMODEL_PATH=${MODEL_PATH:-/data/models/Qwen2.5-7B-Instruct}\nvllm serve ${MODEL_PATH} --port 8000 --gpu-memory-utilization 0.9 "$@"\n'
DOCKERFILE = """FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime
WORKDIR /app
COPY requirements.txt ./requirements.txt
RUN pip install -r requirements.txt
COPY start.sh ./start.sh
RUN chmod +x ./start.sh
ENTRYPOINT ["./start.sh"]
CMD ["--max-model-len", "8192"]
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_a_dockerfile_runs_the_script_it_copies_in_with_cmd_as_its_arguments(tmp_path: Path) -> None:
    _write(tmp_path, {"Dockerfile": DOCKERFILE, "start.sh": START, "requirements.txt": "vllm==0.11.0\n"})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert found.resource == "ENTRYPOINT"
    assert found.argv[:3] == ("vllm", "serve", "/data/models/Qwen2.5-7B-Instruct")
    assert found.argv[found.argv.index("--max-model-len") + 1] == "8192"  # CMD is the script's "$@"
    assert not found.unresolved


def test_copy_into_the_working_folder_and_a_relative_entrypoint_meet_without_a_workdir(tmp_path: Path) -> None:
    """`COPY run.sh .` and `ENTRYPOINT ["./run.sh"]` on a base whose WORKDIR the Dockerfile does not set."""
    dockerfile = 'FROM vllm/vllm-openai\nCOPY run.sh .\nRUN chmod +x run.sh\nENTRYPOINT ["./run.sh"]\n'
    run = "#!/bin/bash\npython3 -m vllm.entrypoints.openai.api_server --model ./model --max-model-len 4096\n"
    _write(tmp_path, {"Dockerfile": dockerfile, "run.sh": run})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert "./model" in found.argv and not found.serve_form


def test_a_script_copied_from_another_stage_or_missing_here_is_not_guessed(tmp_path: Path) -> None:
    other_stage = DOCKERFILE.replace("COPY start.sh ./start.sh", "COPY --from=builder /src/start.sh ./start.sh")
    _write(tmp_path, {"Dockerfile": other_stage, "start.sh": START})
    assert load_inputs((str(tmp_path / "Dockerfile"),)).found == []
    _write(tmp_path, {"Dockerfile": DOCKERFILE})
    (tmp_path / "start.sh").unlink()
    assert load_inputs((str(tmp_path / "Dockerfile"),)).found == []


def test_a_shell_running_the_copied_script_runs_it(tmp_path: Path) -> None:
    dockerfile = (
        'FROM nvidia/cuda:12.4.0-runtime-ubuntu22.04\nCOPY start.sh /opt/start.sh\nCMD ["bash", "/opt/start.sh"]\n'
    )
    _write(tmp_path, {"Dockerfile": dockerfile, "start.sh": START})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert found.argv[2] == "/data/models/Qwen2.5-7B-Instruct"


COMPOSE_BUILD = """services:
  laguna:
    build: .
    image: laguna-nvfp4:latest
    environment:
      - MAX_MODEL_LEN=${MAX_MODEL_LEN:-65536}
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]
"""
ENTRYPOINT = """#!/usr/bin/env bash
MODEL="${MODEL:-poolside/Laguna-S-2.1-NVFP4}"
MAX_MODEL_LEN="${MAX_MODEL_LEN:-262144}"
exec vllm serve "${MODEL}" --max-model-len "${MAX_MODEL_LEN}" --gpu-memory-utilization 0.72 "$@"
"""


def test_a_compose_service_built_here_runs_the_entrypoint_script_its_dockerfile_copies(tmp_path: Path) -> None:
    dockerfile = (
        "FROM nvidia/cuda:13.0.0-devel-ubuntu24.04\nRUN pip install vllm==0.25.1\n"
        'COPY entrypoint.sh /usr/local/bin/entrypoint.sh\nENTRYPOINT ["/usr/local/bin/entrypoint.sh"]\n'
    )
    _write(tmp_path, {"compose.yml": COMPOSE_BUILD, "Dockerfile": dockerfile, "entrypoint.sh": ENTRYPOINT})
    (found,) = load_inputs((str(tmp_path / "compose.yml"),)).found
    assert found.resource == "service/laguna" and found.gpus_per_pod == 1
    assert found.argv[2] == "poolside/Laguna-S-2.1-NVFP4"
    assert found.argv[found.argv.index("--max-model-len") + 1] == "65536"  # the service's environment wins
    assert found.image_tag == "0.25.1"  # the release the Dockerfile installs


COMPOSE_SHELL = """services:
  rerank:
    image: vllm/vllm-openai:v0.21.0
    environment:
      MODEL_ID: Qwen/Qwen3-VL-Reranker-2B
    volumes:
      - ./config.yaml:/app/config.yaml:ro
      - ./start.sh:/app/start.sh:ro
    entrypoint: ["/bin/sh", "/app/start.sh"]
"""
RERANK = '#!/bin/sh\nset -eu\n: "${MODEL_ID:=Qwen/Qwen3-Reranker-0.6B}"\nexec vllm serve "${MODEL_ID}" --config /app/config.yaml\n'


def _reading(found: Found) -> dict[str, object]:
    """The engine settings `check` takes for a server found, its --config read as `check` reads one."""
    from recommender.cli.check_cmd import _read_config

    read = config_beside(_read_config, found.source, found.files)
    cmd = parse_serve_argv(list(found.argv), read_config=read, serve=found.serve_form)
    return dict(engine_summary(cmd))


def test_a_compose_entrypoint_shell_runs_the_script_mounted_from_beside_it(tmp_path: Path) -> None:
    _write(tmp_path, {"compose.yml": COMPOSE_SHELL, "start.sh": RERANK, "config.yaml": "max-model-len: 32768\n"})
    (found,) = load_inputs((str(tmp_path / "compose.yml"),)).found
    assert found.argv[2] == "Qwen/Qwen3-VL-Reranker-2B"  # MODEL_ID from the service's environment


def test_a_config_bind_mounted_from_beside_the_compose_file_is_read(tmp_path: Path) -> None:
    compose = """services:
  vllm-qwen:
    image: vllm/vllm-openai:v0.21.0
    volumes:
      - ./config.yaml:/app/config.yaml:ro
      - type: bind
        source: ./configs
        target: /configs
    entrypoint: ["vllm", "serve", "Qwen/Qwen3-8B", "--config", "/app/config.yaml"]
  other:
    image: vllm/vllm-openai:v0.21.0
    volumes: [{type: bind, source: ./configs, target: /configs}]
    command: ["--model", "Qwen/Qwen3-8B", "--config", "/configs/big.yaml"]
  unmounted:
    image: vllm/vllm-openai:v0.21.0
    command: ["--model", "Qwen/Qwen3-8B", "--config", "/app/config.yaml"]
"""
    config = "tensor-parallel-size: 2\nmax-model-len: 65536\ngpu-memory-utilization: 0.92\n"
    _write(tmp_path, {"compose.yml": compose, "config.yaml": config, "configs/big.yaml": "tensor-parallel-size: 4\n"})
    first, second, third = load_inputs((str(tmp_path / "compose.yml"),)).found
    assert first.files == {"/app/config.yaml": config}
    s = _reading(first)
    assert (s["tensor_parallel_size"], s["max_model_len"], s["gpu_memory_utilization"]) == (2, 65536, 0.92)
    assert _reading(second)["tensor_parallel_size"] == 4  # a file of a bind-mounted folder
    assert third.files == {}  # nothing mounted there: the config is not readable here


def test_mig_devices_are_the_gpus_the_container_gets(tmp_path: Path) -> None:
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "google/gemma-3-27b-it", "--tensor-parallel-size", "2"]
        resources:
          limits:
            nvidia.com/mig-4g.96gb: "2"
        volumeMounts: [{name: shm, mountPath: /dev/shm}]
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""
    path = tmp_path / "vllm.yaml"
    path.write_text(manifest)
    (found,) = load_inputs((str(path),)).found
    assert found.gpus_per_pod == 2
    path.write_text(manifest.replace('4g.96gb: "2"', '4g.96gb: "two"'))
    result = invoke(["check", str(path), "--format", "json"], exit_code=2)
    assert str(path) in result.stderr and "not a whole number of GPUs" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    path.write_text(manifest)
    (r,) = json.loads(invoke(["check", str(path), "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated"  # the GPU type is not named: a MIG profile is a slice, not a card


METAL = """#!/usr/bin/env bash
set -euo pipefail
VENV="${VLLM_METAL_VENV:-$HOME/.venv-vllm-metal}"
source "${VENV}/bin/activate"
exec vllm serve mlx-community/Qwen2.5-0.5B-Instruct-4bit
"""


def test_a_script_in_vllm_metals_venv_runs_on_apple_silicon(tmp_path: Path) -> None:
    """vllm-project/vllm-metal's install.sh makes `~/.venv-vllm-metal` and says `source $venv/bin/activate`."""
    path = tmp_path / "serve-local.sh"
    for script in (
        METAL,
        METAL.replace('source "${VENV}/bin/activate"', 'export PATH="$HOME/.venv-vllm-metal/bin:$PATH"'),
        "#!/bin/sh\n~/.venv-vllm-metal/bin/vllm serve mlx-community/Qwen2.5-0.5B-Instruct-4bit\n",
    ):
        path.write_text(script)
        (found,) = load_inputs((str(path),)).found
        assert found.not_evaluable and "vLLM-Metal" in found.not_evaluable
    cuda = METAL.replace("vllm-metal", "vllm-cuda").replace(
        "mlx-community/Qwen2.5-0.5B-Instruct-4bit", "Qwen/Qwen2.5-7B-Instruct"
    )
    path.write_text(cuda)  # another venv: an ordinary (NVIDIA) vLLM
    (found,) = load_inputs((str(path),)).found
    assert found.not_evaluable is None
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "l4", "--format", "json"], exit_code=0).stdout)
    assert r["status"] == "pass"
    path.write_text(METAL)
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "l4", "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated"


# Round 18 (benchmarks/data/check-heldout/round18): tobrun-vllm, benedixx-gemma3.


def test_a_copy_me_example_of_a_script_is_read_as_the_script(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\nsource /opt/vllm-env/bin/activate\nvllm serve /models/Qwen3-8B \\\n  --tensor-parallel-size 4\n"
    )
    path = tmp_path / "start_model.sh.example"
    path.write_text(script)
    (found,) = load_inputs((str(path),)).found
    assert found.argv[:3] == ("vllm", "serve", "/models/Qwen3-8B")
    assert found.argv[found.argv.index("--tensor-parallel-size") + 1] == "4"


LOCKED = """FROM python:3.10
COPY --from=ghcr.io/astral-sh/uv:0.8.3 /uv /uvx /bin/
WORKDIR /workspace
COPY pyproject.toml uv.lock config.yaml ./
RUN uv sync --frozen
CMD ["uv", "run", "vllm", "serve", "--config", "config.yaml"]
"""
CONFIG = "model: Qwen/Qwen2.5-0.5B-Instruct\nmax-model-len: 8192\ngpu-memory-utilization: 0.8\nmax-seq-len-to-capture: 8192\n"
UV_LOCK = 'version = 1\n\n[[package]]\nname = "vllm"\nversion = "0.10.1.1"\nsource = { registry = "https://pypi.org/simple" }\n'


def test_a_dockerfile_command_with_a_config_takes_its_model_from_the_config(tmp_path: Path) -> None:
    """`vllm serve --config FILE` names its model in FILE (vLLM refuses to start without one): not a `docker run`
    argument; and `uv sync` installs the release uv.lock records (0.10.1.1 still has --max-seq-len-to-capture)."""
    _write(tmp_path, {"Dockerfile": LOCKED, "config.yaml": CONFIG, "uv.lock": UV_LOCK, "pyproject.toml": ""})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert '"$@"' not in found.argv and not found.unresolved
    assert found.image_tag == "0.10.1.1"
    assert _reading(found)["model"] == "Qwen/Qwen2.5-0.5B-Instruct"
    (r,) = json.loads(invoke(["check", str(tmp_path / "Dockerfile"), "--gpu", "l4", "--format", "json"]).stdout)
    assert r["status"] == "pass"
    (tmp_path / "uv.lock").unlink()  # the release is not known: the target's parser refuses the removed flag
    (r,) = json.loads(
        invoke(["check", str(tmp_path / "Dockerfile"), "--gpu", "l4", "--format", "json"], exit_code=1).stdout
    )
    assert any("--max-seq-len-to-capture" in f for f in r["failures"])
