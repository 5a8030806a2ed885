"""Readers fixed after blind round 19 (benchmarks/data/check-heldout/round19): hand-written cases of the shapes those
public files have (each names its file in the round's SOURCES): a compose command that runs vLLM's console script
with the venv's Python under taskset (ggs134-vllm), a Modal app whose argv holds `json.dumps({...})`
(mharoon-gemma4-modal), a Deployment whose `--config` a kustomize configMapGenerator beside it makes (penchev-vllm-k8s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.check.commands import read_command, vllm_argv
from recommender.check.inputs import load_inputs
from recommender.check.python_apps import read_python_app
from recommender.serve_args import parse_serve_argv

COMPOSE = """services:
  vllm:
    image: vllm-qwen:latest
    command: >
      bash -c "
      source /vllm-env/bin/activate &&
      cd /vllm &&
      taskset -c ${TASKSET_CPUS} /vllm-env/bin/python3 /vllm-env/bin/vllm serve ${MODEL_NAME}
        --tensor-parallel-size ${TENSOR_PARALLEL_SIZE}
        --max-model-len 32768
      "
"""


@pytest.mark.parametrize(
    ("words", "argv"),
    [
        (["/venv/bin/python3", "/venv/bin/vllm", "serve", "m", "-tp", "2"], ["vllm", "serve", "m", "-tp", "2"]),
        (["python", "-u", "-X", "dev", "vllm", "serve", "m"], ["vllm", "serve", "m"]),
        (["python3.12", "-W", "ignore", "./bin/vllm", "serve"], ["vllm", "serve"]),
    ],
)
def test_python_running_the_vllm_console_script_is_vllms_cli(words: list[str], argv: list[str]) -> None:
    assert vllm_argv(words) == (argv, True)


@pytest.mark.parametrize(
    "words",
    [
        ["python3", "/venv/bin/vllm", "bench", "serve"],  # another subcommand
        ["python3", "serve.py", "vllm", "serve"],  # the script is serve.py; the rest is its argv
        ["python3", "-c", "print(1)", "vllm", "serve"],  # -c ends the options: no script
        ["python3", "-m", "vllm_router", "vllm", "serve"],
    ],
)
def test_other_python_programs_are_not_vllm(words: list[str]) -> None:
    assert vllm_argv(words) is None


def test_a_compose_command_runs_the_console_script_under_taskset(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yaml").write_text(COMPOSE)
    (tmp_path / ".env").write_text("TASKSET_CPUS=0-63 # cores\nTENSOR_PARALLEL_SIZE=4\nMODEL_NAME=Qwen/Qwen3-8B\n")
    (found,) = load_inputs((str(tmp_path / "docker-compose.yaml"),)).found
    # the .env's inline comment is not part of TASKSET_CPUS (else `#` would end the shell line there); the flags on
    # more-indented lines keep their line breaks in a folded scalar (YAML 1.2, 8.1.3), so bash runs them as commands
    # of their own after `vllm serve MODEL`: the server gets the model alone
    assert found.argv == ("vllm", "serve", "Qwen/Qwen3-8B")
    (tmp_path / "docker-compose.yaml").write_text(COMPOSE.replace("\n        --", " --"))
    (found,) = load_inputs((str(tmp_path / "docker-compose.yaml"),)).found
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "Qwen/Qwen3-8B"
    assert cmd.values["tensor_parallel_size"] == 4 and cmd.values["max_model_len"] == 32768


MODAL_APP = """\
import json
import subprocess

import modal

app = modal.App("gemma")


@app.function(gpu="H100")
@modal.web_server(port=8000)
def serve() -> None:
    cmd = [
        "vllm",
        "serve",
        "google/gemma-3-4b-it",
        "--limit-mm-per-prompt",
        json.dumps({"image": 0, "video": 0}),
        "--hf-overrides",
        json.dumps({"a": [1, 2]}, separators=(",", ":")),
        "--override-generation-config",
        json.dumps(GENERATION),
    ]
    subprocess.Popen(cmd)
"""


def test_json_dumps_of_a_literal_is_the_text_python_gives() -> None:
    (found,) = read_python_app(MODAL_APP, "app.py", read_command) or []
    argv = list(found.argv)
    assert argv[argv.index("--limit-mm-per-prompt") + 1] == '{"image": 0, "video": 0}'
    assert argv[argv.index("--hf-overrides") + 1] == '{"a":[1,2]}'
    assert "--override-generation-config" in argv
    assert found.unresolved  # json.dumps of a name the file does not set is not guessed


def test_a_dotenv_inline_comment_is_not_part_of_the_value(tmp_path: Path) -> None:
    from recommender.check.inputs import read_dotenv

    (tmp_path / ".env").write_text(
        'A=0-63 #cores\nB=VAL# not a comment\nC="x # y"\nD="q"  # quoted, then a comment\n'
        "E='lit ${A}' # kept literal\nF=${A}\t# tab then comment\n# G=1\n"
    )
    assert read_dotenv(tmp_path / ".env") == {
        "A": "0-63",
        "B": "VAL# not a comment",
        "C": "x # y",
        "D": "q",
        "E": "lit ${A}",
        "F": "0-63",
    }


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.30.0
          args: ["--config", "/etc/vllm/config.yaml", "--port", "8000"]
          env:
            - name: TP
              valueFrom: {configMapKeyRef: {name: vllm-env, key: TP}}
          command: ["vllm", "serve", "--tensor-parallel-size", "$(TP)"]
          resources: {limits: {nvidia.com/gpu: 2}}
          volumeMounts: [{name: config, mountPath: /etc/vllm}]
      volumes:
        - name: config
          configMap: {name: vllm-config}
"""
KUSTOMIZATION = """apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - ./vllm-deployment.yaml
configMapGenerator:
  - name: vllm-config
    files:
      - config.yaml=vllm-config.yaml
  - name: vllm-env
    literals:
      - TP=2
"""


def test_a_kustomize_config_map_generator_beside_the_deployment_is_what_it_mounts(tmp_path: Path) -> None:
    (tmp_path / "vllm-deployment.yaml").write_text(DEPLOYMENT)
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION)
    (tmp_path / "vllm-config.yaml").write_text("model: /models/qwen3-4b\ngpu-memory-utilization: 0.92\n")
    (found,) = load_inputs((str(tmp_path / "vllm-deployment.yaml"),)).found
    assert found.files["/etc/vllm/config.yaml"].startswith("model: /models/qwen3-4b")
    assert found.argv[found.argv.index("--tensor-parallel-size") + 1] == "2" and not found.unresolved
    # a kustomization that does not list the file generates nothing for it; nor does a file outside its folder
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION.replace("./vllm-deployment.yaml", "other.yaml"))
    (found,) = load_inputs((str(tmp_path / "vllm-deployment.yaml"),)).found
    assert found.files == {} and "$(TP)" in found.unresolved
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION.replace("=vllm-config.yaml", "=../vllm-config.yaml"))
    (tmp_path.parent / "vllm-config.yaml").write_text("model: elsewhere\n")
    (found,) = load_inputs((str(tmp_path / "vllm-deployment.yaml"),)).found
    assert found.files == {}
