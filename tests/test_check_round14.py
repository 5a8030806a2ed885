"""Readers fixed after blind round 14 (benchmarks/data/check-heldout/round14): a compose service whose entrypoint is a
script the service bind-mounts from beside the compose file is run with the command as "$@" (lex's
docker/vllm/vllm-entrypoint.sh, which links python and runs `exec "$@"`, in front of `python -m
vllm.entrypoints.openai.api_server ...`). Hand-written cases of that shape."""

from __future__ import annotations

from pathlib import Path

from recommender.check.inputs import load_inputs

ENTRYPOINT = '#!/usr/bin/env sh\nset -e\ncommand -v python >/dev/null 2>&1 || ln -sf "$(command -v python3)" /usr/local/bin/python\nexec "$@"\n'
COMPOSE = """services:
  vllm:
    build: {context: ./docker/vllm}
    image: local/vllm-openai:lexi
    ipc: host
    entrypoint: ["/vllm-entrypoint.sh"]
    environment: ["CUDA_VISIBLE_DEVICES=0,1,2,3"]
    volumes:
      - ./docker/vllm/vllm-entrypoint.sh:/vllm-entrypoint.sh:ro
    command: [python, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen3-30B-A3B, --tensor-parallel-size, '4']
"""


def _tree(tmp_path: Path, script: str = ENTRYPOINT, compose: str = COMPOSE) -> Path:
    (tmp_path / "docker" / "vllm").mkdir(parents=True)
    (tmp_path / "docker" / "vllm" / "vllm-entrypoint.sh").write_text(script)
    (tmp_path / "docker" / "vllm" / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n")
    (tmp_path / "compose.yml").write_text(compose)
    return tmp_path / "compose.yml"


def test_a_mounted_entrypoint_script_runs_the_command_as_its_arguments(tmp_path: Path) -> None:
    (found,) = load_inputs((str(_tree(tmp_path)),)).found
    assert found.resource == "service/vllm"
    assert "Qwen/Qwen3-30B-A3B" in found.argv and found.argv[found.argv.index("--tensor-parallel-size") + 1] == "4"
    assert found.gpus_per_pod == 4 and found.has_shm


def test_a_mounted_entrypoint_that_runs_something_else_is_no_vllm_server(tmp_path: Path) -> None:
    compose = _tree(tmp_path, script="#!/bin/sh\nexec /opt/proxy --listen :8000\n")
    assert load_inputs((str(compose),)).found == []


def test_an_entrypoint_not_mounted_from_beside_the_file_is_not_guessed(tmp_path: Path) -> None:
    """The script is in the image (no bind mount of it): what it does is not known here, so nothing is claimed."""
    compose = _tree(
        tmp_path,
        compose=COMPOSE.replace(
            "      - ./docker/vllm/vllm-entrypoint.sh:/vllm-entrypoint.sh:ro\n", "      - ./data:/data\n"
        ),
    )
    assert load_inputs((str(compose),)).found == []
