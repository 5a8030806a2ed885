"""Static checks the project promises: ruff and strict mypy over the package (both are test extras)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT


@pytest.mark.slow
def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run(
        [ruff, "check", "recommender", "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_ruff_format_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run(
        [ruff, "format", "--check", "recommender", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_strict_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_does_not_import_io_or_presentation() -> None:
    code = (
        "import sys; import recommender.memory.budget, recommender.model.parse, recommender.hardware, recommender.gpu_names; "
        "bad = [m for m in ('click', 'jinja2', 'huggingface_hub', 'kubernetes', 'yaml') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"the pure core imported {out}"
