"""systemd units as systemd.service(5) runs them: an ExecStart= line is one command line; when it is `docker run`
(or podman), Docker's options and the image's ENTRYPOINT decide what runs, as for a script's `docker run`. The
shape is a public unit's (benchmarks/data/check-heldout/round22/SOURCES: vibe-stack/vllm.service); the inputs here
are hand-written."""

from __future__ import annotations

from recommender.check.systemd_units import read_systemd

UNIT = """[Unit]
Description=vLLM in a container
Requires=docker.service

[Service]
Environment=MODEL=Qwen/Qwen2.5-7B-Instruct
ExecStartPre=-/usr/bin/docker rm -f vllm
ExecStart=/usr/bin/docker run --name vllm \\
  --gpus 2 --ipc=host -p 8000:8000 \\
  vllm/vllm-openai:v0.10.0 \\
    ${MODEL} --tensor-parallel-size 2 --max-model-len 8192
ExecStop=/usr/bin/docker stop vllm
"""


def test_a_units_docker_run_serves_the_images_entrypoint_with_its_arguments() -> None:
    # vllm/vllm-openai's ENTRYPOINT is `vllm serve`: the words after the image are its arguments; `--gpus 2` gives
    # the container two GPUs and `--ipc=host` the host's /dev/shm; ${MODEL} is the unit's Environment=.
    (found,) = read_systemd(UNIT, "vllm.service")
    assert found.resource == "ExecStart"
    assert found.argv == (
        "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2", "--max-model-len", "8192"
    )  # fmt: skip
    assert (found.gpus_per_pod, found.has_shm, found.container) == (2, True, "vllm/vllm-openai:v0.10.0")


def test_a_units_docker_run_of_another_image_runs_no_vllm() -> None:
    # ExecStartPre/ExecStop are not the service's process, and a `docker run` of a non-vLLM image starts no server
    unit = UNIT.replace("vllm/vllm-openai:v0.10.0", "redis:7-alpine").replace(
        "${MODEL} --tensor-parallel-size 2 --max-model-len 8192", "redis-server"
    )
    assert read_systemd(unit, "redis.service") == []
