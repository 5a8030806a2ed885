"""The CLI audit's leftovers (issues 10 and 11), each through the command a new user ran: exit code and output."""

from __future__ import annotations

from pathlib import Path

import yaml

from .conftest import invoke

SMALL = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "8"]


def test_recommend_o_file_keeps_a_changed_file_without_force_as_render_does(tmp_path: Path) -> None:
    """`recommend -o plan.yaml` replaced whatever the file held; now, like `render`, a file that differs from the
    new plan is refused (one line, exit 2, the file and any --plot untouched), the same plan is written again
    silently, and --force replaces it."""
    plan = tmp_path / "plan.yaml"
    plan.write_text("kept: true\n")
    refused = invoke([*SMALL, "-o", str(plan), "--plot", str(tmp_path / "p.svg")], exit_code=2)
    assert refused.stderr == f"Error: {plan} exists and differs from the new output; pass --force to overwrite it\n"
    assert plan.read_text() == "kept: true\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.yaml"]  # no plot, no temporary file left
    invoke([*SMALL, "-o", str(plan), "--force"])
    written = plan.read_text()
    assert yaml.safe_load(written)["apiVersion"] == "vllm-plan/v1"
    invoke([*SMALL, "-o", str(plan)])  # the same plan again: nothing to refuse
    assert plan.read_text() == written
    invoke([*SMALL[:-1], "9", "-o", str(plan)], exit_code=2)  # another plan: refused
    assert plan.read_text() == written
