"""The mini shell `check` runs scripts with, each expectation what bash does with the text: `set --`, vLLM named
through a variable, commented-out continuation lines, parameter expansion, command substitution inside double
quotes, a shell started by apptainer, Python running vLLM's console script, a copy-me `.example` script. The cases
are hand-written in the shapes of the public files of the held-out rounds (benchmarks/data/check-heldout/roundN, the
file named in the round's SOURCES): rounds 6-7, 12, 15, 18 and 19."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.check import shell
from recommender.check.commands import vllm_argv
from recommender.check.inputs import load_inputs
from recommender.check.load import read_text
from recommender.serve_args import parse_serve_argv

from .check_support import serves, write_file, write_files
from .conftest import invoke


def test_set_builds_the_positional_parameters_a_script_execs() -> None:
    script = """set -eu
set -- serve "$MODEL_ID" --max-model-len 4096
if [ "${TRUST:-}" = "1" ]; then
  set -- "$@" --trust-remote-code
fi
set -- "$@" --gpu-memory-utilization 0.8
exec vllm "$@"
"""
    ((words, _),) = [(c.words, c.unresolved) for c in shell.run_script(script) if c.words[:1] == ("vllm",)]
    assert words == ("vllm", "serve", "$MODEL_ID", "--max-model-len", "4096", "--gpu-memory-utilization", "0.8")


def test_vllm_named_through_a_variable_around_an_unknown_folder() -> None:
    script = """DIR="$(cd "$(dirname "$0")" && pwd)"
VLLM="$DIR/.venv/bin/vllm"
N="${N:-3}"
ARGS=("$DIR/models/m" --max-model-len 8192)
if (( N > 0 )); then
  ARGS+=(--speculative-config '{"num_speculative_tokens": 3}')
fi
exec "$VLLM" serve "${ARGS[@]}"
"""
    (cmd,) = [c for c in shell.run_script(script) if "serve" in c.words]
    assert cmd.words[0] == "$DIR/.venv/bin/vllm" and cmd.words[3:5] == ("--max-model-len", "8192")
    assert cmd.words[-2] == "--speculative-config"  # (( 3 > 0 )) is true
    command = parse_serve_argv(["vllm", *cmd.words[1:]])
    assert command.model == "$DIR/models/m"  # the folder stays unknown, named by its variable


def test_a_commented_out_line_ending_in_a_backslash_does_not_continue() -> None:
    # bash: the backslash is part of the comment, so the comment ends at its line and the next command runs
    script = """# vllm serve old/model \\
# vllm serve other/model \\
vllm serve new/model \\
    --max-model-len 8K \\
    -tp 4
"""
    ((words, _),) = serves(script)
    assert words == ("vllm", "serve", "new/model", "--max-model-len", "8K", "-tp", "4")
    command = parse_serve_argv(list(words))
    assert command.values["max_model_len"] == 8192  # vLLM's human-readable ints: K is 1024


def test_a_python_named_by_a_variable_running_the_api_server() -> None:
    script = "$PY -m vllm.entrypoints.openai.api_server --model /models/Qwen3-32B --max-model-len 8192\n"
    (found,) = read_text(script, "job.sbatch", ".sbatch")
    assert found.argv == ("vllm", "serve", "--model", "/models/Qwen3-32B", "--max-model-len", "8192")
    assert not found.serve_form


def test_parameter_expansion_removes_a_pattern_from_the_front_or_the_back() -> None:
    script = """REPO="${REPO:-Inferact/Qwen3.8-27B-NVFP4}"
F=model.tar.gz
vllm serve "/models/${REPO##*/}" --served-model-name "${F%%.*}" --x "${F%.*}" --y "${REPO#*/}" --z "${UNSET##*/}"
"""
    ((words, unresolved),) = serves(script)
    assert words[2:9] == ("/models/Qwen3.8-27B-NVFP4", "--served-model-name", "model", "--x", "model.tar", "--y",
                          "Qwen3.8-27B-NVFP4")  # fmt: skip
    assert unresolved == ("${UNSET##*/}",)


def test_a_shell_started_by_apptainer_in_a_batch_script_runs_its_server() -> None:
    script = """#!/bin/bash
#SBATCH --gres=gpu:2
export TP="${SLURM_SOMETHING:-2}"
apptainer exec --nv --bind "$HOME":/h "$HOME/vllm.sif" \\
  bash -lc "
    export X=1
    python3 -m vllm.entrypoints.openai.api_server \\\\
      --model openai/gpt-oss-20b --tensor-parallel-size \\"$TP\\" --max-model-len 8192
  "
