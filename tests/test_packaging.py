"""The wheel carries profiles/ and templates/: build it, install it in a throwaway venv, run a command."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version
    return pins


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def test_runtime_dependencies_are_ranges_and_ci_pins_satisfy_them() -> None:
    pins = _pins()
    for spec in _project()["dependencies"]:
        req = Requirement(spec)
        assert not any(s.operator == "==" for s in req.specifier), f"{spec}: a range, not a pin (installed beside vLLM)"
        assert any(s.operator == "<" for s in req.specifier), f"{spec}: an upper bound at the next untested major"
        assert pins[canonicalize_name(req.name)] in req.specifier, f"constraints.txt pins {req.name} outside {spec}"


def test_dependencies_accept_what_vllm_0_33_requires() -> None:
    """Every package vLLM 0.33 and vllm-plan both require has a version both accept: the one CI tests."""
    vllm = {}
    for line in (ROOT / "tests" / "data" / "vllm-0.33.0-requires.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                vllm[canonicalize_name(req.name)] = req
    pins = _pins()
    shared = 0
    for spec in _project()["dependencies"]:
        ours = Requirement(spec)
        theirs = vllm.get(canonicalize_name(ours.name))
        if theirs is not None:
            shared += 1
            pin = pins[canonicalize_name(ours.name)]
            assert pin in theirs.specifier and pin in ours.specifier, (ours, theirs, pin)
    assert shared >= 2  # huggingface_hub and pyyaml at least


def test_kubernetes_client_is_an_extra() -> None:
    project = _project()
    assert not any(Requirement(d).name == "kubernetes" for d in project["dependencies"])
    assert any(Requirement(d).name == "kubernetes" for d in project["optional-dependencies"]["cluster"])


def test_png_rasteriser_is_an_extra() -> None:
    project = _project()
    assert not any(Requirement(d).name == "resvg-py" for d in project["dependencies"])
    (plot,) = (Requirement(d) for d in project["optional-dependencies"]["plot"])
    assert plot.name == "resvg-py" and _pins()["resvg-py"] in plot.specifier
