"""`check` on Compose files, each expectation worked out from Compose's and Docker's rules: a service built from a
Dockerfile beside it (its build args naming the base), an entrypoint script bind-mounted or copied in, a --config
bind-mounted from beside the file, .env values, `extends:` of a service of this or another file. The cases are
hand-written in the shapes of the public files of the held-out rounds (benchmarks/data/check-heldout/roundN, the
file named in the round's SOURCES): rounds 6-7, 12, 14 (lex's vllm-entrypoint.sh), 17 (laguna-vllm, shivam-vllm), 19
(ggs134-vllm), 20 (sergey-compose)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.check.inputs import load_inputs
from recommender.cli import cli
from recommender.serve_args import parse_serve_argv

from .check_support import engine_settings, found_in, write_files


def test_a_compose_service_runs_what_the_dockerfile_it_builds_says(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        'FROM vllm/vllm-openai:v0.11.0\nCMD ["--model", "google/gemma-3-4b-it", "--max-model-len", "2048"]\n'
    )
    (tmp_path / "Dockerfile.app").write_text('FROM python:3.11-slim\nCMD ["uvicorn", "app:app"]\n')
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(
        """services:
  engine: {build: ., image: my-vllm-engine}
  app: {build: {context: ., dockerfile: Dockerfile.app}, image: my-vllm-app}
  cli:
    build: {dockerfile_inline: "FROM python:3.11\\nENTRYPOINT [\\"vllm\\", \\"serve\\"]\\n"}
    command: [Qwen/Qwen3-8B, -tp, "2"]
"""
    )
    engine, cli = load_inputs((str(compose),)).found
    assert engine.argv == ("vllm", "serve", "--model", "google/gemma-3-4b-it", "--max-model-len", "2048")
    assert engine.image_tag == "v0.11.0"
    assert cli.argv == ("vllm", "serve", "Qwen/Qwen3-8B", "-tp", "2")


def test_a_dockerfile_outside_the_compose_folder_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text('FROM python:3.11\nENTRYPOINT ["vllm", "serve", "Qwen/Qwen3-8B"]\n')
    (tmp_path / "deploy").mkdir()
    compose = tmp_path / "deploy" / "compose.yml"
    compose.write_text("services:\n  app: {build: {context: .., dockerfile: Dockerfile}, image: app}\n")
    assert load_inputs((str(compose),)).found == []


def test_compose_build_args_name_the_base_image_of_the_dockerfile(tmp_path: Path) -> None:
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN pip install pytest\n")
    compose = tmp_path / "compose.yml"
    compose.write_text(
        "services:\n  llm:\n    image: my-vllm:local\n"
        "    build: {context: ./svc, args: {BASE_IMAGE: 'vllm/vllm-openai:v0.11.0'}}\n"
        "    command: [--model, Qwen/Qwen3-8B, --max-model-len, '8192']\n"
    )
    (found,) = load_inputs((str(compose),)).found
    assert found.argv[:3] == ("vllm", "serve", "--model") and "Qwen/Qwen3-8B" in found.argv
    assert found.image_tag == "v0.11.0"
    # without the argument the base is unknown: no server is claimed
    compose.write_text(compose.read_text().replace(", args: {BASE_IMAGE: 'vllm/vllm-openai:v0.11.0'}", ""))
    assert load_inputs((str(compose),)).found == []


MOUNTED_ENTRYPOINT = '#!/usr/bin/env sh\nset -e\ncommand -v python >/dev/null 2>&1 || ln -sf "$(command -v python3)" /usr/local/bin/python\nexec "$@"\n'


MOUNTED_COMPOSE = """services:
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


def _tree(tmp_path: Path, script: str = MOUNTED_ENTRYPOINT, compose: str = MOUNTED_COMPOSE) -> Path:
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
        compose=MOUNTED_COMPOSE.replace(
            "      - ./docker/vllm/vllm-entrypoint.sh:/vllm-entrypoint.sh:ro\n", "      - ./data:/data\n"
        ),
    )
    assert load_inputs((str(compose),)).found == []


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


LAGUNA_ENTRYPOINT = """#!/usr/bin/env bash
MODEL="${MODEL:-poolside/Laguna-S-2.1-NVFP4}"
MAX_MODEL_LEN="${MAX_MODEL_LEN:-262144}"
exec vllm serve "${MODEL}" --max-model-len "${MAX_MODEL_LEN}" --gpu-memory-utilization 0.72 "$@"
"""