"""
    (found,) = read_text(script, "job.sbatch", ".sbatch")
    assert "openai/gpt-oss-20b" in found.argv and "2" in found.argv and "8192" in found.argv


# zacharyzusin/atp-budget-study slurm/vllm_server.sh: a default that is a command's output, whose Python code holds
# double quotes and a `;` inside the double-quoted assignment
NESTED = """#!/bin/bash
MAX_MODEL_LEN="${ATP_MAX_MODEL_LEN:-$(python -c "from atp.config import load_config, B; print(load_config(B).model.max_model_len)" 2>/dev/null)}"
exec python -m vllm.entrypoints.openai.api_server \\
    --model Qwen/Qwen3-8B \\
    --max-model-len "$MAX_MODEL_LEN" \\
    --port 8000
"""


def test_a_command_substitution_opens_its_own_quotes_inside_double_quotes(tmp_path: Path) -> None:
    path = write_file(tmp_path, "vllm_server.sh", NESTED)
    (found,) = load_inputs((str(path),)).found
    assert found.argv[found.argv.index("--max-model-len") + 1] == "$MAX_MODEL_LEN"
    assert found.unresolved == ("$MAX_MODEL_LEN",)
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "h100", "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated" and r["failures"] == []
    assert r["not_evaluated_because"] == ["unresolved $MAX_MODEL_LEN"]


# Round 18 (benchmarks/data/check-heldout/round18): tobrun-vllm, benedixx-gemma3.
def test_a_copy_me_example_of_a_script_is_read_as_the_script(tmp_path: Path) -> None:
    script = (
        "#!/bin/bash\nsource /opt/vllm-env/bin/activate\nvllm serve /models/Qwen3-8B \\\n  --tensor-parallel-size 4\n"
    )
    path = tmp_path / "start_model.sh.example"
    path.write_text(script)
    (found,) = load_inputs((str(path),)).found
    assert found.argv[:3] == ("vllm", "serve", "/models/Qwen3-8B")
    assert found.argv[found.argv.index("--tensor-parallel-size") + 1] == "4"


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


COMMON_SETUP = """#!/usr/bin/env bash
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
ENV_FILE="$REPO_ROOT/env.sh"
if [[ -f "$ENV_FILE" ]]; then
  source "$ENV_FILE"
fi
: "${TENSOR_PARALLEL_SIZE:=1}"
: "${MODEL_DIR:=/mnt/shared/$MODEL_NAME}"
"""

LAUNCH_RAY = """#!/usr/bin/env bash
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
COMMON_SETUP="$REPO_ROOT/scripts/00_setup_common.sh"
if [[ -f "$COMMON_SETUP" ]]; then
  source "$COMMON_SETUP"
else
  echo "missing $COMMON_SETUP" >&2; exit 1
fi
uv run python -m vllm.entrypoints.openai.api_server --model "$MODEL_DIR" \\
  --tensor-parallel-size "$TENSOR_PARALLEL_SIZE" &
