"""Split a shell script into its simple commands (pure): comments, backslash-newline continuations, the operators
between commands (`;` `&&` `||` `|` `&`, newlines), quoting, `$(...)` and `( ... )` groups, here-documents.
shell.py runs what this splits."""

from __future__ import annotations

import re
from dataclasses import dataclass

from recommender.check.shell_expansion import VARIABLE_NAME, closing_paren

_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_ARRAY_OPEN = re.compile(rf"(?:^|\s){VARIABLE_NAME}\+?=$")
# a run of characters none of the rules below looks at: taken whole (one at a time is quadratic in a long value)
_PLAIN = re.compile(r"[^'\"`#$(<&;\n|]+")
# inside an array's parentheses: runs without quotes, escapes, comments, parentheses (by the quote that is open)
_ARRAY_PLAIN = {"": re.compile(r"[^'\"\\\\#()\s]+"), "'": re.compile(r"[^']+"), '"': re.compile(r'[^"\\\\]+')}
_QUOTED_PLAIN = {"'": re.compile(r"[^']+"), '"': re.compile(r'[^"\\$]+'), "`": re.compile(r"[^`]+")}


@dataclass(frozen=True, slots=True)
class Segment:
    """A simple command's text, the operator before it ('', ';', '\\n', '&&', '||', '|', '&'), its here-doc."""

    text: str
    op: str = ""
    heredoc: str | None = None
    heredoc_quoted: bool = False


def split_commands(script: str) -> list[Segment]:
    """The simple commands of a script, in order, with the operator before each and their here-documents
    (continuations joined, comments dropped; quotes respected)."""
    text = _join_continuations(script)
    out: list[Segment] = []
    cur, op, i, quote = "", "", 0, ""
    pending: list[tuple[int, str, bool, bool]] = []  # (segment index, delimiter, strip tabs, quoted)
    while i < len(text):
        c = text[i]
        if quote:
            quote, taken, i = _quoted(text, i, quote)
            cur += taken
        elif c in "'\"`":
            quote, cur = c, cur + c
        elif c == "#" and (not cur or cur[-1].isspace()):
            end = text.find("\n", i)  # a comment runs to the end of its line
            i = len(text) if end < 0 else end
            continue
        elif c == "(" and _ARRAY_OPEN.search(cur):
            i, words = _array_words(text, i)
            cur += words
        elif (group := _group_end(text, i)) is not None:
            cur += text[i : group + 1]
            i = group
        elif c == "<" and _HEREDOC.match(text, i):
            m = _HEREDOC.match(text, i)
            assert m is not None
            pending.append((len(out), m.group(3), m.group(1) == "-", bool(m.group(2))))
            cur += m.group(0)
            i = m.end() - 1
        elif c == "&" and (cur.endswith((">", "<")) or text.startswith("&>", i)):
            cur += c  # 2>&1, &> file: a redirection, not a separator
        elif c in ";\n|&":
            out.append(Segment(cur.strip(), op))
            op, i = _operator(text, i, op if not cur.strip() else "")
            cur = ""
            if c == "\n" and pending:
                i = _read_heredocs(text, i + 1, pending, out) - 1
                pending = []
        else:
            m = _PLAIN.match(text, i)
            cur += m.group(0) if m else c
            i = m.end() - 1 if m else i
        i += 1
    out.append(Segment(cur.strip(), op))
    return [s for s in out if s.text]


def _quoted(text: str, i: int, quote: str) -> tuple[str, str, int]:
    """One step inside quotes at text[i]: (the quote still open, the text taken, the index of its last character).
    Inside double quotes a `$(...)` opens its own quoting (`"${X:-$(python -c "a; b")}"` is one word)."""
    if quote == '"' and text.startswith("$(", i):
        j = closing_paren(text, i + 1)
        return quote, text[i : j + 1], j
    if text[i] == quote:
        return "", text[i], i
    if text[i] == "\\" and quote == '"' and i + 1 < len(text):
        return quote, text[i : i + 2], i + 1
    m = _QUOTED_PLAIN[quote].match(text, i)
    return quote, m.group(0) if m else text[i], m.end() - 1 if m else i


