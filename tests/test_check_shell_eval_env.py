"""Two shell idioms of launch scripts (round 28): `eval $CMD` runs the command line the script built in a string
(bash(1), SHELL BUILTIN COMMANDS, eval), and a file test on an env file the repository does not hold is false, as
`source` of it sets nothing (the script's `${X:-default}` values hold)."""

from __future__ import annotations

from pathlib import Path

from recommender.check.inputs import load_inputs
from recommender.check.load import read_text

# Tin-Hoang/sanskrit-vi-translation serve_vllm.sh (round 28), shortened: the command line is a string, grown under
# `if [ -n ... ]`, then run with `eval $CMD`
EVAL_CMD = """#!/bin/bash
MODEL="Qwen/Qwen2.5-32B-Instruct-AWQ"
GPU_MEMORY_UTILIZATION=0.92
MAX_MODEL_LEN=2048
QUANTIZATION="awq"
CMD="vllm serve $MODEL \\
    --gpu-memory-utilization $GPU_MEMORY_UTILIZATION \\
    --max-num-seqs 32 \\
    --trust-remote-code"

if [ -n "$MAX_MODEL_LEN" ]; then
    CMD="$CMD --max-model-len $MAX_MODEL_LEN"
fi

if [ -n "$QUANTIZATION" ]; then
    CMD="$CMD --quantization $QUANTIZATION"
fi

echo "Executing: $CMD"
eval $CMD
"""


def test_eval_runs_the_command_line_built_in_a_string() -> None:
    (found,) = read_text(EVAL_CMD, "serve_vllm.sh")
    assert found.argv == (
        "vllm", "serve", "Qwen/Qwen2.5-32B-Instruct-AWQ", "--gpu-memory-utilization", "0.92", "--max-num-seqs", "32",
        "--trust-remote-code", "--max-model-len", "2048", "--quantization", "awq",
    )  # fmt: skip
    assert found.unresolved == ()


def test_eval_keeps_what_is_set_outside_unresolved_and_ends() -> None:
    script = '#!/bin/bash\nCMD="vllm serve $MODEL --max-model-len 4096"\neval "$CMD"\n'
    (found,) = read_text(script, "run.sh")
    assert found.argv[2] == "$MODEL" and found.unresolved == ("$MODEL",)
    # an eval of itself is not followed for ever; the script's next command is still read
    (found,) = read_text("#!/bin/bash\nCMD='eval $CMD'\neval $CMD\nvllm serve m\n", "run.sh")
    assert found.argv == ("vllm", "serve", "m")
    # nor one that fans out: ten evals of itself at each of the eight levels would be 10^8 readings
    fan = 'eval "$A"; ' * 10
    (found,) = read_text(f"#!/bin/bash\nA='{fan}'\neval \"$A\"\nvllm serve m\n", "run.sh")
    assert found.argv == ("vllm", "serve", "m")


# LeoJ1mmy/Rosettabox scripts/start_vllm.sh (round 28), shortened: values read from the repository's `.env` (not
# committed) only when it is there, the script's defaults otherwise
ENV_IF_PRESENT = """#!/bin/bash
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROJECT_ROOT="$(dirname "$SCRIPT_DIR")"
if [ -f "$PROJECT_ROOT/.env" ]; then
    export VLLM_MAX_MODEL_LEN=$(grep -E "^VLLM_MAX_MODEL_LEN=" "$PROJECT_ROOT/.env" | cut -d'=' -f2- || echo "65536")
    export VLLM_GPU_MEM=$(grep -E "^VLLM_GPU_MEM=" "$PROJECT_ROOT/.env" | cut -d'=' -f2- || echo "0.85")
fi
MAX_MODEL_LEN="${VLLM_MAX_MODEL_LEN:-65536}"
GPU_MEMORY_UTILIZATION="${VLLM_GPU_MEM:-0.85}"
exec vllm serve google/gemma-3-27b-it \\
    --max-model-len "${MAX_MODEL_LEN}" \\
    --gpu-memory-utilization "${GPU_MEMORY_UTILIZATION}"
"""


def test_an_env_file_the_repository_does_not_hold_is_not_there(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "start_vllm.sh"
    script.write_text(ENV_IF_PRESENT)
    (found,) = load_inputs((str(script),)).found
    assert found.argv[3:] == ("--max-model-len", "65536", "--gpu-memory-utilization", "0.85")
    assert found.unresolved == ()
    # committed, it is read (its values come from grep, a command's output: unresolved)
    (tmp_path / ".env").write_text("VLLM_MAX_MODEL_LEN=8192\n")
    (found,) = load_inputs((str(script),)).found
    assert found.argv[4] != "65536" and found.unresolved
    # another file the repository does not hold (a venv, a model) stays undecided: both branches are read
    (tmp_path / ".env").unlink()
    script.write_text(ENV_IF_PRESENT.replace('$PROJECT_ROOT/.env" ]', '$PROJECT_ROOT/models/config.json" ]'))
    (found,) = load_inputs((str(script),)).found
    assert found.unresolved
