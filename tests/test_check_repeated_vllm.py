"""A container whose entrypoint already starts vLLM, given a command that starts it again: Docker appends CMD /
Compose `command` / `docker run IMAGE ARGS` to the ENTRYPOINT (docs.docker.com, Dockerfile reference, "Understand how
CMD and ENTRYPOINT interact"), Kubernetes its `args` to its `command` or the image's ENTRYPOINT (kubernetes.io, "Define
a Command and Arguments for a Container"). An entrypoint `vllm` with `vllm serve M` runs `vllm vllm serve M`, which
vLLM's CLI refuses (`vllm` is none of its subcommands); vLLM's own image (ENTRYPOINT `vllm serve`, the api_server
module in older tags: vllm-project/vllm docker/Dockerfile) with `vllm serve M` runs `vllm serve vllm serve M`, refused
as "unrecognized arguments: serve". Each is one failure naming its fix, never a passing server. Hand-written minimal
inputs following those rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.check.commands import find_in_words

from .conftest import invoke

GPU = """    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]
"""
SERVE = '["vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096"]'


def _deployment(command: str) -> str:
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  selector:
    matchLabels: {{app: llm}}
  template:
    metadata:
      labels: {{app: llm}}
    spec:
      containers:
        - name: server
          image: vllm/vllm-openai:v0.10.1
{command}          args: {SERVE}
          resources:
            limits:
              nvidia.com/gpu: 1
"""


CASES = {
    # an image built with ENTRYPOINT ["vllm"] (Dockerfile beside the compose file), its command `vllm serve ...`
    "built": (
        f"services:\n  llm:\n    build: .\n    command: {SERVE}\n{GPU}",
        'FROM python:3.12\nRUN pip install vllm==0.10.1\nENTRYPOINT ["vllm"]\n',
        "drop the leading `vllm`",
    ),
    "compose-entrypoint": (
        f"services:\n  llm:\n    image: vllm/vllm-openai:v0.10.1\n    entrypoint: vllm\n    command: {SERVE}\n{GPU}",
        None,
        "drop the leading `vllm`",
    ),
    "stock-compose": (
        f"services:\n  llm:\n    image: vllm/vllm-openai:v0.10.1\n    command: {SERVE}\n{GPU}",
        None,
        "drop `vllm serve`",
    ),
    "k8s-command": (_deployment('          command: ["vllm"]\n'), None, "drop the leading `vllm`"),
    "k8s-stock": (_deployment(""), None, "drop `vllm serve`"),
    "docker-run": (
        "docker run --gpus all --entrypoint vllm vllm/vllm-openai:v0.10.1 vllm serve Qwen/Qwen2.5-0.5B-Instruct\n",
        None,
        "drop the leading `vllm`",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_vllm_started_twice_fails_with_its_fix(tmp_path: Path, case: str) -> None:
    text, dockerfile, fix = CASES[case]
    name = "run.sh" if case == "docker-run" else "deploy.yaml" if case.startswith("k8s") else "compose.yaml"
    (tmp_path / name).write_text(text)
    if dockerfile:
        (tmp_path / "Dockerfile").write_text(dockerfile)
    out = invoke(["check", str(tmp_path / name), "--gpu", "h100", "--format", "json"], exit_code=1).stdout
    (result,) = json.loads(out)
    assert result["status"] == "fail"
    assert any(fix in f for f in result["failures"]), result["failures"]


def test_the_same_command_without_the_repeat_is_read_as_the_server() -> None:
    (hit,) = find_in_words(["vllm", "serve", "m"], {}, (), None)
    assert hit.problems == () and hit.argv == ("vllm", "serve", "m")
    (hit,) = find_in_words(["m", "--max-model-len", "4096"], {}, (), "vllm/vllm-openai:v0.10.1", vllm_entrypoint=True)
    assert hit.problems == () and hit.argv == ("vllm", "serve", "m", "--max-model-len", "4096")
    (hit,) = find_in_words(["/usr/bin/vllm", "vllm", "serve", "m"], {}, (), None)
    assert hit.problems and hit.argv == ("vllm", "serve", "m")
    # another image whose entrypoint runs the command it is given (NVIDIA's) runs `vllm serve` as written
    (hit,) = find_in_words(["vllm", "serve", "m"], {}, (), "nvcr.io/nvidia/vllm:25.09-py3", vllm_entrypoint=True)
    assert hit.problems == ()