"""


def test_a_script_sources_the_files_of_its_repository_by_its_own_path(tmp_path: Path) -> None:
    # round 23's abdshomad/scripts/07_launch_vllm_ray.sh: its folder from ${BASH_SOURCE[0]} (dirname(1), cd && pwd),
    # `source` of a file of the repository (run in the same shell, ${BASH_SOURCE[0]} the sourced file), `-f` on it
    (tmp_path / ".git").mkdir()
    files = {"scripts/00_setup_common.sh": COMMON_SETUP, "scripts/07_launch.sh": LAUNCH_RAY}
    for name, text in {**files, "env.sh": "export MODEL_NAME=TinyLlama\nexport TENSOR_PARALLEL_SIZE=2\n"}.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    (found,) = load_inputs((str(tmp_path / "scripts" / "07_launch.sh"),)).found
    assert found.argv == (
        "vllm", "serve", "--model", "/mnt/shared/TinyLlama", "--tensor-parallel-size", "2"
    )  # fmt: skip
    assert found.unresolved == ()
    # without the env file its defaults apply; a file outside the repository (above .git) is never read
    (tmp_path / "env.sh").unlink()
    (found,) = load_inputs((str(tmp_path / "scripts" / "07_launch.sh"),)).found
    assert found.argv[3:] == ("/mnt/shared/$MODEL_NAME", "--tensor-parallel-size", "1")
    # a path of the repository that reaches the command is the deployment host's checkout: not known here
    (tmp_path / "scripts" / "07_launch.sh").write_text(LAUNCH_RAY.replace('"$MODEL_DIR"', '"$REPO_ROOT/models/q"'))
    (found,) = load_inputs((str(tmp_path / "scripts" / "07_launch.sh"),)).found
    assert found.argv[3] == "<repository>/models/q" and found.unresolved == ("<repository>",)
    (tmp_path / "scripts" / "07_launch.sh").write_text(LAUNCH_RAY.replace("$REPO_ROOT/scripts", "$REPO_ROOT/.."))
    (tmp_path.parent / "00_setup_common.sh").write_text("MODEL_DIR=/etc/secret\nTENSOR_PARALLEL_SIZE=8\n")
    (found,) = load_inputs((str(tmp_path / "scripts" / "07_launch.sh"),)).found
    assert "/etc/secret" not in found.argv and "$MODEL_DIR" in found.unresolved


def test_sourced_arguments_and_case_modification() -> None:
    # round 23's kyr0-omni start.sh: `source config.sh "${1:-}"` (the file's $1 while it runs), `${X,,}` lower case
    config = 'if [[ -n "${1:-}" ]]; then V="$1"; else V=INSTRUCT; fi\ncase "${V,,}" in instruct) S=Instruct;; esac\n'
    script = 'source "$(dirname "$0")/config.sh" "${1:-}"\nvllm serve "Qwen/Qwen3-Omni-30B-A3B-$S" -tp 1\necho "$1"\n'
    origin = shell.Origin("/r/start.sh", "/r", {"/r/config.sh": config}.get)
    (cmd,) = [c for c in shell.run_script(script, origin=origin) if c.words[0] == "vllm"]
    assert cmd.words == ("vllm", "serve", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "-tp", "1") and cmd.unresolved == ()
    assert shell.run_script('echo "${X^^}" "${X,}" "${Y,,}"', {"X": "Ab"})[0].words == ("echo", "AB", "ab", "${Y,,}")
    # without an origin nothing is sourced and the script's own path stays unknown
    (cmd,) = [c for c in shell.run_script(script) if c.words[0] == "vllm"]
    assert "$S" in cmd.words[2]


def test_a_script_or_recipe_runs_another_script_of_its_repository(tmp_path: Path) -> None:
    # round 25's fpaupier/Makefile: its `vllm:` target runs ./scripts/start_vllm.sh, a `docker run` with no `#!`
    # line (the shell runs such a file itself); `bash FILE ARG` gives the file its $1; a `#!` naming another
    # interpreter is not a shell script, and a file outside the repository is not read
    (tmp_path / ".git").mkdir()
    start = "docker run --gpus all vllm/vllm-openai:latest \\\n  --max-model-len 12000 --model Qwen/Qwen3-4B-Instruct-2507\n"
    files = {
        "Makefile": ".PHONY: vllm\nvllm:\n\t./scripts/start_vllm.sh\n",
        "scripts/start_vllm.sh": start,
        "scripts/serve.sh": '#!/usr/bin/env bash\nvllm serve "$1" --max-model-len "${2:-4096}"\n',
        "run.sh": "#!/bin/bash\nbash -e scripts/serve.sh Qwen/Qwen3-8B\n",
        "py.sh": "#!/bin/bash\n./tool.py\n",
        "tool.py": "#!/usr/bin/env python3\n# vllm serve other\n",
    }
    write_files(tmp_path, files)
    (made,) = load_inputs((str(tmp_path / "Makefile"),)).found
    assert made.resource == "make vllm" and made.argv[-4:] == (
        "--max-model-len", "12000", "--model", "Qwen/Qwen3-4B-Instruct-2507"
    )  # fmt: skip
    (ran,) = load_inputs((str(tmp_path / "run.sh"),)).found
    assert ran.argv == ("vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "4096")
    assert load_inputs((str(tmp_path / "py.sh"),)).found == []


def test_a_script_running_itself_many_times_is_read_a_bounded_number_of_times(tmp_path: Path) -> None:
    # hostile input: 30 lines of `./a.sh` in a.sh, within the nesting depth (4), would be read 30^4 = 810,000 times
    # (a run that never ends); the whole reading follows at most 64 files, so each server is found a bounded number
    # of times and the read ends
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.sh").write_text("#!/bin/bash\n" + "./a.sh\n" * 30 + "vllm serve Qwen/Qwen2.5-7B-Instruct\n")
    found = load_inputs((str(tmp_path / "a.sh"),)).found
    assert 1 < len(found) <= 65
    assert {f.argv for f in found} == {("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct")}


def test_the_files_budget_is_one_for_all_recipe_lines_of_a_makefile(tmp_path: Path) -> None:
    # hostile input (benchmarks/fuzz.py's kind `reading`): 300 rules each running a script that runs itself 20 times
    # read 64 files per recipe line, 19,200 servers in 26 s; the readings of one file (a Makefile's recipe lines
    # together) now share the 64 files, as one script's runs and sources do
    (tmp_path / ".git").mkdir()
    (tmp_path / "run.sh").write_text("#!/bin/bash\n" + "./run.sh\n" * 20 + "vllm serve Qwen/Qwen3-8B\n")
    (tmp_path / "Makefile").write_text("".join(f"serve{i}:\n\t./run.sh\n" for i in range(300)))
    found = load_inputs((str(tmp_path / "Makefile"),)).found
    assert 1 < len(found) <= 65
    assert {f.argv for f in found} == {("vllm", "serve", "Qwen/Qwen3-8B")}
    (tmp_path / "Makefile").write_text("a:\n\t./run2.sh\nb:\n\t./run2.sh\n")  # two ordinary rules: both read
    (tmp_path / "run2.sh").write_text("#!/bin/bash\nvllm serve Qwen/Qwen3-8B\n")
    assert [f.resource for f in load_inputs((str(tmp_path / "Makefile"),)).found] == ["make a", "make b"]


@pytest.mark.parametrize(
    ("runner", "text"),
    [
        ("start.sh", "#!/bin/bash\n./serve.sh Qwen/Qwen2.5-7B-Instruct\n"),
        ("Makefile", "serve:\n\t./serve.sh Qwen/Qwen2.5-7B-Instruct\n"),
        # a file sourced with arguments (bash(1): they are its positional parameters while it runs) is run too
        ("start.sh", "#!/bin/bash\nsource ./serve.sh Qwen/Qwen2.5-7B-Instruct\n"),
        ("start.sh", "#!/bin/bash\nset -- Qwen/Qwen2.5-7B-Instruct\n. serve.sh\n"),
    ],
)
def test_a_folder_reads_a_script_another_file_runs_once_with_its_arguments(
    tmp_path: Path, runner: str, text: str
) -> None:
    # on its own serve.sh's $1 is unset (not evaluated); as start.sh or make runs it, $1 is the model
    (tmp_path / "serve.sh").write_text('#!/bin/bash\nvllm serve "$1" --tensor-parallel-size 2\n')
    (tmp_path / runner).write_text(text)
    result = invoke(["check", str(tmp_path), "--gpu", "h100", "--format", "json"])
    (row,) = json.loads(result.stdout)
    assert (row["file"], row["status"], row["read"]["model"]) == (
        f"{tmp_path}/{runner}",
        "pass",
        "Qwen/Qwen2.5-7B-Instruct",
    )
    assert f"{tmp_path}/serve.sh: read as run by {tmp_path}/{runner}" in result.stderr


def test_two_scripts_that_run_each_other_keep_both_readings(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("#!/bin/bash\nvllm serve Qwen/Qwen2.5-7B-Instruct\n./b.sh\n")
    (tmp_path / "b.sh").write_text("#!/bin/bash\nvllm serve Qwen/Qwen2.5-0.5B-Instruct\n./a.sh\n")
    result = invoke(["check", str(tmp_path), "--gpu", "h100", "--format", "json"])
    assert {r["file"] for r in json.loads(result.stdout)} == {f"{tmp_path}/a.sh", f"{tmp_path}/b.sh"}
    assert "read as run by" not in result.stderr


@pytest.mark.parametrize("run", ["./{}", "source {}"])
def test_a_ring_of_scripts_longer_than_the_nesting_depth_keeps_every_reading(tmp_path: Path, run: str) -> None:
    # hostile input (benchmarks/fuzz.py's kind `reading`): ten scripts each running (or sourcing) the next in a ring;
    # each was dropped as "read as run by" the one before it (the ring is longer than the 4 levels followed, so it
    # was not seen as one), and the folder had no server at all (exit 2). A ring no other file enters keeps its
    # readings; a script that enters it reads it as run by it
    (tmp_path / ".git").mkdir()
    for i in range(10):
        (tmp_path / f"s{i}.sh").write_text(
            f"#!/bin/bash\n{run.format(f's{(i + 1) % 10}.sh')}\nvllm serve Qwen/Qwen3-8B\n"
        )
    assert {f.source for f in load_inputs((str(tmp_path),)).found} == {f"{tmp_path}/s{i}.sh" for i in range(10)}
    (tmp_path / "start.sh").write_text(f"#!/bin/bash\n{run.format('s0.sh')}\n")
    loaded = load_inputs((str(tmp_path),))
    assert f"{tmp_path}/s0.sh: read as run by {tmp_path}/start.sh" in loaded.notes
    assert f"{tmp_path}/start.sh" in {f.source for f in loaded.found}


# ZengboJamesWang/dgx-spark-vllm-qwen3.6-35b-a3b-dflash scripts/start.sh and startup.sh (2026), shortened
MOUNTED_START = """#!/bin/bash
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STARTUP_SCRIPT="$SCRIPT_DIR/startup.sh"
docker run -d --name qwen --gpus all --ipc=host \\
  -v ~/.cache/huggingface:/root/.cache/huggingface \\
  -v "$STARTUP_SCRIPT:/startup.sh" \\
  -e VLLM_LEN=65536 \\
  --entrypoint bash \\
  "vllm/vllm-openai:v0.19.0" \\
  /startup.sh
