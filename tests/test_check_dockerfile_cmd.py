"""Which model a Dockerfile's server runs when its command names none: `docker run IMAGE ARGS` appends ARGS to the
ENTRYPOINT but replaces the CMD (docs.docker.com, "Understand how CMD and ENTRYPOINT interact"), so only a server in
the ENTRYPOINT with no CMD takes its model from `docker run`; a CMD as written runs vLLM's default model. The shape of
a public Dockerfile (benchmarks/data/check-heldout/round21/SOURCES: olivia/containers/Dockerfile_vllm)."""

from __future__ import annotations

import pytest

from recommender.check.dockerfile import read_dockerfile


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
