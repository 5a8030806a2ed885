"""Servers in the branches of one undecided `if` (round 30): bash runs one branch of an `if` / one arm of a `case`
(bash(1), Compound Commands), so the same command line found in two branches of a condition on the machine (`command
-v vllm`) is one server; different lines stay two, and so do the branches of a condition on the script's arguments
(its modes, each read as a server: tests/data/deployments3 pysheeet/run.sh's `single` and `mp` give one line)."""

from __future__ import annotations

from recommender.check.load import read_text

# yunseoLee0343/qwen-vllm-runtime scripts/run_vllm.sh (round 30), shortened: `vllm serve` if the CLI is on PATH,
# else the api_server module, with the same flags
EITHER = """#!/usr/bin/env bash
set -euo pipefail
MODEL_PATH="${MODEL_PATH:-/models/qwen3.6}"
MAX_MODEL_LEN="${MAX_MODEL_LEN:-8192}"
# Prefer `vllm serve` if available (vLLM >= 0.4); fall back to module entrypoint.
if command -v vllm &>/dev/null; then
  exec vllm serve "${MODEL_PATH}" \\
    --max-model-len "${MAX_MODEL_LEN}"
else
  exec python -m vllm.entrypoints.openai.api_server \\
    --model "${MODEL_PATH}" \\
    --max-model-len "${MAX_MODEL_LEN}"
fi
"""


def test_one_command_line_in_both_branches_is_one_server() -> None:
    (found,) = read_text(EITHER, "run_vllm.sh")
    assert found.argv == ("vllm", "serve", "/models/qwen3.6", "--max-model-len", "8192")


def test_different_command_lines_or_sequential_ifs_stay_servers() -> None:
    modes = EITHER.replace('--max-model-len "${MAX_MODEL_LEN}"\nfi', "--max-model-len 4096\nfi")
    assert len(read_text(modes, "run_vllm.sh")) == 2  # each branch's own server: the script's two modes
    twice = "#!/bin/bash\nif command -v a; then\n  vllm serve m &\nfi\nif command -v b; then\n  vllm serve m &\nfi\n"
    assert len(read_text(twice, "run.sh")) == 2  # two `if`s, each may start one: not alternatives
    arms = '#!/bin/bash\ncase "$(uname -m)" in\n  x86_64) vllm serve m ;;\n  *) vllm serve m ;;\nesac\n'
    assert len(read_text(arms, "run.sh")) == 1
    modes = arms.replace('"$(uname -m)"', '"$1"')
    assert len(read_text(modes, "run.sh")) == 2  # the script's modes: each a server, as before
