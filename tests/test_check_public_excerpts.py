"""`check` on excerpts of real public repositories, each named with its commit: a RayService running the
repository's own Ray Serve Python (check/ray_python_apps.py), and a Makefile whose rules run `docker compose
--env-file .env` over compose files that `include:` a base one (check/makefiles.py, compose precedence). The
excerpts keep the lines the readers act on, as written; what a test adds or changes is said where it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.check.inputs import load_inputs
from recommender.serve_args import parse_serve_argv

from .check_support import write_files

# ray-project/kuberay (Apache-2.0) at e6b2920bbfdff069c9c5789b07a5378cf53b348a (the last commit with its vLLM
# sample, removed by ffda626 "Remove vLLM examples in favor of Ray Serve LLM"):
# ray-operator/config/samples/vllm/ray-service.vllm.yaml, lines 1-23 and the GPU worker group (ports, env and
# resources other than the GPU left out)
KUBERAY_SERVICE = """apiVersion: ray.io/v1
kind: RayService
metadata:
  name: llama-3-8b
spec:
  serveConfigV2: |
    applications:
    - name: llm
      route_prefix: /
      import_path:  ray-operator.config.samples.vllm.serve:model
      deployments:
      - name: VLLMDeployment
        num_replicas: 1
        ray_actor_options:
          num_cpus: 8
          # NOTE: num_gpus is set automatically based on TENSOR_PARALLELISM
      runtime_env:
        working_dir: "https://github.com/ray-project/kuberay/archive/master.zip"
        pip: ["vllm==0.6.1.post2"]
        env_vars:
          MODEL_ID: "meta-llama/Meta-Llama-3-8B-Instruct"
          TENSOR_PARALLELISM: "2"
          PIPELINE_PARALLELISM: "1"
  rayClusterConfig:
    headGroupSpec:
      rayStartParams:
        dashboard-host: '0.0.0.0'
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray-ml:2.33.0.914af0-py311
    workerGroupSpecs:
    - replicas: 1
      minReplicas: 0
      maxReplicas: 4
      groupName: gpu-group
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: llm
            image: rayproject/ray-ml:2.33.0.914af0-py311
            resources:
              limits:
                nvidia.com/gpu: "2"
"""
# ray-operator/config/samples/vllm/serve.py at the same commit: its imports, parse_vllm_args, build_app and the
# module-level `model` (the deployment class and its chat endpoint left out)
KUBERAY_SERVE_PY = """import os

from typing import Dict, Optional, List
import logging

from ray import serve

from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.engine.async_llm_engine import AsyncLLMEngine
from vllm.entrypoints.openai.cli_args import make_arg_parser
from vllm.utils import FlexibleArgumentParser

logger = logging.getLogger("ray.serve")


def parse_vllm_args(cli_args: Dict[str, str]):
    arg_parser = FlexibleArgumentParser(
        description="vLLM OpenAI-Compatible RESTful API server."
    )

    parser = make_arg_parser(arg_parser)
    arg_strings = []
    for key, value in cli_args.items():
        arg_strings.extend([f"--{key}", str(value)])
    logger.info(arg_strings)
    parsed_args = parser.parse_args(args=arg_strings)
    return parsed_args


def build_app(cli_args: Dict[str, str]) -> serve.Application:
    parsed_args = parse_vllm_args(cli_args)
    engine_args = AsyncEngineArgs.from_cli_args(parsed_args)
    engine_args.worker_use_ray = True

    return VLLMDeployment.bind(
        engine_args,
        parsed_args.response_role,
        parsed_args.lora_modules,
        parsed_args.prompt_adapters,
        cli_args.get("request_logger"),
        parsed_args.chat_template,
    )


model = build_app(
    {"model": os.environ['MODEL_ID'], "tensor-parallel-size": os.environ['TENSOR_PARALLELISM'], "pipeline-parallel-size": os.environ['PIPELINE_PARALLELISM']})
