"""The shell reader on the bash idioms launch scripts build their `vllm serve` line with: default assignment with
`: "${X:=d}"`, the length of an array, commands run inside `$(...)`, and option loops over `case "$1"` that set flags
and append to arrays (bash(1): Parameter Expansion, Command Substitution). Hand-written minimal scripts; the shapes
come from public launch scripts (benchmarks/data/check-heldout/round21/SOURCES: anchor-rerank, tennsoku), and the
`set -u`-safe array expansion and comments inside an array's parentheses from jessedc/vllm-docker-gb10's run-*.sh."""

from __future__ import annotations

import pytest

from recommender.check import shell
from recommender.check.shell import command_substitutions


def _serve(script: str) -> list[tuple[str, ...]]:
    return [c.words for c in shell.run_script(script) if c.words[:2] == ("vllm", "serve")]


def test_colon_equals_default_assigns_the_variable() -> None:
    script = (
        ': "${MODEL:=org/m}"\n: ${TP:=2}\nvllm serve "$MODEL" -tp "$TP" --max-model-len "${LEN:=4096}" --port $LEN\n'
    )
    assert _serve(script) == [("vllm", "serve", "org/m", "-tp", "2", "--max-model-len", "4096", "--port", "4096")]


def test_colon_equals_keeps_a_value_already_set() -> None:
    script = 'MODEL=a/b\n: "${MODEL:=org/m}"\nE=\n: "${E=x}" "${F=y}"\nvllm serve "$MODEL" --e "$E" --f "$F"\n'
    # `${E=x}` without the colon assigns only when E is unset, not when it is empty
    assert _serve(script) == [("vllm", "serve", "a/b", "--e", "", "--f", "y")]


def test_colon_equals_of_an_unknown_default_leaves_the_variable_unknown() -> None:
    (cmd,) = [
        c for c in shell.run_script(': "${MODEL:=$(cat model.txt)}"\nvllm serve "$MODEL"\n') if c.words[:1] == ("vllm",)
    ]
    assert cmd.words[2] == "$MODEL" and "$MODEL" in cmd.unresolved


@pytest.mark.parametrize(
    ("line", "value"),
    [("A=(x 'y z' w)\necho ${#A[@]}", "3"), ("A=()\necho ${#A[*]}", "0"), ("N=abcd\necho ${#N}", "4")],
)
def test_length_of_an_array_or_a_value(line: str, value: str) -> None:
    assert shell.run_script(line)[-1].words == ("echo", value)


def test_length_of_an_unknown_array_is_unresolved() -> None:
    (cmd,) = shell.run_script("echo ${#NOPE[@]}")
    assert cmd.unresolved == ("${#NOPE[@]}",)


def test_a_command_inside_command_substitution_runs() -> None:
    script = (
        'cmd=(docker run --gpus all vllm/vllm-openai:v0.10.0 --model m -tp 2)\nID="$("${cmd[@]}" 2>"$OUT/err.log")"\n'
    )
    runs = [c.words for c in shell.run_script(script) if c.words[:2] == ("docker", "run")]
    assert runs == [("docker", "run", "--gpus", "all", "vllm/vllm-openai:v0.10.0", "--model", "m", "-tp", "2")]


def test_command_substitution_is_a_subshell_and_quotes_hide_it() -> None:
    script = "X=$(M=b/c; echo hi)\necho '$(vllm serve q)'\nvllm serve ${M:-a/b}\n"
    assert _serve(script) == [("vllm", "serve", "a/b")]  # M set inside $(...) does not reach the script
    assert command_substitutions("echo '$(a)' \"$(b)\" $((1+2)) $(c $(d))") == ["b", "c $(d)"]