def test_a_compose_service_built_here_runs_the_entrypoint_script_its_dockerfile_copies(tmp_path: Path) -> None:
    dockerfile = (
        "FROM nvidia/cuda:13.0.0-devel-ubuntu24.04\nRUN pip install vllm==0.25.1\n"
        'COPY entrypoint.sh /usr/local/bin/entrypoint.sh\nENTRYPOINT ["/usr/local/bin/entrypoint.sh"]\n'
    )
    write_files(tmp_path, {"compose.yml": COMPOSE_BUILD, "Dockerfile": dockerfile, "entrypoint.sh": LAGUNA_ENTRYPOINT})
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


def test_a_compose_entrypoint_shell_runs_the_script_mounted_from_beside_it(tmp_path: Path) -> None:
    write_files(tmp_path, {"compose.yml": COMPOSE_SHELL, "start.sh": RERANK, "config.yaml": "max-model-len: 32768\n"})
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
    write_files(
        tmp_path, {"compose.yml": compose, "config.yaml": config, "configs/big.yaml": "tensor-parallel-size: 4\n"}
    )
    first, second, third = load_inputs((str(tmp_path / "compose.yml"),)).found
    assert first.files == {"/app/config.yaml": config}
    s = engine_settings(first)
    assert (s["tensor_parallel_size"], s["max_model_len"], s["gpu_memory_utilization"]) == (2, 65536, 0.92)
    assert engine_settings(second)["tensor_parallel_size"] == 4  # a file of a bind-mounted folder
    assert third.files == {}  # nothing mounted there: the config is not readable here


TASKSET_COMPOSE = """services:
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


def test_a_compose_command_runs_the_console_script_under_taskset(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yaml").write_text(TASKSET_COMPOSE)
    (tmp_path / ".env").write_text("TASKSET_CPUS=0-63 # cores\nTENSOR_PARALLEL_SIZE=4\nMODEL_NAME=Qwen/Qwen3-8B\n")
    (found,) = load_inputs((str(tmp_path / "docker-compose.yaml"),)).found
    # the .env's inline comment is not part of TASKSET_CPUS (else `#` would end the shell line there); the flags on
    # more-indented lines keep their line breaks in a folded scalar (YAML 1.2, 8.1.3), so bash runs them as commands
    # of their own after `vllm serve MODEL`: the server gets the model alone
    assert found.argv == ("vllm", "serve", "Qwen/Qwen3-8B")
    (tmp_path / "docker-compose.yaml").write_text(TASKSET_COMPOSE.replace("\n        --", " --"))
    (found,) = load_inputs((str(tmp_path / "docker-compose.yaml"),)).found
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "Qwen/Qwen3-8B"
    assert cmd.values["tensor_parallel_size"] == 4 and cmd.values["max_model_len"] == 32768


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


BASE = """services:
  engine:
    image: vllm/vllm-openai:v0.17.0
    environment:
      HF_HOME: /hf
      NCCL_IB_DISABLE: "1"
    command: ["--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--max-model-len", "8192"]
"""


EXTENDING = """services:
  a:
    extends:
      file: ./base.yaml
      service: engine
    gpus:
      - driver: nvidia
        device_ids: ["0", "3"]
        capabilities: [gpu]
    environment:
      - LMCACHE_INSTANCE_ID=a
  b:
    extends: {file: ./base.yaml, service: engine}
    command: ["--model", "Qwen/Qwen3-4B"]
    gpus: [{driver: nvidia, count: 1, capabilities: [gpu]}]
  proxy:
    image: nginx:1.29
