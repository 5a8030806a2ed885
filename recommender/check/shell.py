"""Just enough of a POSIX shell to find the `vllm serve` commands a script runs, with its variables (pure).

Handles what launch scripts, `sh -c` / `bash -lc` wrappers and container entrypoints do around vLLM: comments,
backslash-newline continuations, `;` `&&` `||` `|` `&` and newlines between commands, `if/then/else/fi` (every
branch is read), assignments (`X=1`, `export X=1`, `X=1 cmd`), quoting, `$X` / `${X}` / `${X:-default}` /
`${X-default}` / `${X:=default}` / `${1:-default}` expansion with word splitting of unquoted expansions, and the
prefixes a command runs under (`exec`, `nohup`, `setsid`, `env A=1`, `time`, `nice`, `stdbuf`, `timeout 5m`).
What it cannot know (command substitution, a variable no line sets) is kept as the literal `$NAME` and reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGN = re.compile(rf"^({_NAME})=(.*)$", re.S)
_KEYWORDS = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac", "{", "}", "!"}
_PREFIXES = {"exec", "nohup", "setsid", "time", "command", "builtin", "sudo"}
_VALUE_PREFIXES = {"nice": ("-n",), "stdbuf": (), "timeout": (), "taskset": ("-c",), "numactl": ()}


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command: its words after expansion, the variables set just for it, what stayed unknown."""

    words: tuple[str, ...]
    env: Mapping[str, str]
    unresolved: tuple[str, ...] = ()


@dataclass
class _Word:
    text: str = ""
    unresolved: list[str] = field(default_factory=list)
    started: bool = False


def _expand(body: str, env: Mapping[str, str], unresolved: list[str]) -> str:
    """The value of `NAME`, `NAME:-default`, `NAME-default`, `NAME:=default`, `#NAME` (a ${...} body)."""
    m = re.fullmatch(rf"({_NAME}|\d+|[@*#?])(?:(:?)([-=+?])(.*))?", body, re.S)
    if not m:
        unresolved.append("${" + body + "}")
        return "${" + body + "}"
    name, colon, op, arg = m.group(1), m.group(2), m.group(3), m.group(4)
    value = env.get(name)
    unset = value is None or (colon == ":" and value == "")
    if op in ("-", "="):
        return _expand_text(arg or "", env, unresolved) if unset else str(value)
    if op == "+":
        return "" if unset else _expand_text(arg or "", env, unresolved)
    if value is None:
        unresolved.append("$" + name)
        return "$" + name
    return value


def _expand_text(text: str, env: Mapping[str, str], unresolved: list[str]) -> str:
    """Expand variables in a default value (no splitting)."""
    word = _Word()
    _scan(text, env, [word], unresolved, split=False)
    return word.text


def _dollar(text: str, i: int, env: Mapping[str, str], unresolved: list[str]) -> tuple[str, int]:
    """Expand the `$...` at text[i]; returns (expansion, index after it)."""
    if text.startswith("$((", i):
        end = text.find("))", i)
        end = len(text) if end < 0 else end + 2
        unresolved.append(text[i:end])
        return text[i:end], end
    if text.startswith("$(", i):
        depth, j = 0, i + 1
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        unresolved.append(text[i : j + 1])
        return text[i : j + 1], j + 1
    if text.startswith("${", i):
        end = text.find("}", i)
        if end < 0:
            return text[i:], len(text)
        return _expand(text[i + 2 : end], env, unresolved), end + 1
    m = re.compile(rf"{_NAME}|\d|[@*#?$!]").match(text, i + 1)
    if not m:
        return "$", i + 1
    return _expand(m.group(0), env, unresolved), m.end()


def _scan(text: str, env: Mapping[str, str], words: list[_Word], unresolved: list[str], *, split: bool) -> None:
    """Append the words of `text` (quotes removed, variables expanded) to `words`."""
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            words[-1].text += text[i + 1]
            words[-1].started = True
            i += 2
        elif c == "'" and split:
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            words[-1].text += text[i + 1 : end]
            words[-1].started = True
            i = end + 1
        elif c == '"' and split:
            j, buf = i + 1, ""
            while j < len(text) and text[j] != '"':
                if text[j] == "\\" and j + 1 < len(text) and text[j + 1] in '"\\$`':
                    buf, j = buf + text[j + 1], j + 2
                elif text[j] == "$":
                    value, j = _dollar(text, j, env, unresolved)
                    buf += value
                else:
                    buf, j = buf + text[j], j + 1
            words[-1].text += buf
            words[-1].started = True
            i = j + 1
        elif c == "$":
            value, i = _dollar(text, i, env, unresolved)
            if split:  # unquoted: the expansion is split into words
                parts = value.split()
                if not parts:
                    continue
                if value[:1].isspace() and words[-1].started:
                    words.append(_Word())
                for k, part in enumerate(parts):
                    if k:
                        words.append(_Word())
                    words[-1].text += part
                    words[-1].started = True
                if value[-1:].isspace():
                    words.append(_Word())
            else:
                words[-1].text += value
        elif c.isspace() and split:
            if words[-1].started:
                words.append(_Word())
            i += 1
        else:
            words[-1].text += c
            words[-1].started = True
            i += 1