OPTION_LOOP = """MODEL=org/m
FAST=false
EXTRA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) MODEL="$2"; shift 2 ;;
    --fast) FAST=true; shift ;;
    --arg) EXTRA+=("$2"); shift 2 ;;
    *) exit 2 ;;
  esac
done
cmd=(vllm serve "$MODEL")
if [[ "$FAST" == true ]]; then
  cmd+=(--enforce-eager)
fi
if (( ${#EXTRA[@]} > 0 )); then
  cmd+=("${EXTRA[@]}")
fi
exec "${cmd[@]}"
"""


def test_option_loop_flags_and_appends_keep_the_values_the_script_runs_with_without_arguments() -> None:
    (cmd,) = [c for c in shell.run_script(OPTION_LOOP) if c.words[:1] == ("vllm",)]
    assert cmd.words == ("vllm", "serve", "org/m") and not cmd.unresolved


def test_an_array_unknown_before_an_if_decided_by_default_stays_unknown() -> None:
    script = (
        'A=(a)\nif [ -f /etc/site.conf ]; then A+=(b); fi\nFAST=false\ncase "$1" in --fast) FAST=true ;; esac\n'
        'if [[ "$FAST" == true ]]; then A+=(c); fi\nvllm serve m "${A[@]}"\n'
    )
    (cmd,) = [c for c in shell.run_script(script) if c.words[:1] == ("vllm",)]
    assert "${A[@]}" in cmd.unresolved  # whether the first `if` appended b is not known


def test_an_array_append_after_then_on_the_same_line() -> None:
    script = 'A=(vllm serve m)\nX=1\nif [ "$X" = 1 ]; then A+=(-tp 2); else A+=(-tp 4); fi\n"${A[@]}"\n'
    assert _serve(script) == [("vllm", "serve", "m", "-tp", "2")]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ("", ()),  # an empty array: no word at all, quoted or not
        ("--max-num-seqs 8", ("--max-num-seqs", "8")),  # one word per item, as "${ARR[@]}" gives
    ],
)
def test_the_set_u_safe_array_expansion_gives_the_items_or_nothing(extra: str, words: tuple[str, ...]) -> None:
    # `"${ARR[@]+"${ARR[@]}"}"` (bash(1), Parameter Expansion: ${parameter:+word}; an array with no items is unset)
    # is how a `set -u` script passes a maybe-empty array (jessedc/vllm-docker-gb10's run-*.sh, no held-out round)
    script = f'set -u\npass=({extra})\nvllm serve org/m "${{pass[@]+"${{pass[@]}}"}}" ${{pass[@]+"${{pass[@]}}"}}\n'
    assert _serve(script) == [("vllm", "serve", "org/m", *words, *words)]


def test_an_arrays_minus_default_stands_in_for_an_empty_array() -> None:
    assert _serve("a=()\nb=(x)\nvllm serve org/m ${a[@]-8} ${b[@]-y}\n") == [("vllm", "serve", "org/m", "8", "x")]


def test_a_comment_inside_an_array_assignment_is_dropped_whatever_it_holds() -> None:
    # a `#` starting a word inside `( ... )` comments out the rest of its line; an apostrophe there (`can't`) opens
    # no quote and a parenthesis closes nothing, while a `#` inside quotes is text (bash(1), Comments)
    script = """flags=(--max-model-len 4096
       # keep it small: it can't fit (the KV cache
       -e "TAG=#1"   # a trailing comment
       --port 8000)
vllm serve org/m "${flags[@]}"
"""
    assert _serve(script) == [("vllm", "serve", "org/m", "--max-model-len", "4096", "-e", "TAG=#1", "--port", "8000")]


