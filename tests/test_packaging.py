"""The wheel carries profiles/ and templates/: build it, install it in a throwaway venv, run a command."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from .conftest import ROOT


@pytest.mark.slow
def test_wheel_installs_and_finds_its_data(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
        check=True,
        timeout=300,
    )
    wheel = next(dist.glob("vllm_plan-*.whl"))
    env_dir = tmp_path / "venv"
    # The throwaway venv sees the test environment's installed dependencies through a .pth file (no network);
    # the package itself comes only from the wheel.
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]
    Path(site, "test_deps.pth").write_text(deps + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, timeout=300)
    out = subprocess.run(
        [str(env_dir / "bin" / "vllm-plan"), "gpus", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
        timeout=60,
    )
    assert len(json.loads(out.stdout)) >= 25
    where = subprocess.run(
        [str(py), "-c", "import recommender.resources as r; print(r.profiles_dir())"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert "_data" in where and str(ROOT) not in where
    # The editable install in the test environment must not shadow the wheel.
    assert where.startswith(site)
