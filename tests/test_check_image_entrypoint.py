"""A container of vLLM's own image (vllm/vllm-openai, ENTRYPOINT vLLM's server) passes its Compose `command` /
Kubernetes `args` to that server: `command: /bin/sh -c "..."` runs `vllm serve /bin/sh -c ...`, which vLLM's parser
refuses at `-c` whatever the script holds (docs.docker.com: CMD is appended to ENTRYPOINT; the shape of a public
compose file, benchmarks/data/check-heldout/round21/SOURCES: realfoxtrot). Hand-written minimal inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.check.commands import find_in_words
from recommender.check.images import has_vllms_entrypoint

from .conftest import invoke

COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:latest
    command: >
      /bin/sh -c "
        exec vllm serve /models/$$(echo $$MODEL_PATH | tr '/' '_')
          --max-model-len 8192
      "
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]
"""


@pytest.mark.parametrize(
    ("image", "own"),
    [("vllm/vllm-openai:v0.10.0", True), ("docker.io/vllm/vllm-openai@sha256:ab", True),
     ("nvcr.io/nvidia/vllm:25.09-py3", False), ("my-vllm:latest", False), ("vllm/vllm-tpu:nightly", False)],
)  # fmt: skip
def test_vllms_own_server_image(image: str, own: bool) -> None:
    assert has_vllms_entrypoint(image) is own


def test_arguments_of_vllms_image_are_the_servers_whatever_they_hold() -> None:
    (hit,) = find_in_words(
        ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], {}, (), "vllm/vllm-openai"
    )
    assert hit.argv == ("vllm", "serve", "python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m")
    # another image's entrypoint (NVIDIA's runs the command it is given) still runs the command as written
    (hit,) = find_in_words(
        ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], {}, (), "nvcr.io/nvidia/vllm:25.09-py3"
    )
    assert hit.argv == ("vllm", "serve", "--model", "m")


def test_a_shell_command_on_vllms_image_fails_at_vllms_parser(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yml"
    path.write_text(COMPOSE)
    out = invoke(["check", str(path), "--format", "json"], exit_code=1).stdout
    (result,) = json.loads(out)
    assert result["status"] == "fail" and result["model"] == "/bin/sh"
    assert any("unrecognized arguments: -c" in f for f in result["failures"])


def test_an_option_vllm_lacks_fails_although_the_model_is_unresolved() -> None:
    out = invoke(
        ["check", "--gpu", "h100", "--", "vllm", "serve", "$MODEL", "--no-such-option", "x"], exit_code=1
    ).stdout
    assert "FAIL" in out and "--no-such-option" in out
    # a variable in the option's own name may be any option: not judged
    invoke(["check", "--gpu", "h100", "--", "vllm", "serve", "$MODEL", "--$OPT", "x"], exit_code=4)
