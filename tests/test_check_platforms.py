"""Servers on accelerators the memory model does not evaluate: Intel's XPU image and vLLM-Metal's Apple-silicon venv.
The cases are hand-written in the shapes of the public files of the held-out rounds
(benchmarks/data/check-heldout/roundN, the file named in the round's SOURCES): rounds 6-7 and 17."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.check.inputs import load_inputs
from recommender.check.load import read_text

from .conftest import invoke


def test_intels_vllm_image_is_an_xpu_deployment() -> None:
    compose = (
        "services:\n  vllm:\n    image: intel/vllm:0.21.0-ubuntu24.04\n    command: vllm serve openai/gpt-oss-20b\n"
    )
    (found,) = read_text(compose, "compose.yml", ".yml")
    assert found.not_evaluable is not None and "XPU" in found.not_evaluable


METAL = """#!/usr/bin/env bash
set -euo pipefail
VENV="${VLLM_METAL_VENV:-$HOME/.venv-vllm-metal}"
source "${VENV}/bin/activate"
exec vllm serve mlx-community/Qwen2.5-0.5B-Instruct-4bit
"""


def test_a_script_in_vllm_metals_venv_runs_on_apple_silicon(tmp_path: Path) -> None:
    """vllm-project/vllm-metal's install.sh makes `~/.venv-vllm-metal` and says `source $venv/bin/activate`."""
    path = tmp_path / "serve-local.sh"
    for script in (
        METAL,
        METAL.replace('source "${VENV}/bin/activate"', 'export PATH="$HOME/.venv-vllm-metal/bin:$PATH"'),
        "#!/bin/sh\n~/.venv-vllm-metal/bin/vllm serve mlx-community/Qwen2.5-0.5B-Instruct-4bit\n",
    ):
        path.write_text(script)
        (found,) = load_inputs((str(path),)).found
        assert found.not_evaluable and "vLLM-Metal" in found.not_evaluable
    cuda = METAL.replace("vllm-metal", "vllm-cuda").replace(
        "mlx-community/Qwen2.5-0.5B-Instruct-4bit", "Qwen/Qwen2.5-7B-Instruct"
    )
    path.write_text(cuda)  # another venv: an ordinary (NVIDIA) vLLM
    (found,) = load_inputs((str(path),)).found
    assert found.not_evaluable is None
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "l4", "--format", "json"], exit_code=0).stdout)
    assert r["status"] == "pass"
    path.write_text(METAL)
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "l4", "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated"
