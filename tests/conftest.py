"""Shared fixtures: paths to the read-only shared/ material, a CliRunner helper."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from recommender.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
HF_CONFIGS = SHARED / "reference" / "hf-configs"
CALIBRATION = SHARED / "calibration" / "vllm_startup_logs.jsonl"


def invoke(args: list[str], exit_code: int = 0, input: str | None = None) -> Result:
    """Run the CLI in-process and assert its exit code, showing output on failure."""
    result = CliRunner().invoke(cli, args, input=input)
    assert result.exit_code == exit_code, (
        f"exit {result.exit_code} != {exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}\n{result.exception!r}"
    )
    return result


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not beside this checkout")
    return SHARED
