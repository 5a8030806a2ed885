"""The README followed literally by a new user (task H51): what the quick start plans, `render` writes and `check`
reads back must agree, whatever the plan left unset."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import recommender.errors
from recommender.cli import EXIT_CODES_HELP, INTERNAL_ERROR, INTERRUPTED, PIPE_CLOSED, OneLineError, catalog_cmds
from recommender.errors import FetchError, InfeasibleError, InputError, PlanError

from .conftest import ROOT, invoke


def test_artifacts_of_a_plan_without_context_pass_check(tmp_path: Path) -> None:
    """The quick start's plan has no --context: its scripts and units carry an empty `target-context` comment,
    which must not swallow the next line's annotation."""
    plan = tmp_path / "plan.yaml"
    invoke(
        ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "60", "-o", str(plan)]
    )
    deploy = tmp_path / "deploy"
    invoke(["render", str(plan), "--emit", "all", "-o", str(deploy)])
    r = invoke(["check", str(deploy)])
    assert r.stdout.count("PASS") == 5, r.stdout


def _codes(table: str) -> set[int]:
    return {int(c) for c in re.findall(r"^\|?\s*(\d+)\s", table, re.M)}


def test_the_exit_codes_the_readme_documents_are_the_ones_the_code_returns() -> None:
    """One table in the README, the same in `vllm-plan --help`, and every code the code can exit with is in it."""
    readme = (ROOT / "README.md").read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = _codes(readme)
    assert documented == {0, 1, 2, 3, 4, 70, 130, 141}, documented
    assert _codes(EXIT_CODES_HELP.split("Exit codes:", 1)[1]) == documented
    errors = [c for c in vars(recommender.errors).values() if isinstance(c, type) and issubclass(c, PlanError)]
    raised = {c.exit_code for c in errors} | {OneLineError.exit_code, INTERNAL_ERROR, INTERRUPTED, PIPE_CLOSED}
    assert raised <= documented, raised - documented
    assert (InputError.exit_code, InfeasibleError.exit_code, FetchError.exit_code) == (2, 3, 4)
    assert "70   internal error" in EXIT_CODES_HELP and "| 70 | internal error" in readme


def test_an_internal_error_is_one_line_exit_70(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.delenv("VLLM_PLAN_DEBUG", raising=False)
    monkeypatch.setattr(catalog_cmds, "load_gpus", broken)
    err = invoke(["gpus"], 70).stderr
    assert err.startswith("Error: internal error (ZeroDivisionError: division by zero)") and err.count("\n") == 1
