"""Launchers a script puts before vLLM's command, read as the tool that runs them reads its own options: `docker
exec [OPTIONS] CONTAINER COMMAND [ARG...]` (docs.docker.com/reference/cli/docker/container/exec) runs COMMAND in a
running container, with the variables its `-e` sets. The shape is a public script's (benchmarks/data/check-heldout/
round21/SOURCES: mudislandkid's repository, node1/start-vllm.sh); the inputs here are hand-written."""

from __future__ import annotations

from recommender.check.launchers import strip_prefixes

from .check_support import serves


def test_docker_exec_runs_its_command_in_the_container() -> None:
    script = """MODEL_NAME=Qwen/Qwen2.5-7B-Instruct
docker exec -it -e VLLM_USE_V1=1 --workdir /srv ray-head vllm serve "$MODEL_NAME" --tensor-parallel-size 2
"""
    ((words, unresolved),) = serves(script)
    assert words == ("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2")
    assert unresolved == ()


def test_docker_exec_options_are_not_the_command() -> None:
    # -u and --env take a value, -d is a flag; the first word after them is the container, not the command
    argv, env = strip_prefixes(["podman", "exec", "-d", "-u", "1000", "--env=HF_HOME=/cache", "box", "vllm", "serve"])
    assert (argv, env) == (["vllm", "serve"], {"HF_HOME": "/cache"})
    assert strip_prefixes(["docker", "run", "vllm/vllm-openai"])[0] == ["docker", "run", "vllm/vllm-openai"]
