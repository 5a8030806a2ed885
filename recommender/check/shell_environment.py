"""Which shell variables reach a child process (pure): bash(1), ENVIRONMENT. A program the script starts (`vllm
serve` reading its VLLM_* variables, `docker compose` interpolating `${VAR}`, `docker run -e VAR`, `envsubst`, a
script run as `bash other.sh` or `./other.sh`) gets the shell's environment: the variables it was started with,
those marked for export (`export VAR=x`, `export VAR`, `declare -x` / `typeset -x` / `local -x`; `export -n` and
`declare +x` take the mark off), every variable assigned while `set -a` (`set -o allexport`) is on, and the
assignments written before the command itself (`VAR=x cmd`, `env VAR=x cmd`). A plain `VAR=x` on its own line sets
a shell variable only: the script's own expansions (`vllm serve $VAR`) see it, a child does not, unless VAR was
already exported (assigning to an exported variable keeps it exported). A `source`d file and a function run in the
same shell; a `$(...)` subshell has every variable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from recommender.check.shell_expansion import VARIABLE_NAME

# what a login shell starts with from its environment (environ(7)): exported, so a plain assignment to one of them
# (`PATH=$VENV/bin:$PATH`) reaches the programs the script starts. The GPU selection variables too: where a script
# runs on GPUs they come exported from the job or container (Slurm sets CUDA_VISIBLE_DEVICES in a GPU job's
# environment, sbatch(1) / gres.conf; ROCm containers and schedulers the HIP_ / ROCR_ ones), so a plain
# `CUDA_VISIBLE_DEVICES=0,1` line reassigns an exported variable there, as its author means; a gate that dropped it
# would judge the deployment on every GPU of the node.
INHERITED = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "LANG", "TERM"}
    | {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}
)
_NAME = re.compile(rf"({VARIABLE_NAME})(?:\+?=|$)", re.S)


def export_marks(argv: list[str]) -> tuple[set[str], set[str]]:
    """(names marked for export, names unmarked) by a declaration builtin's words (`export`, `declare`, `typeset`,
    `local`, `readonly`): `export NAME[=VALUE]...`, `export -n NAME`, `declare -x NAME=V`, `declare +x NAME`."""
    head, options = argv[0], [w for w in argv[1:] if w[:1] in ("-", "+") and len(w) > 1]
    names = {m.group(1) for w in argv[1:] if w[:1] not in ("-", "+") and (m := _NAME.match(w))}
    if head == "export":
        if any("f" in o for o in options if o.startswith("-")):  # `export -f NAME`: a function, not a variable
            return set(), set()
        unmark = any("n" in o for o in options if o.startswith("-"))
        return (set(), names) if unmark else (names, set())
    if head in ("declare", "typeset", "local"):
        if any("x" in o for o in options if o.startswith("-")):
            return names, set()
        if any("x" in o for o in options if o.startswith("+")):
            return set(), names
    return set(), set()


def allexport(argv: list[str]) -> bool | None:
    """What `set ...` does to the allexport option: True (`set -a`, `set -o allexport`), False (`set +a`, `set +o
    allexport`), None (leaves it)."""
    state: bool | None = None
    words = argv[1 : argv.index("--")] if "--" in argv else argv[1:]
    for k, word in enumerate(words):
        if word in ("-o", "+o") and k + 1 < len(words) and words[k + 1] == "allexport":
            state = word == "-o"
        elif re.fullmatch(r"[-+][a-zA-Z]+", word) and "a" in word:
            state = word[0] == "-"
    return state


def environment(scope: Mapping[str, str], exported: set[str], own: Mapping[str, str]) -> dict[str, str]:
    """The environment a command starts with: the exported variables, then its own assignments (`VAR=x cmd`)."""
    return {**{name: value for name, value in scope.items() if name in exported}, **own}