"""


def test_a_service_extending_another_files_service_runs_its_command_on_its_own_gpus(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(BASE)
    (tmp_path / "docker-compose.yaml").write_text(EXTENDING)
    a, b = found_in(tmp_path / "docker-compose.yaml")
    assert (a.resource, b.resource) == ("service/a", "service/b")
    cmd = parse_serve_argv(list(a.argv))
    assert cmd.model == "Qwen/Qwen3-8B" and cmd.values["tensor_parallel_size"] == 2
    assert cmd.values["max_model_len"] == 8192
    assert a.gpus_per_pod == 2  # device_ids 0 and 3
    # the base's environment mapping and the extending list are merged key by key (Compose's merge rules)
    assert a.env.get("HF_HOME") == "/hf" and a.env.get("LMCACHE_INSTANCE_ID") == "a"
    # `command` is replaced, not appended to: b serves its own model alone, on the one GPU it reserves
    assert parse_serve_argv(list(b.argv)).model == "Qwen/Qwen3-4B"
    assert "--tensor-parallel-size" not in b.argv and b.gpus_per_pod == 1


def test_extends_within_the_file_and_in_a_folder(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "base.yaml").write_text(BASE)
    (tmp_path / "docker-compose.yaml").write_text(
        "services:\n"
        "  first:\n    extends: {file: common/base.yaml, service: engine}\n"
        "  second:\n    extends: first\n    gpus: all\n"
    )
    first, second = found_in(tmp_path / "docker-compose.yaml")
    assert parse_serve_argv(list(first.argv)).model == parse_serve_argv(list(second.argv)).model == "Qwen/Qwen3-8B"
    assert second.gpus_per_pod is None  # `gpus: all` is not a count


@pytest.mark.parametrize(
    ("base", "said"),
    [  # was: the service as written, silently; Compose (compose-go loader/extends.go) cannot read the file either
        ("./missing.yaml", "`extends` file ./missing.yaml: no such file (Compose refuses it)"),
        ("./folder", "`extends` file ./folder: not a file (Compose refuses it)"),
    ],
)
def test_a_base_file_compose_cannot_read_is_one_line(tmp_path: Path, base: str, said: str) -> None:
    (tmp_path / "folder").mkdir()
    path = tmp_path / "docker-compose.yaml"
    path.write_text(
        f"services:\n  a:\n    extends: {{file: {base}, service: engine}}\n"
        "    image: vllm/vllm-openai:v0.17.0\n    command: [--model, m]\n"
    )
    result = CliRunner().invoke(cli, ["check", str(path), "--gpu", "h100"])
    assert result.exit_code == 2 and result.output == f"Error: {path} (service/a): {said}\n", result.output


def test_a_remote_base_is_not_evaluated(tmp_path: Path) -> None:
    """Compose fetches a base from a git URL or an OCI registry; check does not: the service is not judged."""
    path = tmp_path / "docker-compose.yaml"
    path.write_text(
        "services:\n  a:\n    extends: {file: 'oci://docker.io/org/base:1', service: engine}\n"
        "    image: vllm/vllm-openai:v0.17.0\n    command: [--model, Qwen/Qwen3-8B]\n"
    )
    (a,) = found_in(path)
    assert a.not_evaluable == (
        "it extends service engine of oci://docker.io/org/base:1, a remote file Compose fetches (check does not)"
    )


_INCLUDED = (
    "services:\n  vllm:\n    image: vllm/vllm-openai:${TAG}\n    command: [--model, Qwen/Qwen3-8B, -tp, '${TP}']\n"
)


def test_include_reads_the_services_of_the_files_it_names(tmp_path: Path) -> None:
    """`include:` (Compose 2.20+, docs.docker.com/reference/compose-file/include/): each file is read from its own
    folder and interpolated from the .env of its project directory, the including project's variables first
    (compose-go loader/include.go); a service the including file defines too is its definition merged over the
    included one (compose-go importResource). A folder run reads the included file once, as part of the whole."""
    write_files(
        tmp_path,
        {
            "compose.yaml": "include:\n  - sub/compose.yaml\n  - path: [other/a.yaml, other/b.yaml]\n"
            "    env_file: other/vars.env\n"
            "services:\n  web: {image: nginx}\n  second: {command: [--model, Qwen/Qwen3-4B]}\n",
            ".env": "TP=2\n",
            "sub/compose.yaml": _INCLUDED,
            "sub/.env": "TAG=v0.17.0\nTP=4\n",
            "other/a.yaml": "services:\n  second: {image: 'vllm/vllm-openai:${TAG}', command: [--model, x]}\n",
            "other/b.yaml": "services:\n  second: {gpus: [{driver: nvidia, count: 2}]}\n",
            "other/vars.env": "TAG=v0.20.0\n",
        },
    )
    first, second = found_in(tmp_path / "compose.yaml")
    assert (first.source, first.image_tag) == (f"{tmp_path / 'compose.yaml'} [include sub/compose.yaml]", "v0.17.0")
    assert parse_serve_argv(list(first.argv)).values["tensor_parallel_size"] == 2  # the including project's TP=2
    # the including file's `command` over the included one; b.yaml merged over a.yaml; TAG from env_file
    assert parse_serve_argv(list(second.argv)).model == "Qwen/Qwen3-4B"
    assert (second.image_tag, second.gpus_per_pod) == ("v0.20.0", 2)
    loaded = load_inputs((str(tmp_path),))
    assert len(loaded.found) == 2
    assert f"{tmp_path / 'sub' / 'compose.yaml'}: read as included by {tmp_path / 'compose.yaml'}" in loaded.notes


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ({"compose.yaml": "include: [gone.yaml]\n"}, "include gone.yaml: no such file (Compose refuses it)"),
        (
            {"compose.yaml": "include: [b.yaml]\nservices: {}\n", "b.yaml": "include: [compose.yaml]\n"},
            "include compose.yaml: comes back to compose.yaml: an include cycle Compose refuses",
        ),
        (
            {"compose.yaml": "include: [{path: b.yaml, env_file: gone.env}]\n", "b.yaml": _INCLUDED},
            "include env_file gone.env: no such file (Compose refuses it)",
        ),
        ({"compose.yaml": "include: [{path: 7}]\nservices: {}\n"}, "include[0] must be a path, or a mapping"),
        (
            {"compose.yaml": "include: [oci://docker.io/org/app:1]\nservices: {}\n"},
            "include oci://docker.io/org/app:1: a remote file Compose fetches (check does not): the services it "
            "defines are not evaluated",
        ),
    ],
)
def test_an_include_compose_refuses_or_check_cannot_read_is_one_line(
    tmp_path: Path, files: dict[str, str], said: str
) -> None:
    write_files(tmp_path, files)
    path = tmp_path / "compose.yaml"
    result = CliRunner().invoke(cli, ["check", str(path), "--gpu", "h100"])
    assert result.exit_code == 2 and result.output.startswith(f"Error: {path}"), result.output
    assert said in result.output and result.output.count("\n") == 1, result.output


def test_an_extends_cycle_is_one_line_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yaml"
    path.write_text("services:\n  a:\n    extends: b\n    command: [--model, m]\n  b:\n    extends: a\n")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2
    said = "`extends` comes back to service 'a': a circular reference Compose refuses"
    assert result.output.strip() == f"Error: {path} (service/a): {said}"


ENV_FILE_COMPOSE = """services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    env_file: [vllm.env, {path: ./local.env, required: false}]
    environment: {MAX_LEN: "16384"}
    entrypoint: ["/bin/bash", "-c"]
    command: ["vllm serve $$MODEL_ID --tensor-parallel-size $$TP --max-model-len $$MAX_LEN"]
