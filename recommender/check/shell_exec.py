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


def ends_the_script(argv: list[str], op: str) -> bool:
    """A command after which the script runs nothing more, where it runs in the foreground: `exit [N]` (bash(1),
    SHELL BUILTIN COMMANDS), or one that never returns - `sleep infinity` / `sleep inf` (GNU sleep(1)), `tail -f
    /dev/null` - as a container's script keeps it alive, or a debugging pod waits for a shell to be opened in it.
    `op`, the operator before it: after `&&`, `||` or `|` it depends on the command before (not known here)."""
    if op in ("&&", "||", "|"):
        return False
    if argv[:1] == ["exit"] and len(argv) <= 2:
        return True
    if argv[:1] == ["sleep"] and len(argv) == 2 and argv[1].lower() in ("inf", "infinity"):
        return True
    return argv[:1] == ["tail"] and len(argv) == 3 and argv[1] in ("-f", "-F") and argv[2] == "/dev/null"


_BRACE_OPEN = re.compile(r"(?:^|[\s;&|])\{(?=\s|$)")
_BRACE_CLOSE = re.compile(r"(?:^|[\s;&|])\}(?=[\s;&|)]|$)")


def brace_balance(text: str) -> int:
    """The `{` groups and loop bodies (`do`) a command's text opens (a word `{`, not `${`) less those it closes (a
    word `}`, `done`): a command in one may not run, or run more than once."""
    loop = 1 if re.match(r"do\b", text) else -1 if re.match(r"done\b", text) else 0
    return loop + len(_BRACE_OPEN.findall(text)) - len(_BRACE_CLOSE.findall(text))
