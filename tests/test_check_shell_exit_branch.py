"""A launch script picking the vLLM program in `if/elif` (round 29): a branch that ends the script (`else echo ...;
exit 1`) leaves nothing after `fi` (bash(1), SHELL BUILTIN COMMANDS, exit), and an array every other branch sets to the
same program, bare or after a launcher (`uv run vllm`, a venv's bin/vllm, `vllm`), runs that program."""

from __future__ import annotations

from recommender.check.load import read_text

# RAGstar-sogang/AI-server vllm/start.sh (round 29), shortened: the command is headed by an array chosen at run time
PICKED = """#!/usr/bin/env bash
set -euo pipefail
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MAX_MODEL_LEN="${MAX_MODEL_LEN:-16384}"
VLLM_ENV_DIR="${VLLM_ENV_DIR:-${SCRIPT_DIR}/.venv-vllm}"
if [[ -n "${VLLM_BIN:-}" ]]; then
  VLLM_CMD=("${VLLM_BIN}")
elif command -v uv >/dev/null 2>&1; then
  export UV_PROJECT_ENVIRONMENT="${UV_PROJECT_ENVIRONMENT:-${VLLM_ENV_DIR}}"
  VLLM_CMD=(uv run vllm)
elif [[ -x "${VLLM_ENV_DIR}/bin/vllm" ]]; then
  VLLM_CMD=("${VLLM_ENV_DIR}/bin/vllm")
elif command -v vllm >/dev/null 2>&1; then
  VLLM_CMD=(vllm)
else
  echo "Could not find vLLM." >&2
  exit 1
fi

"${VLLM_CMD[@]}" serve Qwen/Qwen3.5-2B \\
  --max-model-len "${MAX_MODEL_LEN}"
"""


def test_array_naming_one_program_in_every_branch_runs_it() -> None:
    (found,) = read_text(PICKED, "start.sh")
    assert found.argv == ("vllm", "serve", "Qwen/Qwen3.5-2B", "--max-model-len", "16384")
    assert found.unresolved == ()


def test_the_value_of_a_branch_that_exits_does_not_reach_past_fi() -> None:
    script = (
        '#!/bin/bash\nif command -v nvidia-smi; then\n  TP=2\nelse\n  TP=1\n  echo "no GPU"; exit 1\nfi\n'
        "vllm serve m --tensor-parallel-size $TP\n"
    )
    (found,) = read_text(script, "run.sh")
    assert found.argv[-1] == "2" and found.unresolved == ()
    # branches that both go on still leave the value unknown; an array of two programs is not one program
    both = script.replace('  echo "no GPU"; exit 1\n', "")
    (found,) = read_text(both, "run.sh")
    assert found.unresolved == ("$TP",)
    two = '#!/bin/bash\nif command -v uv; then\n  C=(uv run vllm)\nelse\n  C=(python3 -m x)\nfi\n"${C[@]}" serve m\n'
    assert read_text(two, "run.sh") == []
