"""`check` on Dockerfiles: an ENTRYPOINT script the Dockerfile COPYs from its build context runs with CMD as its
arguments, a script from another stage or missing here is not guessed, a `vllm serve --config` command takes its
model from the config and its release from uv.lock. The cases are hand-written in the shapes of the public files of
the held-out rounds (benchmarks/data/check-heldout/roundN, the file named in the round's SOURCES): round 17
(windrichie-vllm, custom-vllm) and round 18."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.check.inputs import load_inputs

from .check_support import engine_settings, write_files
from .conftest import invoke

START = '#!/bin/bash\nMODEL_PATH=${MODEL_PATH:-/data/models/Qwen2.5-7B-Instruct}\nvllm serve ${MODEL_PATH} --port 8000 --gpu-memory-utilization 0.9 "$@"\n'


DOCKERFILE = """FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime
WORKDIR /app
COPY requirements.txt ./requirements.txt
RUN pip install -r requirements.txt
COPY start.sh ./start.sh
RUN chmod +x ./start.sh
ENTRYPOINT ["./start.sh"]
CMD ["--max-model-len", "8192"]
"""


def test_a_dockerfile_runs_the_script_it_copies_in_with_cmd_as_its_arguments(tmp_path: Path) -> None:
    write_files(tmp_path, {"Dockerfile": DOCKERFILE, "start.sh": START, "requirements.txt": "vllm==0.11.0\n"})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert found.resource == "ENTRYPOINT"
    assert found.argv[:3] == ("vllm", "serve", "/data/models/Qwen2.5-7B-Instruct")
    assert found.argv[found.argv.index("--max-model-len") + 1] == "8192"  # CMD is the script's "$@"
    assert not found.unresolved


def test_copy_into_the_working_folder_and_a_relative_entrypoint_meet_without_a_workdir(tmp_path: Path) -> None:
    """`COPY run.sh .` and `ENTRYPOINT ["./run.sh"]` on a base whose WORKDIR the Dockerfile does not set."""
    dockerfile = 'FROM vllm/vllm-openai\nCOPY run.sh .\nRUN chmod +x run.sh\nENTRYPOINT ["./run.sh"]\n'
    run = "#!/bin/bash\npython3 -m vllm.entrypoints.openai.api_server --model ./model --max-model-len 4096\n"
    write_files(tmp_path, {"Dockerfile": dockerfile, "run.sh": run})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert "./model" in found.argv and not found.serve_form


def test_a_script_copied_from_another_stage_or_missing_here_is_not_guessed(tmp_path: Path) -> None:
    other_stage = DOCKERFILE.replace("COPY start.sh ./start.sh", "COPY --from=builder /src/start.sh ./start.sh")
    write_files(tmp_path, {"Dockerfile": other_stage, "start.sh": START})
    assert load_inputs((str(tmp_path / "Dockerfile"),)).found == []
    write_files(tmp_path, {"Dockerfile": DOCKERFILE})
    (tmp_path / "start.sh").unlink()
    assert load_inputs((str(tmp_path / "Dockerfile"),)).found == []


def test_a_shell_running_the_copied_script_runs_it(tmp_path: Path) -> None:
    dockerfile = (
        'FROM nvidia/cuda:12.4.0-runtime-ubuntu22.04\nCOPY start.sh /opt/start.sh\nCMD ["bash", "/opt/start.sh"]\n'
    )
    write_files(tmp_path, {"Dockerfile": dockerfile, "start.sh": START})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert found.argv[2] == "/data/models/Qwen2.5-7B-Instruct"


LOCKED = """FROM python:3.10
COPY --from=ghcr.io/astral-sh/uv:0.8.3 /uv /uvx /bin/
WORKDIR /workspace
COPY pyproject.toml uv.lock config.yaml ./
RUN uv sync --frozen
CMD ["uv", "run", "vllm", "serve", "--config", "config.yaml"]
"""


CONFIG = "model: Qwen/Qwen2.5-0.5B-Instruct\nmax-model-len: 8192\ngpu-memory-utilization: 0.8\nmax-seq-len-to-capture: 8192\n"


UV_LOCK = 'version = 1\n\n[[package]]\nname = "vllm"\nversion = "0.10.1.1"\nsource = { registry = "https://pypi.org/simple" }\n'


def test_a_dockerfile_command_with_a_config_takes_its_model_from_the_config(tmp_path: Path) -> None:
    """`vllm serve --config FILE` names its model in FILE (vLLM refuses to start without one): not a `docker run`
    argument; and `uv sync` installs the release uv.lock records (0.10.1.1 still has --max-seq-len-to-capture)."""
    write_files(tmp_path, {"Dockerfile": LOCKED, "config.yaml": CONFIG, "uv.lock": UV_LOCK, "pyproject.toml": ""})
    (found,) = load_inputs((str(tmp_path / "Dockerfile"),)).found
    assert '"$@"' not in found.argv and not found.unresolved
    assert found.image_tag == "0.10.1.1"
    assert engine_settings(found)["model"] == "Qwen/Qwen2.5-0.5B-Instruct"
    (r,) = json.loads(invoke(["check", str(tmp_path / "Dockerfile"), "--gpu", "l4", "--format", "json"]).stdout)
    assert r["status"] == "pass"
    (tmp_path / "uv.lock").unlink()  # the release is not known: the target's parser refuses the removed flag
    (r,) = json.loads(
        invoke(["check", str(tmp_path / "Dockerfile"), "--gpu", "l4", "--format", "json"], exit_code=1).stdout
    )
    assert any("--max-seq-len-to-capture" in f for f in r["failures"])


SUBFOLDER_DOCKERFILE = """FROM vllm/vllm-openai:v0.10.0
COPY scripts/start.sh /usr/local/bin/start.sh
ENTRYPOINT ["/usr/local/bin/start.sh"]
"""


def test_a_dockerfile_in_a_subfolder_takes_its_copies_from_the_folder_docker_build_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `docker build -f docker/Dockerfile .` (round 22's veritogen: docker/Dockerfile.pod COPYs scripts/start-vllm.sh
    # from the repository root): the script is not beside the Dockerfile, so the context is the folder checked, or
    # the current directory for the file given alone under it, or the nearest folder above holding it
    write_files(tmp_path, {"docker/Dockerfile": SUBFOLDER_DOCKERFILE, "scripts/start.sh": START})
    checked = load_inputs((str(tmp_path),)).found  # the folder checked: the script is a server of its own too
    (found,) = [f for f in checked if f.source.endswith("Dockerfile")]
    assert found.argv[:3] == ("vllm", "serve", "/data/models/Qwen2.5-7B-Instruct")
    monkeypatch.chdir(tmp_path)
    (alone,) = load_inputs(("docker/Dockerfile",)).found  # given alone, run from the repository's root
    assert alone.argv == found.argv
    # given alone from elsewhere (check_corpus.py's staged copies): `docker build .` beside it has no scripts/ to
    # COPY (the build fails), so the image was built from the folder above that has them
    monkeypatch.chdir(tmp_path / "docker")
    assert load_inputs(("Dockerfile",)).found[0].argv == found.argv
    # never above the repository: with .git in docker/ itself, the script outside it is not read
    (tmp_path / "docker" / ".git").mkdir()
    monkeypatch.chdir(tmp_path.parent)
    assert load_inputs((str(tmp_path / "docker" / "Dockerfile"),)).found == []