"""


def test_a_service_env_file_sets_its_container_variables(tmp_path: Path) -> None:
    # Compose's env_file (docs.docker.com/reference/compose-file/services/#env_file): the container's variables,
    # later files over earlier ones, `environment` over both; the service's shell reads them ($$ is a literal $)
    write_files(
        tmp_path,
        {
            "compose.yaml": ENV_FILE_COMPOSE,
            "vllm.env": "MODEL_ID=Qwen/Qwen3-8B\nTP=1\nMAX_LEN=4096\nCUDA_VISIBLE_DEVICES=0,1\n",
            "local.env": "TP=2  # two cards\n",
        },
    )
    (found,) = found_in(tmp_path / "compose.yaml")
    assert found.argv == (
        "vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--max-model-len", "16384"
    )  # fmt: skip
    assert found.unresolved == () and found.gpus_per_pod == 2
    # an env_file not in the repository (a git-ignored .env) sets nothing: its variables stay unresolved
    (tmp_path / "vllm.env").unlink()
    (found,) = found_in(tmp_path / "compose.yaml")
    assert "Qwen/Qwen3-8B" not in found.argv and "$MODEL_ID" in found.unresolved


COMPOSE_RUN_FILE = """services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    environment: {HF_HOME: /cache}
    command: [--model, Qwen/Qwen3-8B, --max-model-len, "8192"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 2, capabilities: [gpu]}]}}}