"""
MOUNTED_STARTUP = """#!/bin/bash
set -e
exec vllm serve /models/qwen3.6-35b-a3b \\
  --tensor-parallel-size 1 --max-model-len "${VLLM_LEN:-262144}" --gpu-memory-utilization 0.45
"""


def test_a_docker_run_of_a_script_it_bind_mounts_runs_that_script(tmp_path: Path) -> None:
    """`--entrypoint bash IMAGE /startup.sh` with `-v "$SCRIPT_DIR/startup.sh:/startup.sh"`: the container runs the
    repository's startup.sh (bash reads its first operand as the script), with the container's environment (-e);
    a script the mount does not bring (one inside the image) is not guessed."""
    write_files(
        tmp_path, {".git/HEAD": "x\n", "scripts/start.sh": MOUNTED_START, "scripts/startup.sh": MOUNTED_STARTUP}
    )
    (found,) = load_inputs((str(tmp_path / "scripts" / "start.sh"),)).found
    assert found.argv == (
        "vllm", "serve", "/models/qwen3.6-35b-a3b",
        "--tensor-parallel-size", "1", "--max-model-len", "65536", "--gpu-memory-utilization", "0.45",
    )  # fmt: skip
    assert found.image_tag == "v0.19.0" and found.unresolved == ()
    unmounted = MOUNTED_START.replace('-v "$STARTUP_SCRIPT:/startup.sh"', "-v /data:/data")
    (tmp_path / "scripts" / "start.sh").write_text(unmounted)
    assert load_inputs((str(tmp_path / "scripts" / "start.sh"),)).found == []


# dataandai/aibrix-tenant-gateway scripts/aws-danger/lib.sh and 04-install-aibrix-platform.sh (2026), shortened: a
# sourced function renders the repository's .yaml.tpl with Python's string.Template over the environment
RENDER_LIB = """#!/usr/bin/env bash
render_template() {
  local template="$1"
  local output="$2"
  python - "$template" "$output" <<'PY'
from pathlib import Path
from string import Template
import os
import sys
src = Path(sys.argv[1]).read_text(encoding="utf-8")
Path(sys.argv[2]).write_text(Template(src).substitute(os.environ), encoding="utf-8")
PY
}
"""
RENDER_INSTALL = """#!/usr/bin/env bash
ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT_DIR/scripts/lib.sh"
: "${MODEL_ID:=deepseek-ai/DeepSeek-R1-Distill-Llama-8B}"
: "${MAX_MODEL_LEN:=12288}"
export MODEL_ID MAX_MODEL_LEN
RENDERED="$ROOT_DIR/.rendered.yaml"
render_template "$ROOT_DIR/k8s/model.yaml.tpl" "$RENDERED"
kubectl apply -f "$RENDERED"
"""
RENDER_TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: model}
spec:
  template:
    spec:
      containers:
        - name: vllm-openai
          image: vllm/vllm-openai:v0.11.0
          command: [vllm, serve, --model, "${MODEL_ID}", --max-model-len, "${MAX_MODEL_LEN}"]
          resources: {limits: {nvidia.com/gpu: "1"}}
"""


