"""A file a script renders from a template of its repository by substituting its environment, before it applies it
(pure): `envsubst < TEMPLATE > FILE` (GNU gettext's envsubst: `$NAME` and `${NAME}` of the environment), or a Python
program given on stdin, `python - TEMPLATE FILE <<EOF`, that fills `string.Template(...).substitute(os.environ)`
(or safe_substitute; `$$` is a dollar there) from its first argument into its second. The rendered text is what a
later `kubectl apply -f FILE` reads. A variable the script does not set is kept as written (reported unresolved
where it reaches a server). So is a file it writes from a here-document (`cat > FILE <<EOF`, written_files)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence

_PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?$")
# a Python program that renders argv[1] with the environment: string.Template over os.environ
_PY_TEMPLATE = re.compile(r"\bTemplate\s*\(.*?\)\s*\.\s*(?:safe_)?substitute\s*\(\s*(?:dict\()?\s*os\.environ", re.S)
_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)")
_INPUT = re.compile(r"^0?<(?![<&>])(.*)$")  # `< F` / `<F`, not a here-document or a descriptor


def read_from(words: Sequence[tuple[str, bool]]) -> str | None:
    """The file a command's standard input comes from (`< F`, `<F`), when one does; words as (text, bare)."""
    for k, (text, bare) in enumerate(words):
        m = _INPUT.match(text) if bare else None
        if m:
            return m.group(1) or (words[k + 1][0] if k + 1 < len(words) else None)
    return None


def rendered(
    argv: Sequence[str],
    stdin: str | None,
    source: str | None,
    target: str | None,
    env: Mapping[str, str],
    read: Callable[[str], str | None],
    here: str,
) -> tuple[str, str] | None:
    """(the file written, its text) when the command renders a template of the repository with the environment;
    `source` is its `< F` input, `target` its `> F` output, `here` the folder relative paths start from."""
    head = argv[0].rsplit("/", 1)[-1] if argv else ""
    if head == "envsubst" and source and target and len(argv) == 1:  # no SHELL-FORMAT: every variable
        text = read(posixpath.normpath(posixpath.join(here, source)))
        return (target, substitute(text, env, dollars=False)) if text is not None else None
    if _PYTHON.match(head) and len(argv) == 4 and argv[1] == "-" and stdin and _PY_TEMPLATE.search(stdin):
        text = read(posixpath.normpath(posixpath.join(here, argv[2])))
        return (argv[3], substitute(text, env, dollars=True)) if text is not None else None
    return None


def substitute(text: str, env: Mapping[str, str], *, dollars: bool) -> str:
    """`$NAME` / `${NAME}` with the variables known; `$$` a dollar for string.Template (`dollars`)."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$" if dollars else "$$"
        name = m.group(1) or m.group(2)
        return str(env[name]) if name in env else m.group(0)

    return _VARIABLE.sub(one, text)


def written_files(
    argv: list[str], stdin: str | None, target: str | None, files: dict[str, str]
) -> tuple[list[str], str | None]:
    """A here-document the script writes to a file (`cat > F <<EOF`, `tee F <<EOF`) is that file's text (kept in
    `files`) when a later `kubectl apply -f F` reads it: the command is then read as `kubectl apply -f -` of that
    text. `target`: the file the command's output goes to."""
    head = argv[0].rsplit("/", 1)[-1] if argv else ""
    if head in ("cat", "tee") and stdin is not None:
        written = target if head == "cat" else next((a for a in reversed(argv[1:]) if not a.startswith("-")), None)
        if written:
            files[written] = stdin
        return argv, stdin
    if head in ("kubectl", "oc") and any(w in ("apply", "create") for w in argv[1:3]):
        for k, word in enumerate(argv[:-1]):
            if word in ("-f", "--filename") and argv[k + 1] in files:
                return [*argv[: k + 1], "-", *argv[k + 2 :]], files[argv[k + 1]]
    return argv, stdin
