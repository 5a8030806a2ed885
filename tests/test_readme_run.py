"""The README followed literally by a new user (task H51): what the quick start plans, `render` writes and `check`
reads back must agree, whatever the plan left unset."""

from __future__ import annotations

from pathlib import Path

from .conftest import invoke


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