@pytest.mark.parametrize(
    "install",
    [
        RENDER_INSTALL,
        # GNU gettext's envsubst, the same rendering
        RENDER_INSTALL.replace('render_template "$ROOT_DIR/k8s/model.yaml.tpl" "$RENDERED"',
                               'envsubst < "$ROOT_DIR/k8s/model.yaml.tpl" > "$RENDERED"'),
    ],
)  # fmt: skip
def test_a_manifest_a_script_renders_from_a_template_and_applies_is_read(tmp_path: Path, install: str) -> None:
    """A function the script sources is run where it is called, with its arguments as $1...; the file it renders
    from the repository's template with the script's variables is what `kubectl apply -f` reads."""
    files = {
        ".git/HEAD": "x\n",
        "scripts/lib.sh": RENDER_LIB,
        "scripts/install.sh": install,
        "k8s/model.yaml.tpl": RENDER_TEMPLATE,
    }
    write_files(tmp_path, files)
    (found,) = load_inputs((str(tmp_path / "scripts" / "install.sh"),)).found
    assert found.argv[2:] == ("--model", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "--max-model-len", "12288")
    assert found.gpus_per_pod == 1 and found.unresolved == ()


def test_a_function_runs_where_it_is_called_and_an_uncalled_one_still_shows_its_server() -> None:
    script = (
        'serve() {\n  vllm serve "$1" --tensor-parallel-size "${2:-1}"\n}\n'
        "serve Qwen/Qwen3-8B 2\n"
        "other() {\n  vllm serve Qwen/Qwen3-0.6B\n}\n"
    )
    commands = [c.words for c in shell.run_script(script) if c.words[:1] == ("vllm",)]
    assert commands == [
        ("vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"),
        ("vllm", "serve", "Qwen/Qwen3-0.6B"),
    ]
    # a function calling itself is run a bounded number of times
    looping = "f() {\n  f\n  f\n}\nf\nvllm serve Qwen/Qwen3-8B\n"
    assert [c.words for c in shell.run_script(looping) if c.words[:1] == ("vllm",)] == [
        ("vllm", "serve", "Qwen/Qwen3-8B")
    ]