"""
KUBERAY_DIR = "ray-operator/config/samples/vllm"


def test_kuberays_vllm_ray_service_reads_the_engine_its_own_serve_py_builds(tmp_path: Path) -> None:
    # import_path `ray-operator.config.samples.vllm.serve:model` is a module of the repository (its working_dir is
    # the repository's archive); the dict of `--key value` options it gives vLLM's parser is the engine's command
    # line, each value from the application's runtime_env env_vars
    write_files(tmp_path, {".git/HEAD": "ref: refs/heads/master\n", f"{KUBERAY_DIR}/serve.py": KUBERAY_SERVE_PY})
    service = tmp_path / KUBERAY_DIR / "ray-service.vllm.yaml"
    service.write_text(KUBERAY_SERVICE)
    (found,) = load_inputs((str(service),)).found
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert (cmd.values["tensor_parallel_size"], cmd.values["pipeline_parallel_size"]) == (2, 1)
    assert found.unresolved == () and found.container == "llm (serve.py)"
    assert found.resource == "RayService/default/llama-3-8b" and found.gpus_total == 2
    # env_vars without PIPELINE_PARALLELISM (changed here): os.environ['PIPELINE_PARALLELISM'] is set nowhere,
    # named as unresolved rather than guessed
    service.write_text(KUBERAY_SERVICE.replace('          PIPELINE_PARALLELISM: "1"\n', ""))
    (found,) = load_inputs((str(service),)).found
    assert found.unresolved == ("$PIPELINE_PARALLELISM",)


# kodlan/vLLM-ops-lab at d10ba0d4b490b76838b324783aca089aa6ed828d: Makefile (its setup, infra-up, health and exp2-up
# rules), infra/docker-compose.base.yml (comments and the healthcheck left out),
# experiments/02_prefix_caching/docker-compose.yml and .env.example (its comments left out); .env is git-ignored:
# `make setup` copies .env.example to it
OPS_LAB_MAKEFILE = """.PHONY: setup infra-up infra-down infra-logs health test-prompt

setup:
\t@if [ ! -f .env ]; then \\
\t\tcp .env.example .env; \\
\t\techo "Created .env from .env.example"; \\
\t\techo "Edit .env to customize settings if needed"; \\
\telse \\
\t\techo ".env already exists"; \\
\tfi

infra-up:
\tdocker compose --env-file .env -f infra/docker-compose.base.yml up -d
\t@echo "vLLM server starting... Use 'make infra-logs' to watch progress"
\t@echo "Use 'make health' to check when ready"

health:
\t@curl -sf http://localhost:8000/health > /dev/null && echo "vLLM is healthy" || echo "vLLM is not ready"

exp2-up:
\tdocker compose --env-file .env -f experiments/02_prefix_caching/docker-compose.yml up -d
\t@echo "Prefix caching server starting (APC enabled)..."
"""
OPS_LAB_BASE = """services:
  vllm:
    image: vllm/vllm-openai:v0.14.1-cu130
    ports:
      - "8000:8000"
    volumes:
      # Mount HuggingFace cache to avoid re-downloading models
      - ~/.cache/huggingface:/root/.cache/huggingface
    env_file:
      - ../.env
    environment:
      # Disable anonymous usage statistics
      - VLLM_USAGE_STATS=0
    command:
      - ${MODEL_NAME}
      - --max-model-len=${VLLM_MAX_MODEL_LEN}
      - --dtype=half
      - --gpu-memory-utilization=${VLLM_GPU_MEMORY_UTILIZATION}
      - --max-num-seqs=16
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""
OPS_LAB_EXP2 = """# Prefix Caching - Experiment 2 (APC ENABLED)

include:
  - ../../infra/docker-compose.base.yml

services:
  vllm:
    command:
      - ${MODEL_NAME}
      - --max-model-len=${VLLM_MAX_MODEL_LEN}
      - --dtype=half
      - --gpu-memory-utilization=${VLLM_GPU_MEMORY_UTILIZATION}
      - --max-num-seqs=16
      - --enable-prefix-caching
"""
OPS_LAB_ENV = """MODEL_NAME=Qwen/Qwen2.5-0.5B-Instruct
VLLM_MAX_MODEL_LEN=4096
VLLM_GPU_MEMORY_UTILIZATION=0.8
HF_TOKEN=
"""
OPS_LAB = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "Makefile": OPS_LAB_MAKEFILE,
    "infra/docker-compose.base.yml": OPS_LAB_BASE,
    "experiments/02_prefix_caching/docker-compose.yml": OPS_LAB_EXP2,
    ".env.example": OPS_LAB_ENV,
}


def _served(tmp_path: Path) -> dict[str, tuple[str, ...]]:
    found = load_inputs((str(tmp_path / "Makefile"),)).found
    return {f.resource: f.argv for f in found}


