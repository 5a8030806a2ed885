"""Which model a Dockerfile's server runs when its command names none: `docker run IMAGE ARGS` appends ARGS to the
ENTRYPOINT but replaces the CMD (docs.docker.com, "Understand how CMD and ENTRYPOINT interact"), so only a server in
the ENTRYPOINT with no CMD takes its model from `docker run`; a CMD as written runs vLLM's default model. The shape of
a public Dockerfile (benchmarks/data/check-heldout/round21/SOURCES: olivia/containers/Dockerfile_vllm)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.check.dockerfile import read_dockerfile
from recommender.check.inputs import load_inputs


@pytest.mark.parametrize(
    ("dockerfile", "argv", "unresolved"),
    [
        ('FROM python:3.12\nRUN pip install "vllm==0.19.1"\nCMD ["python", "-m", "vllm.entrypoints.openai.api_server"]',
         ("vllm", "serve"), ()),
        ('FROM vllm/vllm-openai:v0.10.0\nCMD ["--port", "8000"]', ("vllm", "serve", "--port", "8000"), ()),
        ('FROM python:3.12\nENTRYPOINT ["python", "-m", "vllm.entrypoints.openai.api_server"]',
         ("vllm", "serve", "--model", '"$@"'), ('"$@"',)),
        ("FROM vllm/vllm-openai:v0.10.0\nENV X=1", ("vllm", "serve", '"$@"'), ('"$@"',)),
    ],
)  # fmt: skip
def test_the_model_comes_from_docker_run_only_after_an_entrypoint_without_cmd(
    dockerfile: str, argv: tuple[str, ...], unresolved: tuple[str, ...]
) -> None:
    (found,) = read_dockerfile(dockerfile, "Dockerfile")
    assert found.argv == argv and found.unresolved == unresolved


def test_serve_with_help_prints_the_options_and_runs_no_server(tmp_path: Path) -> None:
    # argparse prints the help and exits on --help / -h / --help=GROUP: gyohng/spark-vllm-compose's Dockerfile
    # (round 21's SOURCES) ends with ENTRYPOINT ["vllm"] CMD ["serve", "--help"]; its compose service's command
    # replaces the CMD and is the server
    dockerfile = 'FROM nvidia/cuda:13.0.1-devel-ubuntu24.04\nENTRYPOINT ["vllm"]\nCMD ["serve", "--help"]\n'
    (tmp_path / "Dockerfile").write_text(dockerfile)
    assert load_inputs((str(tmp_path),)).found == []
    (tmp_path / "compose.yaml").write_text("services:\n  vllm: {build: ., command: [serve, Qwen/Qwen3-8B]}\n")
    (found,) = load_inputs((str(tmp_path / "compose.yaml"),)).found
    assert found.argv == ("vllm", "serve", "Qwen/Qwen3-8B")
    for line in (
        "vllm serve Qwen/Qwen3-8B -h",
        "vllm serve --help=ModelConfig",
        "python -m vllm.entrypoints.openai.api_server --help",
    ):
        assert _servers_of_line(tmp_path, line) == []


def _servers_of_line(tmp_path: Path, line: str) -> list[object]:
    script = tmp_path / "serve.sh"
    script.write_text(f"#!/bin/bash\n{line}\n")
    return list(load_inputs((str(script),)).found)
