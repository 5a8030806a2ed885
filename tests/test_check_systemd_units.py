"""systemd units as systemd.service(5) runs them: an ExecStart= line is one command line; when it is `docker run`
(or podman), Docker's options and the image's ENTRYPOINT decide what runs, as for a script's `docker run`. The
shape is a public unit's (benchmarks/data/check-heldout/round22/SOURCES: vibe-stack/vllm.service); the inputs here
are hand-written."""

from __future__ import annotations

from pathlib import Path

from recommender.check.inputs import load_inputs
from recommender.check.systemd_units import read_systemd

from .check_support import write_files

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


SCRIPT = """#!/bin/bash
set -e
IMAGE=nvcr.io/nvidia/vllm:25.12-py3
cat > /home/me/vllm.env << 'ENVFILE'
# the model the unit serves
VLLM_MODEL=Qwen/Qwen3-Coder-Next-FP8
VLLM_MAX_MODEL_LEN="131072"
ENVFILE
sudo tee /etc/systemd/system/ray-head.service > /dev/null << 'HEAD'
[Service]
ExecStart=/bin/bash /home/me/start-ray-head.sh
HEAD
sudo tee /etc/systemd/system/vllm-coder.service > /dev/null << UNIT
[Service]
EnvironmentFile=/home/me/vllm.env
ExecStart=docker run --rm --gpus all $IMAGE \\\\
  vllm serve \\$VLLM_MODEL --tensor-parallel-size 2 --max-model-len \\$VLLM_MAX_MODEL_LEN
UNIT
sudo systemctl daemon-reload
sudo systemctl enable ray-head vllm-coder.service
sudo systemctl restart vllm-coder
"""


def test_a_unit_a_script_writes_and_starts_runs_with_the_environment_file_it_wrote(tmp_path: Path) -> None:
    """check-heldout round 24's keeratita/GX10-vLLM-Cluster deploy-master.sh (no licence to copy it; its shape
    here): the script writes units with `tee /etc/systemd/system/X.service <<EOF` and their EnvironmentFile= with
    `cat > F <<'EOF'`, then `systemctl enable` (systemctl(1): a name without a suffix is NAME.service). The unquoted
    here-document expands $IMAGE and leaves `\\$VLLM_MODEL` to systemd, which takes it from the EnvironmentFile
    (systemd.exec(5)). The script is a script although it holds `[Service]` and `ExecStart=` lines."""
    path = tmp_path / "deploy.sh"
    path.write_text(SCRIPT)
    (found,) = load_inputs((str(path),)).found  # ray-head's unit runs no vLLM; vllm-coder's is read once
    assert found.resource == "ExecStart (vllm-coder.service)"
    assert found.argv[:3] == ("vllm", "serve", "Qwen/Qwen3-Coder-Next-FP8")
    assert found.argv[-1] == "131072" and not found.unresolved
    assert found.container == "nvcr.io/nvidia/vllm:25.12-py3"
    # a unit it writes but never starts is not a server; an EnvironmentFile it did not write stays unknown
    never = SCRIPT.replace("sudo systemctl enable ray-head vllm-coder.service\n", "")
    path.write_text(never.replace("sudo systemctl restart vllm-coder\n", ""))
    assert load_inputs((str(path),)).found == []
    path.write_text(SCRIPT.replace("EnvironmentFile=/home/me/vllm.env", "EnvironmentFile=-/etc/other.env"))
    (found,) = load_inputs((str(path),)).found
    assert "$VLLM_MODEL" in found.argv and found.unresolved


# ZengboJamesWang/dgx-spark-vllm-qwen3.6-35b-a3b-dflash systemd/vllm-qwen3.6-35b-a3b-dflash.service (2026)
REPO_UNIT = """[Unit]
Description=vLLM Qwen3.6-35B-A3B-DFlash
After=docker.service network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
WorkingDirectory=%h/dgx-spark-vllm-qwen3.6-35b-a3b-dflash
ExecStart=%h/dgx-spark-vllm-qwen3.6-35b-a3b-dflash/scripts/start.sh 8192
ExecStop=-docker stop vllm-qwen3.6-35b-a3b-dflash
"""


def test_a_units_execstart_that_is_a_script_of_its_repository_runs_that_script(tmp_path: Path) -> None:
    """ExecStart= names a script of the unit's repository by where the host checks it out (%h/<checkout>/...): the
    longest tail of the path that is a file of the repository is that script, run with the words after it as $1;
    a program not in the repository (or not a shell script) is not read as one."""
    files = {
        ".git/HEAD": "x\n",
        "systemd/vllm.service": REPO_UNIT,
        "scripts/start.sh": '#!/bin/bash\nexec vllm serve Qwen/Qwen3-8B --max-model-len "$1"\n',
    }
    write_files(tmp_path, files)
    (found,) = load_inputs((str(tmp_path / "systemd" / "vllm.service"),)).found
    assert found.argv == ("vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "8192")
    assert found.resource == "ExecStart"
    by_bash = REPO_UNIT.replace("ExecStart=", "ExecStart=/bin/bash ")
    (tmp_path / "systemd" / "vllm.service").write_text(by_bash)
    assert [f.argv[-1] for f in load_inputs((str(tmp_path / "systemd" / "vllm.service"),)).found] == ["8192"]
    (tmp_path / "systemd" / "vllm.service").write_text(REPO_UNIT.replace("scripts/start.sh", "scripts/other.sh"))
    assert load_inputs((str(tmp_path / "systemd" / "vllm.service"),)).found == []