def test_ops_lab_makefile_runs_compose_with_its_env_file(tmp_path: Path) -> None:
    write_files(tmp_path, OPS_LAB)
    # as checked out: .env is git-ignored, so --env-file .env sets nothing and the model is unresolved
    unset = load_inputs((str(tmp_path / "Makefile"),)).found
    assert {f.resource for f in unset} == {"make infra-up", "make exp2-up"}
    assert all("${MODEL_NAME}" in f.unresolved for f in unset)
    # after `make setup` (.env copied from .env.example): --env-file .env's values, for the base file and for the
    # experiment that includes it and replaces the service's command
    (tmp_path / ".env").write_text(OPS_LAB_ENV)
    base = ("vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len=4096", "--dtype=half",
            "--gpu-memory-utilization=0.8", "--max-num-seqs=16")  # fmt: skip
    assert _served(tmp_path) == {"make infra-up": base, "make exp2-up": (*base, "--enable-prefix-caching")}


@pytest.mark.parametrize(
    ("before", "length"),
    [
        ("export VLLM_MAX_MODEL_LEN=2048; ", "2048"),  # the shell's environment over --env-file
        ("VLLM_MAX_MODEL_LEN=2048 ", "2048"),  # set for the command itself: in its environment too
        ("VLLM_MAX_MODEL_LEN=2048; ", "4096"),  # a shell variable only: compose never sees it, .env's value
    ],
)
def test_ops_lab_compose_takes_the_shell_environment_over_its_env_file(
    tmp_path: Path, before: str, length: str
) -> None:
    # Compose's precedence (docs.docker.com, "Set environment variables ... precedence"): the shell's environment,
    # then --env-file, then a `${VAR:-default}`; here the infra-up recipe line gets a prefix (added by the test)
    write_files(tmp_path, {**OPS_LAB, ".env": OPS_LAB_ENV})
    makefile = OPS_LAB_MAKEFILE.replace("\tdocker compose --env-file .env -f infra/", f"\t{before}docker compose "
                                        "--env-file .env -f infra/")  # fmt: skip
    (tmp_path / "Makefile").write_text(makefile)
    assert _served(tmp_path)["make infra-up"][3] == f"--max-model-len={length}"
    assert _served(tmp_path)["make exp2-up"][3] == "--max-model-len=4096"  # the rule left as written


# meta-llama/llama-stack (MIT) at 127bac6869c4eec9f631b0d16f03aec659ff51fa: distributions/remote-vllm/compose.yaml,
# kept whole in the corpus (tests/data/deployments/SOURCES); `--model ${VLLM_INFERENCE_MODEL:-...}` has a default
LLAMA_STACK = Path(__file__).parent / "data" / "deployments" / "llama-stack" / "remote-vllm-compose.yaml"


