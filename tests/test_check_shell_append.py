"""`NAME+=VALUE` in a launch script (round 29): bash appends VALUE to the string NAME holds (bash(1), PARAMETERS,
"the += operator"); a command line grown that way and run by `bash -c "$cmd"` is read whole. A model only the
script's own `--model` option gives (empty otherwise) is unresolved, written directly (`vllm serve "$MODEL"`) or
single-quoted into such a string (`cmd+=" --model '$MODEL'"`), not an empty model nor vLLM's default."""

from __future__ import annotations

from recommender.check.load import read_text

# maynard242/vLLM-Tests launch_vllm.sh (round 29), shortened: the command line is a string grown with `+=`, an
# append under a test the script's defaults decide, then run with `nohup bash -c "$cmd"`
APPENDED = """#!/bin/bash
MAX_MODEL_LEN=""
GPU_MEMORY_UTILIZATION="0.9"
TENSOR_PARALLEL_SIZE="1"
TRUST_REMOTE_CODE="false"
start_server() {
    local cmd="python3 -m vllm.entrypoints.openai.api_server"
    cmd+=" --model 'Qwen/Qwen2.5-7B-Instruct'"
    cmd+=" --host 0.0.0.0"
    [[ -n "$MAX_MODEL_LEN" ]] && cmd+=" --max-model-len $MAX_MODEL_LEN"
    cmd+=" --gpu-memory-utilization $GPU_MEMORY_UTILIZATION"
    cmd+=" --tensor-parallel-size $TENSOR_PARALLEL_SIZE"
    [[ "$TRUST_REMOTE_CODE" == "true" ]] && cmd+=" --trust-remote-code"
    nohup bash -c "$cmd" > /tmp/vllm.log 2>&1 &
}
start_server
"""


def test_appended_string_is_the_command_line() -> None:
    (found,) = read_text(APPENDED, "launch_vllm.sh")
    assert found.argv[2:] == (
        "--model", "Qwen/Qwen2.5-7B-Instruct", "--host", "0.0.0.0", "--gpu-memory-utilization", "0.9",
        "--tensor-parallel-size", "1",
    )  # fmt: skip
    assert found.unresolved == ()


def test_append_to_an_unknown_value_stays_unknown() -> None:
    script = '#!/bin/bash\nARGS="$(cat args.txt)"\nARGS+=" --max-model-len 4096"\nvllm serve m $ARGS\n'
    (found,) = read_text(script, "run.sh")
    assert found.unresolved  # what `cat` prints is not known here, with or without the append
    # a plain assignment still replaces: `+=` only appends
    (found,) = read_text('#!/bin/bash\nA="--port 1"\nA+=" --port 2"\nA="--port 3"\nvllm serve m $A\n', "run.sh")
    assert found.argv == ("vllm", "serve", "m", "--port", "3")


# the same script's option loop: MODEL is empty unless `--model NAME` is given
OPTION_LOOP = """#!/bin/bash
DEFAULT_MODEL=""
MODEL="$DEFAULT_MODEL"
while [[ $# -gt 0 ]]; do
    case $1 in
        --model)
            MODEL="$2"
            shift 2
            ;;
        *)
            shift
            ;;
    esac
done
"""


def test_model_only_the_scripts_option_gives_is_unresolved() -> None:
    quoted = APPENDED.replace("'Qwen/Qwen2.5-7B-Instruct'", "'$MODEL'").replace("#!/bin/bash\n", OPTION_LOOP)
    (found,) = read_text(quoted, "launch_vllm.sh")
    assert found.argv[2:4] == ("--model", "$MODEL") and found.unresolved == ("$MODEL",)
    (found,) = read_text(OPTION_LOOP + 'vllm serve "$MODEL" --port 8000\n', "run.sh")
    assert found.argv == ("vllm", "serve", "$MODEL", "--port", "8000") and found.unresolved == ("$MODEL",)
    # a value the script itself gives stays as given
    (found,) = read_text(OPTION_LOOP.replace('MODEL="$DEFAULT_MODEL"', "MODEL=m") + 'vllm serve "$MODEL"\n', "run.sh")
    assert found.argv == ("vllm", "serve", "m") and found.unresolved == ()


# AlJ95/runpod-container scripts/start_vllm.sh (round 29), shortened: the command line holds values the container's
# environment sets (unknown here) and is run unquoted, `exec $VLLM_CMD`: bash splits it at its blanks
UNQUOTED_RUN = """#!/bin/bash
set -e
source .venv/bin/activate
VLLM_CMD="vllm serve $VLLM_MODEL"
VLLM_CMD+=" --host $HOST"
VLLM_CMD+=" --gpu-memory-utilization $GPU_MEMORY_UTILIZATION"
exec $VLLM_CMD
"""


def test_command_line_with_unknown_values_run_unquoted_is_split_at_its_blanks() -> None:
    (found,) = read_text(UNQUOTED_RUN, "start_vllm.sh")
    assert found.argv == (
        "vllm", "serve", "$VLLM_MODEL", "--host", "$HOST", "--gpu-memory-utilization", "$GPU_MEMORY_UTILIZATION",
    )  # fmt: skip
    assert found.unresolved == ("$VLLM_CMD",)
    # an unknown part with blanks inside it (`$(...)`, `${X:-a b}`) stays one word
    (found,) = read_text('#!/bin/bash\nC="vllm serve $(cat model name) --port 1"\nexec $C\n', "run.sh")
    assert found.argv == ("vllm", "serve", "$(cat model name)", "--port", "1")