"""


def test_a_script_runs_a_compose_service_with_its_command(tmp_path: Path) -> None:
    # `docker compose run [options] SERVICE [COMMAND...]` (docs.docker.com/reference/cli/docker/compose/run):
    # the service of the compose file beside the script, COMMAND replacing its command, -e added to its environment
    write_files(
        tmp_path,
        {
            ".git/HEAD": "ref: refs/heads/main\n",
            "docker-compose.yml": COMPOSE_RUN_FILE,
            "serve.sh": "#!/bin/bash\nTP=2\ndocker compose run --rm -e CUDA_VISIBLE_DEVICES=0,1 -p 8000:8000 vllm \\\n"
            '  --model Qwen/Qwen3-32B --tensor-parallel-size "$TP"\n',
        },
    )
    (found,) = load_inputs((str(tmp_path / "serve.sh"),)).found
    assert found.argv == ("vllm", "serve", "--model", "Qwen/Qwen3-32B", "--tensor-parallel-size", "2")
    assert found.gpus_per_pod == 2 and found.image_tag == "v0.11.0" and found.env["HF_HOME"] == "/cache"
    # without COMMAND the service's own command runs; `docker-compose -f FILE run` names the file
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "vllm.yaml").write_text(COMPOSE_RUN_FILE)
    (tmp_path / "serve.sh").write_text("docker-compose -f deploy/vllm.yaml run --rm vllm\n")
    (found,) = load_inputs((str(tmp_path / "serve.sh"),)).found
    assert found.argv == ("vllm", "serve", "--model", "Qwen/Qwen3-8B", "--max-model-len", "8192")
    # the words after the service are the shell's, not interpolated again by Compose: an unknown $FLAGS stays one
    # unknown word (was: replaced by a value the script's scope held, spaces and all)
    (tmp_path / "serve.sh").write_text(
        'if [[ "$1" =~ x ]]; then FLAGS="-tp 2"; fi\ndocker compose -f deploy/vllm.yaml run vllm --model m $FLAGS\n'
    )
    (found,) = load_inputs((str(tmp_path / "serve.sh"),)).found
    assert found.argv[-1] == "$FLAGS" and "$FLAGS" in found.unresolved
    # a compose file not in the repository: nothing is claimed
    (tmp_path / "serve.sh").write_text("docker compose -f /etc/compose.yaml run vllm\n")
    assert load_inputs((str(tmp_path / "serve.sh"),)).found == []


ROUND24 = Path(__file__).parent / "data" / "check-round24"  # real public files, sources in its SOURCES


def test_a_command_that_runs_a_script_mounted_from_beside_the_file_runs_that_script() -> None:
    """pfn/spark-vllm-compose's head/compose.yaml: `command: /launch-cluster.sh vllm serve ...` with
    `./launch-cluster.sh:/launch-cluster.sh:ro`, on a local image (vllm-node-tf5) whose other services run `vllm
    serve` as their command (so it has no ENTRYPOINT of vLLM's). Compose's command is the container's program there;
    the script ends `exec "${ORIGINAL_ARGS[@]}"`, its arguments: the server is that `vllm serve` line, not vLLM run
    with '/launch-cluster.sh' as its model (the false FAIL of round 24's blind run)."""
    found = {f.container: f for f in load_inputs((str(ROUND24 / "pfn-spark" / "head" / "compose.yaml"),)).found}
    assert len(found) == 6  # the two services under `profiles: ["ignore"]` too
    noray = found["vllm-noray"]
    assert noray.argv[:3] == ("vllm", "serve", "/models/Qwen3.5-397B-A17B-int4-AutoRound")
    assert engine_settings(noray)["tensor_parallel_size"] == 2
    assert engine_settings(noray)["gpu_memory_utilization"] == 0.909
    assert [f.argv[2] for f in found.values()].count("/models/Qwen3.5-397B-A17B-int4-AutoRound") == 2


def test_a_mounted_script_command_on_vllms_own_image_is_its_servers_arguments(tmp_path: Path) -> None:
    """vllm/vllm-openai's ENTRYPOINT is `vllm serve`: a command there is that server's arguments whatever it holds
    (round 21), a script mounted from beside the file included - `vllm serve /start.sh ...`, which vLLM refuses."""
    (tmp_path / "start.sh").write_text("#!/bin/sh\nexec vllm serve Qwen/Qwen3-8B\n")
    compose = tmp_path / "compose.yaml"
    compose.write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    command: /start.sh --port 8000\n"
        "    volumes: [./start.sh:/start.sh:ro]\n  other:\n    image: my-vllm-node\n"
        "    command: [/start.sh]\n    volumes: [./start.sh:/start.sh:ro]\n"
    )
    own, other = load_inputs((str(compose),)).found
    assert own.argv == ("vllm", "serve", "/start.sh", "--port", "8000")
    assert other.argv == ("vllm", "serve", "Qwen/Qwen3-8B")


COMPOSE_UP_FILE = """services:
  vllm:
    image: vllm/vllm-openai:v0.11.0
    command: [--model, "${MODEL:-Qwen/Qwen3-8B}", --tensor-parallel-size, "${TP:-1}", --max-model-len, "${LEN:-8192}"]
  web:
    image: nginx
    depends_on: [vllm]
  redis:
    image: redis
"""


@pytest.mark.parametrize(
    ("script", "dotenv", "tp", "length"),
    [
        ("export TP=4\ndocker compose up -d\n", "TP=2\nLEN=16384\n", "4", "16384"),  # shell > .env > default
        ("docker compose up -d\n", "TP=2\nLEN=16384\n", "2", "16384"),  # .env > default
        ("docker compose up -d\n", None, "1", "8192"),  # the defaults
        ("TP=8 docker-compose up --scale vllm=1 -d web\n", "TP=2\n", "8", "8192"),  # a prefix; web depends on vllm
        ("docker compose --env-file prod.env up\n", "TP=2\nLEN=4096\n", "1", "8192"),  # --env-file replaces .env
    ],
)
def test_a_script_runs_compose_up_with_its_environment(
    tmp_path: Path, script: str, dotenv: str | None, tp: str, length: str
) -> None:
    # docs.docker.com/compose/how-tos/environment-variables/envvars-precedence: the shell running `docker compose`
    # over the project directory's .env (or the --env-file given instead) over ${VAR:-default}
    files = {".git/HEAD": "ref: refs/heads/main\n", "compose.yaml": COMPOSE_UP_FILE, "prod.env": "MODEL=m/x\n"}
    files.update({"start.sh": "#!/bin/bash\n" + script, **({".env": dotenv} if dotenv else {})})
    write_files(tmp_path, files)
    (found,) = load_inputs((str(tmp_path / "start.sh"),)).found
    model = "m/x" if "--env-file" in script else "Qwen/Qwen3-8B"
    assert found.argv == ("vllm", "serve", "--model", model, "--tensor-parallel-size", tp, "--max-model-len", length)
    assert found.source.endswith("[docker compose up]") and found.image_tag == "v0.11.0"


# SongXP111/vllm-serving-lab scripts/start.sh (2026), shortened: the compose file is in the project root, one level up
CD_THEN_UP = """#!/bin/bash
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_ROOT="$(dirname "$SCRIPT_DIR")"
cd "$PROJECT_ROOT"
docker compose up -d
"""


@pytest.mark.parametrize(
    ("script", "tp"),
    [
        (CD_THEN_UP, "2"),  # cd to the root: its compose.yaml and its .env
        (CD_THEN_UP.replace('cd "$PROJECT_ROOT"', 'X="$(cd "$PROJECT_ROOT" && pwd)"'), None),  # a subshell's cd
        ("cd ..\ndocker compose up\n", "2"),  # relative to the script's folder
        ("cd ..\ncd ~\ndocker compose up\n", None),  # a folder not known here: where the script runs
    ],
)
def test_compose_up_runs_in_the_folder_the_script_cd_to(tmp_path: Path, script: str, tp: str | None) -> None:
    """`docker compose up` reads the compose file (and .env) of the folder it runs in: the one the script's `cd`
    moved to; a `cd` in `$(...)` runs in a subshell and moves nothing."""
    files = {".git/HEAD": "x\n", "compose.yaml": COMPOSE_UP_FILE, ".env": "TP=2\n", "scripts/start.sh": script}
    write_files(tmp_path, files)
    found = load_inputs((str(tmp_path / "scripts" / "start.sh"),)).found
    assert [f.argv[5] for f in found] == ([tp] if tp else [])


def test_compose_up_of_a_service_that_is_not_vllm_starts_no_server(tmp_path: Path) -> None:
    # `up SERVICE` starts that service and what it depends on, nothing else
    write_files(tmp_path, {".git/HEAD": "x\n", "compose.yaml": COMPOSE_UP_FILE, "s.sh": "docker compose up -d redis\n"})
    assert load_inputs((str(tmp_path / "s.sh"),)).found == []


STRAY_LAUNCHER = """services:
  vllm:
    image: vllm/vllm-openai:gptoss
    command: [python3, -m, vllm.entrypoints.openai.api_server, --model, Qwen/Qwen2.5-7B-Instruct, {tail}]
    deploy: {{resources: {{reservations: {{devices: [{{driver: nvidia, count: 1, capabilities: [gpu]}}]}}}}}}
"""


def test_a_second_positional_fails_even_when_the_release_is_unknown(tmp_path: Path) -> None:
    # vllm/vllm-openai's entrypoint is `vllm serve`; FlexibleArgumentParser moves `--model M` first, so `python3`
    # is a second positional after model_tag, which argparse refuses in every release ("unrecognized arguments")
    path = tmp_path / "docker-compose.yml"
    path.write_text(STRAY_LAUNCHER.format(tail="--some-old-flag, '1'"))
    result = CliRunner().invoke(cli, ["check", str(path), "--gpu", "h100"])
    assert result.exit_code == 1, result.output
    assert "unrecognized arguments: python3 -m vllm.entrypoints.openai.api_server --some-old-flag 1" in result.output
    assert "fix: drop `python3 -m vllm.entrypoints.openai.api_server`" in result.output


def test_a_word_after_an_unknown_option_may_be_its_value_in_an_unknown_release(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yml"
    path.write_text(
        STRAY_LAUNCHER.format(tail="--some-old-flag, '1'").replace(
            "python3, -m, vllm.entrypoints.openai.api_server, ", ""
        )
    )
    result = CliRunner().invoke(cli, ["check", str(path), "--gpu", "h100"])
    assert result.exit_code == 0, result.output
    assert "not judged" in result.output and "unrecognized" not in result.output


RUN_BY_SCRIPT = """services:
  vllm:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, Qwen/Qwen2.5-32B-Instruct, --tensor-parallel-size, "${TP:-1}", --max-model-len, "32768"]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: all, capabilities: [gpu]}]}}}
    shm_size: 8g
  small:
    image: vllm/vllm-openai:v0.10.1
    command: [--model, Qwen/Qwen2.5-0.5B-Instruct]
    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]}}}
"""


def test_a_folder_reads_a_compose_file_a_script_runs_once_as_the_script_runs_it(tmp_path: Path) -> None:
    # on its own (TP 1 from the default) a 32B model at 32k does not fit one H100 and would fail the gate; the script
    # that starts it exports TP=4 over the default (Compose's precedence), and is the only way it is started
    (tmp_path / "docker-compose.yml").write_text(RUN_BY_SCRIPT)
    (tmp_path / "run.sh").write_text("#!/bin/bash\nexport TP=4\ndocker compose up -d vllm\n")
    result = CliRunner().invoke(cli, ["check", str(tmp_path), "--gpu", "h100", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {(r["file"], r["resource"]): r for r in json.loads(result.stdout)}
    assert set(rows) == {
        (f"{tmp_path}/run.sh [docker compose up]", "service/vllm"),
        (f"{tmp_path}/docker-compose.yml", "service/small"),  # not started by the script: still read on its own
    }
    assert rows[(f"{tmp_path}/run.sh [docker compose up]", "service/vllm")]["read"]["tensor_parallel_size"] == 4
    assert f"{tmp_path}/docker-compose.yml: read as run by {tmp_path}/run.sh" in result.stderr


def test_a_compose_file_given_beside_the_script_that_runs_it_is_read_once(tmp_path: Path) -> None:
    # `check run.sh docker-compose.yml`: the files given one by one are read as a folder's are: the compose file's
    # service the script starts is its reading (TP=4), not a second server in a configuration nobody starts (TP 1,
    # which fails); the service it does not start is still read on its own
    (tmp_path / "docker-compose.yml").write_text(RUN_BY_SCRIPT)
    (tmp_path / "run.sh").write_text("#!/bin/bash\nexport TP=4\ndocker compose up -d vllm\n")
    script, compose = str(tmp_path / "run.sh"), str(tmp_path / "docker-compose.yml")
    for given in ([script, compose], [compose, script]):
        result = CliRunner().invoke(cli, ["check", *given, "--gpu", "h100", "--format", "json"])
        assert result.exit_code == 0, result.output
        assert {(r["file"], r["resource"]) for r in json.loads(result.stdout)} == {
            (f"{script} [docker compose up]", "service/vllm"),
            (compose, "service/small"),
        }
        assert f"{compose}: read as run by {script}" in result.stderr
    alone = CliRunner().invoke(cli, ["check", compose, "--gpu", "h100", "--format", "json"])  # on its own: TP 1
    assert alone.exit_code == 1 and len(json.loads(alone.stdout)) == 2
