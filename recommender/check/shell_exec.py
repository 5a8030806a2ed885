"""A script that runs another script file (pure): `./serve.sh A B`, `scripts/start_vllm.sh`, `bash run.sh`, `sh -e
run.sh`. A command name holding a slash is run as that file (bash(1), COMMAND EXECUTION), by the interpreter its
`#!` line names (execve(2)), or by the shell itself when it has none; `bash FILE ARG...` runs FILE's commands with
the ARGs as its positional parameters (bash(1), ARGUMENTS). The file runs in a process of its own: what it sets
does not come back to the caller."""

from __future__ import annotations

import re

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_SHEBANG = re.compile(r"^#![ \t]*\S*/(?:env[ \t]+(?:-\S+[ \t]+)*)?(\S+)")


def executed_file(argv: list[str]) -> tuple[str, list[str]] | None:
    """(the file as written, its arguments) when `argv` runs a script file; None for another command (a name
    found on PATH, `bash -c STRING`, a path the shell has not expanded)."""
    if not argv or argv[0].startswith("$"):
        return None
    if argv[0].rsplit("/", 1)[-1] in _SHELLS:
        i = 1
        while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
            if not argv[i].startswith("--") and "c" in argv[i][1:]:  # -c: a command string, not a file
                return None
            i += 1
        return (argv[i], argv[i + 1 :]) if i < len(argv) and not argv[i].startswith("$") else None
    return (argv[0], argv[1:]) if "/" in argv[0] else None


def runs_in_a_shell(text: str) -> bool:
    """Whether the kernel would hand the file to a shell: a `#!` line naming one, or none at all."""
    shebang = _SHEBANG.match(text)
    return not text.startswith("#!") or (shebang is not None and shebang.group(1) in _SHELLS)