def test_a_function_reached_along_two_undecided_branches_starts_one_server() -> None:
    # WangTaeBong/mai-vllm-serving docker_run.sh's shape: `case "$1"` arms `start)` and `restart)` both call
    # start_container (restart through restart_container); one run takes one arm, so one server
    script = (
        "start_container() {\n  vllm serve Qwen/Qwen3-8B\n}\n"
        "restart_container() {\n  start_container\n}\n"
        'case "$1" in\n  start) start_container ;;\n  restart) restart_container ;;\nesac\n'
    )
    assert [c.words for c in shell.run_script(script) if c.words[:1] == ("vllm",)] == [
        ("vllm", "serve", "Qwen/Qwen3-8B")
    ]


def test_a_subshell_group_keeps_what_it_sets_to_itself() -> None:
    # bash(1), Compound Commands: `( list )` runs in a subshell; its assignments, exports and `cd` end with it
    origin = shell.Origin("/repo/run.sh", "/repo", lambda _: None)
    cmds = shell.run_script(
        "( cd /srv/a && X=1 && export Y=2 && first )\n(\n  cd /srv/b\n  second\n) > log 2>&1 &\nthird $X\n",
        origin=origin,
    )
    assert [(c.words, c.cwd) for c in cmds] == [
        (("cd", "/srv/a"), "/srv/a"), (("first",), "/srv/a"), (("cd", "/srv/b"), "/srv/b"), (("second",), "/srv/b"),
        (("third", "$X"), None),
    ]  # fmt: skip
    assert dict(cmds[1].env) == {"Y": "2"} and dict(cmds[-1].env) == {}
    # a case pattern's `)` and `$((...))` are not groups
    cmds = shell.run_script('case "$1" in\n  start)\n    vllm serve m ;;\nesac\necho $((1 + 2))\n', args=["s", "start"])
    assert [c.words for c in cmds] == [("vllm", "serve", "m"), ("echo", "3")]