@pytest.mark.parametrize(
    ("script", "words"),
    [
        # bash(1): the word of ${X-word} keeps its own quotes, so an unquoted ${X-"a b"} is one word, not two
        ('vllm serve m ${EXTRA-"--max-model-len 4096"}', ("vllm", "serve", "m", "--max-model-len 4096")),
        ('vllm serve m ${EXTRA:-"a b"} c', ("vllm", "serve", "m", "a b", "c")),
        ("vllm serve m ${EXTRA:-'a b'}", ("vllm", "serve", "m", "a b")),
        ('X=1; vllm serve m ${X:+"-tp 2"}', ("vllm", "serve", "m", "-tp 2")),
        ('vllm serve m ${EXTRA-""} z', ("vllm", "serve", "m", "", "z")),
        # an unquoted word still splits, and so does a set value
        ("vllm serve m ${EXTRA:-a b}", ("vllm", "serve", "m", "a", "b")),
        ('EXTRA="-tp 2"; vllm serve m ${EXTRA-"a b"}', ("vllm", "serve", "m", "-tp", "2")),
    ],
)
def test_a_quoted_default_word_is_not_split(script: str, words: tuple[str, ...]) -> None:
    assert [c.words for c in shell.run_script(script)] == [words]


def test_cat_of_a_here_document_in_a_command_substitution_is_the_document() -> None:
    """tasd12-ty/qwen35-vllm-ray-deploy's config.sh (check-heldout round 24; no licence to copy it, the shape written
    here): `LIMIT_MM_JSON=$(cat <<'JSON' ... JSON)`. cat prints its here-document; the substitution drops the
    trailing newlines; a quoted delimiter keeps `$` as written, an unquoted one expands it, `<<-` strips leading tabs
    (bash(1): Here Documents, Command Substitution)."""
    script = (
        'LIMIT=$(cat <<\'JSON\'\n{"image": 4, "video": 0}\nJSON\n)\n'
        'N=2\nOVR=$(cat <<EOF\n{"n": $N,\n "x": "$$"}\nEOF\n)\n'
        "T=$(cat <<-END\n\tindented\n\tEND\n)\n"
        'vllm serve m --limit-mm-per-prompt "$LIMIT" --hf-overrides "$OVR" --t "$T"\n'
    )
    (words,) = _serve(script)
    assert words[4] == '{"image": 4, "video": 0}'
    assert words[6].startswith('{"n": 2,\n "x": ')
    assert words[8] == "indented"


def test_another_command_of_a_here_document_stays_unresolved() -> None:
    script = "V=$(python3 - <<'PY'\nprint(1)\nPY\n)\nvllm serve m --x \"$V\"\n"
    (cmd,) = [c for c in shell.run_script(script) if c.words[:2] == ("vllm", "serve")]
    assert cmd.words[4] == "$V" and cmd.unresolved  # a program's output is not known here


def test_an_array_an_undecided_branch_appends_to_keeps_its_known_items() -> None:
    # round 25's ElSnacko/vllm-stack entrypoint.sh (shape): ARGS built item by item, one append behind a test on a
    # file inside the container (`[ -f "${MODEL_DIR}/config.json" ]`): whether it ran is not known, what came
    # before and after it is; the maybe-appended items are one unresolved word in their place
    script = """ARGS=("--model" "/app/models/${MODEL_NAME}")
ARGS+=("--max-model-len" "8192")
TASK=""
if [ -z "$TASK" ] && [ -f "/app/models/config.json" ]; then
    TASK="generate"
fi
if [ -n "$TASK" ]; then
    ARGS+=("--runner" "${TASK}")
fi
ARGS+=("--gpu-memory-utilization" "0.95")
exec vllm serve "${ARGS[@]}"
"""
    (cmd,) = [c for c in shell.run_script(script) if c.words[:2] == ("vllm", "serve")]
    assert cmd.words[2:] == (
        "--model", "/app/models/$MODEL_NAME", "--max-model-len", "8192", "${ARGS[@]}",
        "--gpu-memory-utilization", "0.95",
    )  # fmt: skip
    assert "${ARGS[@]}" in cmd.unresolved
    # a branch that sets the array anew (not only appending) leaves it unknown as a whole, as before
    reset = script.replace('ARGS+=("--runner" "${TASK}")', 'ARGS=("--runner" "${TASK}")')
    (cmd,) = [c for c in shell.run_script(reset) if c.words[:2] == ("vllm", "serve")]
    assert cmd.words[2:] == ("${ARGS[@]}",)