def _join_continuations(script: str) -> str:
    """Backslash-newline joins a line to the next, except at the end of a comment line, where the backslash is part
    of the comment (bash: a commented-out flag line inside a continued command ends that command there)."""
    out = []
    for line in script.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        joined = body.endswith("\\") and not body.lstrip().startswith("#")
        out.append(body[:-1] + " " if joined else line)
    return "".join(out)


def _group_end(text: str, i: int) -> int | None:
    """Where a `$(...)` opening at text[i] ends: it stays part of the command, newlines included."""
    if text.startswith("$(", i):
        return closing_paren(text, i + 1)
    return None


def _array_words(text: str, i: int) -> tuple[int, str]:
    """An array assignment's `( ... )` opening at text[i] (`ARGS=(` then one flag a line): the index of its closing
    parenthesis and its text on one line. Words are read as bash reads them there: quotes span lines and hide `#`
    and parentheses; a `#` starting a word outside quotes is a comment to the end of its line (bash(1), Arrays and
    Comments: a comment's apostrophe, `# can't`, opens no quote)."""
    parts: list[str] = []
    depth, quote, j, last = 0, "", i, ""
    while j < len(text):
        c = text[j]
        plain = _ARRAY_PLAIN[quote].match(text, j)
        if plain:  # a run of characters none of the rules below looks at, taken whole
            parts.append(plain.group(0).replace("\n", " ") if not quote else plain.group(0))
            last, j = plain.group(0)[-1], plain.end()
            continue
        if c == "\\" and quote != "'" and j + 1 < len(text):  # an escaped character, in or out of double quotes
            parts.append(text[j : j + 2])
            last, j = text[j + 1], j + 2
            continue
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and last in ("(", " ", "\t", "\n"):
            end = text.find("\n", j)
            j, last = (len(text), "\n") if end < 0 else (end, " ")
            continue
        elif c in "()":
            depth += 1 if c == "(" else -1
            if depth == 0:
                return j, "".join(parts) + c
        parts.append(" " if c == "\n" and not quote else c)
        last, j = c, j + 1
    return len(text) - 1, "".join(parts)


def _operator(text: str, i: int, before: str) -> tuple[str, int]:
    """The control operator at text[i] (`;`, a newline, `|`, `&`, `&&`, `||`, `;;`) and the index of its last
    character. `before`: the operator that opened an empty segment ending here; `;;` then a newline or `;` stays
    `;;` (the next case arm follows), and `&` then a newline stays `&` (the command before ran in the background)."""
    op = text[i]
    if text.startswith(("&&", "||", ";;"), i):
        op = text[i : i + 2]
        i += 1
    return (before if (before, op) in ((";;", "\n"), (";;", ";"), ("&", "\n")) else op), i


def _read_heredocs(text: str, i: int, pending: list[tuple[int, str, bool, bool]], out: list[Segment]) -> int:
    """Read the bodies of the here-documents opened on the line that just ended; returns the index after them."""
    for index, delimiter, strip_tabs, quoted in pending:
        lines = []
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip_tabs else line).strip() == delimiter:
                break
            lines.append(line.lstrip("\t") if strip_tabs else line)
        if index < len(out):
            seg = out[index]
            out[index] = Segment(seg.text, seg.op, "\n".join(lines) + "\n", quoted)
    return i


def command_substitutions(text: str) -> list[str]:
    """The scripts of the outermost `$(...)` of a command, outside single quotes (not `$((arithmetic))`)."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and text.count('"', 0, i) % 2 == 0:
            end = text.find("'", i + 1)
            i = len(text) if end < 0 else end + 1
            continue
        if text.startswith("$(", i) and not text.startswith("$((", i):
            end = closing_paren(text, i + 1)
            out.append(text[i + 2 : end])
            i = end + 1
            continue
        i += 1
    return out
