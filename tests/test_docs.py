"""The README documents every command, its quick start is what CI runs, and its sample output is current."""

from __future__ import annotations

import re
import shlex

import pytest

from recommender.cli import cli

from .conftest import ROOT, invoke

README = (ROOT / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_command_is_documented_and_has_help(name: str) -> None:
    assert f"vllm-plan {name}" in README
    assert cli.commands[name].help
    invoke([name, "--help"])


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```bash\n(.+?)\n```", README, re.S)
    test_command = next(c for c in commands if "pytest" in c)
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command.strip() in ci


def test_readme_sample_output_is_current() -> None:
    main_command = next(c for c in re.findall(r"```bash\n(.+?)\n```", README, re.S) if "recommend" in c)
    argv = shlex.split(main_command.split(".venv/bin/vllm-plan ", 1)[1])
    sample = README.split("What the first command prints (abridged):\n\n```text\n", 1)[1].split("\n```", 1)[0]
    out = invoke(argv).stdout.splitlines()
    for line in sample.splitlines():  # every line shown is printed as shown; "..." marks what was left out
        assert line.strip() == "..." or line in out, line
