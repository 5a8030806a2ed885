"""Exported and plain shell variables (check/shell_environment.py, bash(1) ENVIRONMENT): a plain `VAR=x` is the
script's own, a child process (vllm serve and its VLLM_* variables, docker compose's interpolation, a script run
with `bash other.sh`) gets only what is exported, set for the command itself, or assigned under `set -a`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.check import shell
from recommender.check.inputs import load_inputs
from recommender.check.shell_environment import allexport, export_marks
from recommender.cli import cli

from .test_check_compose import RUN_BY_SCRIPT


def _env(script: str) -> dict[str, str]:
    """The environment of the script's last command."""
    return dict(shell.run_script(script + "\nprogram\n")[-1].env)


@pytest.mark.parametrize(
    ("script", "env"),
    [
        ("A=1", {}),  # a shell variable only
        ("export A=1", {"A": "1"}),
        ("A=1\nexport A", {"A": "1"}),
        ("export A\nA=2", {"A": "2"}),  # assigning to an exported variable keeps it exported
        ("declare -x A=1\nlocal B=2\ntypeset -rx C=3\nreadonly D=4", {"A": "1", "C": "3"}),
        ("export A=1 B=2\nexport -n A", {"B": "2"}),
        ("export A=1\ndeclare +x A", {}),
        ("set -a\nA=1\nset +a\nB=2", {"A": "1"}),  # allexport on for A only
        ("set -o allexport\nA=1\nset +o allexport\nB=2", {"A": "1"}),
        ("set -euo pipefail\nA=1", {}),
        ("PATH=/opt/venv/bin:/usr/bin", {"PATH": "/opt/venv/bin:/usr/bin"}),  # inherited from the environment
        ("CUDA_VISIBLE_DEVICES=0,1", {"CUDA_VISIBLE_DEVICES": "0,1"}),  # exported by the GPU job / container
    ],
)
def test_only_exported_variables_reach_a_command(script: str, env: dict[str, str]) -> None:
    assert _env(script) == env


def test_a_command_s_own_assignments_reach_it_and_no_other() -> None:
    first, second = shell.run_script("A=1 B=2 program\nC=3 env program\nother\n")[-2:]
    assert (dict(first.env), dict(second.env)) == ({"C": "3"}, {})
    (only,) = shell.run_script("A=1 program\n")
    assert dict(only.env) == {"A": "1"}


def test_the_script_s_own_expansions_see_every_variable() -> None:
    sub, cmd = shell.run_script('MODEL=Qwen/Qwen3-8B\nvllm serve "$MODEL" --port "$(echo $MODEL)"\n')
    assert sub.words == ("echo", "Qwen/Qwen3-8B")  # a $(...) subshell has every variable
    assert cmd.words[:3] == ("vllm", "serve", "Qwen/Qwen3-8B") and dict(cmd.env) == {}
    assert cmd.variables is not None and cmd.variables["MODEL"] == "Qwen/Qwen3-8B"


def test_the_environment_a_script_starts_with_is_exported() -> None:
    (cmd,) = shell.run_script("vllm serve m\n", env={"HF_HOME": "/cache"})
    assert dict(cmd.env) == {"HF_HOME": "/cache"}


def test_export_marks_and_allexport_read_the_builtins_options() -> None:
    assert export_marks(["export", "A=1", "B"]) == ({"A", "B"}, set())
    assert export_marks(["export", "-f", "fn"]) == (set(), set())
    assert export_marks(["local", "-x", "A=1"]) == ({"A"}, set())
    assert export_marks(["readonly", "A=1"]) == (set(), set())
    assert [allexport(a) for a in (["set", "-a"], ["set", "-ea"], ["set", "+a"], ["set", "-e"])] == [
        True, True, False, None
    ]  # fmt: skip
    assert allexport(["set", "--", "-a"]) is None  # a positional parameter, not an option


@pytest.mark.parametrize(("line", "allowed"), [("", False), ("export ", True), ("set -a; ", True)])
def test_vllm_reads_only_exported_vllm_variables(tmp_path: Path, line: str, allowed: bool) -> None:
    # VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 on a line of its own is a shell variable: vllm serve never sees it
    script = f"#!/bin/bash\n{line}VLLM_ALLOW_LONG_MAX_MODEL_LEN=1\nvllm serve Qwen/Qwen2.5-7B-Instruct\n"
    (tmp_path / "serve.sh").write_text(script)
    (found,) = load_inputs((str(tmp_path / "serve.sh"),)).found
    assert ("VLLM_ALLOW_LONG_MAX_MODEL_LEN" in found.env) is allowed


@pytest.mark.parametrize(("assignment", "model"), [("MODEL=", None), ("export MODEL=", "Qwen/Qwen3-8B")])
def test_a_script_run_by_a_script_gets_its_exported_variables(
    tmp_path: Path, assignment: str, model: str | None
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "start.sh").write_text(f"#!/bin/bash\n{assignment}Qwen/Qwen3-8B\nbash serve.sh\n")
    (tmp_path / "serve.sh").write_text('#!/bin/bash\nvllm serve "$MODEL" --max-model-len 4096\n')
    (found,) = load_inputs((str(tmp_path / "start.sh"),)).found
    if model is None:
        assert "$MODEL" in found.unresolved
    else:
        assert found.argv[2] == model and not found.unresolved


@pytest.mark.parametrize(("line", "tp", "code"), [("TP=4", 1, 1), ("export TP=4", 4, 0), ("TP=4 docker", 4, 0)])
def test_docker_compose_interpolates_only_the_exported_variables(tmp_path: Path, line: str, tp: int, code: int) -> None:
    # a plain TP=4 is not in docker compose's environment: the file's default (1) applies, and 32B at 32k does not
    # fit one H100; exported, or set for the command itself (`TP=4 docker compose up`), it does
    (tmp_path / "docker-compose.yml").write_text(RUN_BY_SCRIPT)
    up = "compose up -d vllm" if line.endswith("docker") else "\ndocker compose up -d vllm"
    (tmp_path / "run.sh").write_text(f"#!/bin/bash\n{line} {up}\n")
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "run.sh"), "--gpu", "h100", "--format", "json"])
    assert result.exit_code == code, result.output
    (row,) = json.loads(result.stdout)
    assert row["read"]["tensor_parallel_size"] == tp