def split_commands(script: str) -> list[str]:
    """The simple commands of a script, in order (continuations joined, comments dropped; quotes respected)."""
    text = script.replace("\\\r\n", " ").replace("\\\n", " ")
    out, cur, i, quote = [], "", 0, ""
    while i < len(text):
        c = text[i]
        if quote:
            cur += c
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < len(text):
                cur += text[i + 1]
                i += 1
        elif c in "'\"":
            quote, cur = c, cur + c
        elif c == "#" and (not cur or cur[-1].isspace()):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        elif c == "$" and text.startswith("$(", i):
            depth, j = 0, i + 1
            while j < len(text):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            cur += text[i : j + 1]
            i = j
        elif c == "&" and (cur.endswith((">", "<")) or text.startswith("&>", i)):
            cur += c  # 2>&1, &> file: a redirection, not a separator
        elif c in ";\n|&":
            out.append(cur)
            cur = ""
            if text.startswith(("&&", "||", ";;"), i):
                i += 1
        else:
            cur += c
        i += 1
    out.append(cur)
    return [c.strip() for c in out if c.strip()]


def run_script(script: str, env: Mapping[str, str] | None = None) -> list[Command]:
    """The simple commands a script runs, each with the variables in force (assignments apply in order)."""
    scope = dict(env or {})
    out: list[Command] = []
    for text in split_commands(script):
        unresolved: list[str] = []
        words = [_Word()]
        _scan(text, scope, words, unresolved, split=True)
        argv = _drop_redirections([w.text for w in words if w.started])
        while argv and argv[0] in _KEYWORDS:
            argv = argv[1:]
        if argv and argv[0] in ("export", "declare", "local", "readonly"):
            argv = [a for a in argv[1:] if not a.startswith("-")]
            for a in argv:
                m = _ASSIGN.match(a)
                if m:
                    scope[m.group(1)] = m.group(2)
            continue
        local: dict[str, str] = {}
        while argv and _ASSIGN.match(argv[0]):
            m = _ASSIGN.match(argv[0])
            assert m is not None
            local[m.group(1)] = m.group(2)
            argv = argv[1:]
        if not argv:
            scope.update(local)  # a bare assignment sets a shell variable
            continue
        argv, more = strip_prefixes(argv)
        local.update(more)
        out.append(Command(tuple(argv), {**scope, **local}, tuple(unresolved)))
    return out


_REDIRECT = re.compile(r"^(\d*|&)(>>?|<|>&|<&)(.*)$")


def _drop_redirections(argv: list[str]) -> list[str]:
    """`> log 2>&1`, `>/dev/null`, `< in` are not arguments of the command."""
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
            continue
        m = _REDIRECT.match(word)
        if m:
            skip = m.group(3) == ""
            continue
        out.append(word)
    return out


def strip_prefixes(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """`exec nohup env A=1 timeout 5m vllm ...` -> (['vllm', ...], {'A': '1'})."""
    env: dict[str, str] = {}
    while argv:
        head = argv[0].rsplit("/", 1)[-1]
        if head in _PREFIXES:
            argv = argv[1:]
        elif head == "env":
            argv = argv[1:]
            while argv and (argv[0].startswith("-") or _ASSIGN.match(argv[0])):
                m = _ASSIGN.match(argv[0])
                if m:
                    env[m.group(1)] = m.group(2)
                argv = argv[1:]
        elif head in _VALUE_PREFIXES:
            argv = argv[1:]
            while argv and argv[0].startswith("-"):
                argv = argv[2:] if argv[0] in _VALUE_PREFIXES[head] else argv[1:]
            if head in ("timeout", "taskset") and argv:
                argv = argv[1:]  # the duration / CPU list
        else:
            break
    return argv, env