@pytest.mark.parametrize(
    ("script", "env_files", "model"),
    [
        (None, {}, "meta-llama/Llama-3.2-3B-Instruct"),  # the file's default
        (None, {".env": "VLLM_INFERENCE_MODEL=meta-llama/Llama-3.2-1B-Instruct\n"}, "meta-llama/Llama-3.2-1B-Instruct"),
        ("docker compose up -d", {".env": "VLLM_INFERENCE_MODEL=Qwen/Qwen3-8B\n"}, "Qwen/Qwen3-8B"),
        ("export VLLM_INFERENCE_MODEL=Qwen/Qwen3-4B\ndocker compose up -d", {".env": "VLLM_INFERENCE_MODEL=Qwen/Qwen3-8B\n"},
         "Qwen/Qwen3-4B"),  # the script's environment over .env
        ("VLLM_INFERENCE_MODEL=Qwen/Qwen3-4B\ndocker compose up -d", {".env": "VLLM_INFERENCE_MODEL=Qwen/Qwen3-8B\n"},
         "Qwen/Qwen3-8B"),  # not exported: not in compose's environment
        ("docker compose --env-file prod.env up -d", {".env": "VLLM_INFERENCE_MODEL=Qwen/Qwen3-8B\n",
         "prod.env": "VLLM_INFERENCE_MODEL=Qwen/Qwen3-14B\n"}, "Qwen/Qwen3-14B"),  # --env-file: .env is not read
        ("export VLLM_INFERENCE_MODEL=Qwen/Qwen3-4B\ndocker compose --env-file prod.env up -d",
         {"prod.env": "VLLM_INFERENCE_MODEL=Qwen/Qwen3-14B\n"}, "Qwen/Qwen3-4B"),
    ],
)  # fmt: skip
def test_llama_stacks_compose_model_by_compose_precedence(
    tmp_path: Path, script: str | None, env_files: dict[str, str], model: str
) -> None:
    # Compose's interpolation precedence (docs.docker.com/compose/how-tos/environment-variables/variable-interpolation):
    # the shell's environment, then the --env-file files (else the project's .env), then the `:-` default. The
    # scripts running the real file are the test's own (the distribution's README exports the variables first)
    write_files(tmp_path, {".git/HEAD": "ref: refs/heads/main\n", "compose.yaml": LLAMA_STACK.read_text(), **env_files})
    if script is not None:
        (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{script}\n")
    found = load_inputs((str(tmp_path / ("run.sh" if script else "compose.yaml")),)).found
    (vllm,) = [f for f in found if f.resource == "service/vllm-inference"]
    assert parse_serve_argv(list(vllm.argv)).model == model


# LSvalbar/custom-ai at 186e2c3fc636eb9a967caf0939a5143bb812b528: bundle/scripts/start-vllm.sh (whole), the first
# lines of bundle/scripts/prepare-host-layout.sh (the mkdir/echo lines left out), bundle/compose/vllm/docker-compose.yml
# (its networks left out) and bundle/compose/vllm/.env (whole; committed)
CUSTOM_AI = {
    ".git/HEAD": "ref: refs/heads/main\n",
    "bundle/scripts/start-vllm.sh": """#!/usr/bin/env bash
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT_DIR/scripts/prepare-host-layout.sh"

( cd "$ROOT_DIR/compose/vllm" && docker compose -f docker-compose.yml up -d )
""",
    "bundle/scripts/prepare-host-layout.sh": """#!/usr/bin/env bash
set -euo pipefail

HOST_DATA_ROOT="${HOST_DATA_ROOT:-$HOME/data/forstar}"
HOST_LOG_ROOT="${HOST_LOG_ROOT:-/var/log/forstar}"

export HOST_DATA_ROOT HOST_LOG_ROOT
""",
    "bundle/compose/vllm/docker-compose.yml": """services:
  vllm:
    image: ${VLLM_IMAGE}
    container_name: vllm
    runtime: nvidia
    environment:
      - NVIDIA_VISIBLE_DEVICES=all
      - NVIDIA_DRIVER_CAPABILITIES=compute,utility
    ports:
      - "${VLLM_PORT:-8000}:8000"
    volumes:
      - ${MODEL_ROOT}:/models
      - ${HOST_LOG_ROOT:-/var/log/forstar}/vllm:/var/log/vllm
    command:
      - --model
      - ${MODEL_PATH}
      - --served-model-name
      - ${MODEL_NAME}
      - --host
      - 0.0.0.0
      - --port
      - "8000"
      - --gpu-memory-utilization
      - ${GPU_MEMORY_UTILIZATION}
      - --max-model-len
      - ${MAX_MODEL_LEN}
      - --swap-space
      - ${SWAP_SPACE_GB}
      - --cpu-offload-gb
      - ${CPU_OFFLOAD_GB}
""",
    "bundle/compose/vllm/.env": """VLLM_IMAGE=forstar/vllm-openai:offline
HOST_DATA_ROOT=/home/ubuntu/data/forstar
HOST_LOG_ROOT=/var/log/forstar

# Model paths inside container (mounted from MODEL_ROOT)
MODEL_ROOT=/opt/models
MODEL_PATH=/models/Qwen3-XXB
MODEL_NAME=Qwen3-XXB

# Memory / performance tuning
GPU_MEMORY_UTILIZATION=0.90
MAX_MODEL_LEN=8192
SWAP_SPACE_GB=16
CPU_OFFLOAD_GB=8

# Host port
VLLM_PORT=8000
""",
}


def test_custom_ais_script_runs_compose_in_a_subshell_that_moved_to_its_folder(tmp_path: Path) -> None:
    # `( cd "$ROOT_DIR/compose/vllm" && docker compose ... up -d )`: a subshell group (bash(1), Compound Commands)
    # was read as the commands `( cd ...` and `docker ... )`, so the script started no server; its `cd` moves the
    # compose project (the .env beside the compose file), and ends with the group
    write_files(tmp_path, CUSTOM_AI)
    script = tmp_path / "bundle" / "scripts" / "start-vllm.sh"
    (found,) = load_inputs((str(script),)).found
    assert found.source == f"{script} [docker compose up]"
    assert found.argv[2:4] == ("--model", "/models/Qwen3-XXB") and found.unresolved == ()
    cmd = parse_serve_argv(list(found.argv))
    assert (cmd.values["max_model_len"], cmd.values["gpu_memory_utilization"]) == (8192, 0.9)
    # the folder: the compose file is read once, as the script runs it
    loaded = load_inputs((str(tmp_path / "bundle"),))
    assert [f.source for f in loaded.found] == [f"{tmp_path}/bundle/scripts/start-vllm.sh [docker compose up]"]
    compose = tmp_path / "bundle" / "compose" / "vllm" / "docker-compose.yml"
    assert f"{compose}: read as run by {script}" in loaded.notes
