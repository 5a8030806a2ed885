"""Word expansion for the shell reader (pure): quote removal, `$X` / `${X}` / `${X:-default}` / `${X-default}` /
`${X:=default}` / `${X:+alt}` / `${1:-default}` / `${NAME##*/}` / `${ARR[@]}` parameter expansion, `$((arithmetic))`
on known numbers, and word splitting of unquoted expansions ("$@" and "${ARR[@]}" one word per item). What it cannot
know (command substitution, a variable no line sets, a `<placeholder>` of a README) is kept as written and reported.
Command splitting, here-documents and running a script's commands are shell.py's.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from recommender.check.shell_conditions import arithmetic

VARIABLE_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# NAME=VALUE, and NAME+=VALUE: bash appends VALUE to the string NAME holds (bash(1), PARAMETERS: "the += operator")
ASSIGNMENT = re.compile(rf"^({VARIABLE_NAME})\+?=(.*)$", re.S)
PLACEHOLDER = re.compile(r"<[A-Za-z_][^<>\n]*[^\s<>]>|<[A-Za-z_]>")
_MAX_NESTING = 8  # ${A:-${B:-...}} levels read (scripts nest two or three)
# "$@", "${@}", "${ARR[@]}": one word per item; so is the `set -u`-safe "${ARR[@]+"${ARR[@]}"}" (none when empty)
_LIST = re.compile(
    rf'"(?:\$@|\$\{{@\}}|\$\{{({VARIABLE_NAME})\[@\]\}}|\$\{{({VARIABLE_NAME})\[@\]:?\+"\$\{{\2\[@\]\}}"\}})"'
)
# what an expansion leaves as written when it cannot know it: $NAME, ${...}, $(...), `...`, a <placeholder>
# runs of characters `scan` and `_double_quoted` take as they are: taken whole (one at a time is quadratic)
_PLAIN_SPLIT = re.compile(r"[^<\\`'\"$\s]+")
_PLAIN_WHOLE = re.compile(r"[^<\\`$]+")
_PLAIN_QUOTED = re.compile(r'[^"<\\$]+')
UNKNOWN_PART = re.compile(r"\$[A-Za-z_{(]|`|<[A-Za-z_][^<>]*>")
# commands of a `$(...)` that compute a path from a known one (Expander._path_of), and the redirections they carry
_PATH_COMMANDS = (
    (
        "cd",
        re.compile(r"(?:builtin\s+)?cd\s+(?:-P\s+|--\s+)*(\S.*?)\s*(?:&&|;)\s*(?:builtin\s+)?pwd(?:\s+-[PL])?", re.S),
    ),
    ("dirname", re.compile(r"dirname\s+(?:--\s+)?(\S.*)", re.S)),
    ("real", re.compile(r"(?:realpath(?:\s+-[es])?|readlink\s+-[fem]+)\s+(?:--\s+)?(\S.*)", re.S)),
)
# `cat <<DELIM` (or <<'DELIM', <<"DELIM", <<-DELIM) then its lines up to the one that is DELIM alone, and nothing after
_CAT_HERE_DOCUMENT = re.compile(
    r"\s*cat[ \t]*<<(?P<dash>-?)[ \t]*(?P<quote>['\"]?)(?P<delim>[A-Za-z_]\w*)(?P=quote)[ \t]*\n"
    r"(?:(?P<body>.*?)\n)?(?P<tabs>\t*)(?P=delim)\n?\s*",
    re.S,
)
_QUIET = re.compile(r"\s*(?:[12]?>\s*/dev/null|2>&1|&>\s*/dev/null)")
_WHOLE_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'', re.S)  # a word that is one quoted string
_UNKNOWN_WHOLE = re.compile(r"^(\$\(.*\)|`[^`]*`|\$\{[^}]*\}|\$[A-Za-z_]\w*|<[^<>]+>)$", re.S)  # nothing known


# `command -v NAME` (POSIX: the pathname of the utility the shell's PATH search finds), `which NAME`, `type -P NAME`
_ON_PATH = re.compile(r"(?:command\s+-v|which|type\s+-[pP])\s+([A-Za-z_][\w.+-]*)")


def _found_on_path(body: str) -> str | None:
    """The output of `$(command -v NAME)` / `$(which NAME)` / `$(type -P NAME)`: where PATH finds program NAME, a
    folder not known here; the word NAME runs that same program (the shell's own PATH search), so it stands for it.
    None for any other command."""
    m = _ON_PATH.fullmatch(_QUIET.sub("", body).strip())
    return m.group(1) if m else None


@dataclass
class Word:
    text: str = ""
    unresolved: list[str] = field(default_factory=list)
    started: bool = False
    soft: bool = False  # a default standing in for a script argument (`${2:-x}`): a value; branches on it are read
    # all (modes), their assignments taking the default branch's values (shell_branches.py's _Frame.by_default)
    bare: bool = False  # starts with an unquoted literal character (only such a word can be a redirection)
    empty_from: list[str] = field(default_factory=list)  # names whose empty outside-set value (`${X:-}`) it holds


class Expander:
    """Variable expansion over a scope; `unknown` holds the names whose value came from something unknown, `soft`
    those that took the default of a script argument."""

    def __init__(
        self,
        scope: Mapping[str, str],
        unknown: set[str],
        soft: set[str] | None = None,
        *,
        unset_empty: bool = False,
        arrays: Mapping[str, list[str]] | None = None,
        outside: set[str] | None = None,
    ) -> None:
        self.scope = scope
        # names assigned the empty default of a variable meant to be set outside the file (`X="${X:-}"`), and the
        # names whose such empty value an expansion took (a command's empty word made of one is unresolved)
        self.outside = outside if outside is not None else set()
        self.empty_from: list[str] = []
        self.arrays = arrays or {}  # bash arrays, and "@": the positional parameters when they are known
        self.depth = 0  # ${...} inside a default inside ...: bounded, as text from a file is untrusted
        self.unknown = unknown
        self.soft = soft if soft is not None else set()
        self.used_soft = False
        self.unset_empty = unset_empty  # a condition: an unset variable is empty, as when the script runs
        # `${NAME:=word}` / `${NAME=word}` with NAME unset (or empty, with the colon) assigns word to NAME as well
        # (bash(1), Parameter Expansion; `: "${PORT:=8000}"` is the idiom): NAME -> (value, whether it is known)
        self.assigned: dict[str, tuple[str, bool]] = {}
        self.quoted_word = False  # the last expansion was a default/alternative word quoted whole: not split

    def value(self, body: str, unresolved: list[str]) -> str:
        """The value of a ${...} body: `NAME`, `NAME:-default`, `NAME-default`, `NAME:=default`, `NAME:+alt`."""
        if self.depth >= _MAX_NESTING:
            unresolved.append("${" + body[:40] + "}")
            return "${" + body + "}"
        self.depth += 1
        try:
            return self._value(body, unresolved)
        finally:
            self.depth -= 1

    def _special(self, body: str, unresolved: list[str]) -> str | None:
        """An array's items (or its `+`/`-` operator's word), a length or a trimmed value; None for other bodies."""
        item = re.fullmatch(rf"({VARIABLE_NAME})\[([@*]|\d+)\]", body)
        if item and item.group(1) in self.arrays and item.group(1) not in self.unknown:
            items = self.arrays[item.group(1)]
            index = item.group(2)
            return " ".join(items) if not index.isdigit() else (items[int(index)] if int(index) < len(items) else "")
        length = re.fullmatch(rf"#({VARIABLE_NAME})(\[[@*]\])?", body)
        if length:  # ${#ARR[@]}: how many items; ${#NAME}: how many characters (bash(1), Parameter Expansion)
            return self._length(length.group(1), listed=bool(length.group(2)), unresolved=unresolved)
        listed = re.fullmatch(rf"({VARIABLE_NAME})\[[@*]\]:?([-+])(.*)", body, re.S)
        if listed:  # ${ARR[@]+alt} / ${ARR[@]-default}: an array with no items is unset (bash(1), Parameter Expansion)
            return self._listed(listed.group(1), listed.group(2), listed.group(3), unresolved)
        case = re.fullmatch(rf"({VARIABLE_NAME})(,,|\^\^|,|\^)", body)
        if case:  # ${NAME,,} / ${NAME^^}: lower / upper case, ${NAME,} / ${NAME^} the first letter (bash(1))
            probe: list[str] = []
            value = self._value(case.group(1), probe)
            if not probe and UNKNOWN_PART.search(value) is None:
                op = case.group(2)
                turn = str.lower if op[0] == "," else str.upper
                return turn(value) if len(op) == 2 else turn(value[:1]) + value[1:]
            unresolved.append("${" + body + "}")
            return "${" + body + "}"
        trim = re.fullmatch(rf"({VARIABLE_NAME})(##?|%%?)(.+)", body, re.S)
        if trim:  # ${NAME##*/}, ${NAME%.*}: a pattern removed from the front or the back
            return self._trimmed(trim.group(1), trim.group(2), trim.group(3), unresolved)
        return None

    def _value(self, body: str, unresolved: list[str]) -> str:
        special = self._special(body, unresolved)
        if special is not None:
            return special
        m = re.fullmatch(rf"({VARIABLE_NAME}|\d+|[@*#?])(?:(:?)([-=+?])(.*))?", body, re.S)
        if not m:
            unresolved.append("${" + body + "}")
            return "${" + body + "}"
        name, colon, op, arg = m.group(1), m.group(2), m.group(3), m.group(4)
        value = self.assigned[name][0] if name in self.assigned else self.scope.get(name)
        if name in ("@", "*", "#") and "@" in self.arrays:
            value = str(len(self.arrays["@"])) if name == "#" else " ".join(self.arrays["@"])
        unset = value is None or (colon == ":" and value == "")
        if name in self.soft or (not name.isidentifier() and op and "@" not in self.arrays):
            self.used_soft = True  # the script's arguments (or a value taken from them) may differ
        if op in ("-", "=") and unset and not arg and name.isidentifier():
            self.empty_from.append(name)  # `${NAME:-}`: NAME is meant to come from outside the file
            return ""
        self._note_quoted_word(op, unset, arg)
        if op == "=" and unset and name.isidentifier():
            before = len(unresolved)
            word = self._word(arg or "", unresolved)
            self.assigned[name] = (word, len(unresolved) == before)
            return word
        if op in ("-", "="):
            return self._word(arg or "", unresolved) if unset else self._known(name, str(value), unresolved)
        if op == "+":
            return "" if unset else self._word(arg or "", unresolved)
        if value is None:
            if self.unset_empty and name.isidentifier():
                return ""
            unresolved.append("$" + name)
            return "$" + name
        if value == "" and name in self.outside:
            self.empty_from.append(name)
        return self._known(name, value, unresolved)

    def _note_quoted_word(self, op: str | None, unset: bool, arg: str | None) -> None:
        """`${X-"a b"}` taking its word: the word's quotes hold, its expansion is one word (bash(1))."""
        if op in ("-", "=", "+") and (unset if op != "+" else not unset) and _WHOLE_QUOTED.fullmatch(arg or ""):
            self.quoted_word = True

    def _listed(self, name: str, op: str, arg: str, unresolved: list[str]) -> str:
        items = self.items(name)
        if items is None:
            unresolved.append("${" + name + "[@]" + op + arg + "}")
            return "${" + name + "[@]" + op + arg + "}"
        if op == "+":
            return self._word(arg, unresolved) if items else ""
        return " ".join(items) if items else self._word(arg, unresolved)

    def _length(self, name: str, *, listed: bool, unresolved: list[str]) -> str:
        value = self.items(name) if listed else self.scope.get(name)
        if value is None or name in self.unknown:
            written = "${#" + name + ("[@]" if listed else "") + "}"
            unresolved.append(written)
            return written
        self.used_soft = self.used_soft or name in self.soft
        return str(len(value))

    def _trimmed(self, name: str, op: str, pattern: str, unresolved: list[str]) -> str:
        """`${NAME#P}` / `${NAME##P}` remove the shortest / longest front match of the glob P, `%` / `%%` the back."""
        value, glob = self.scope.get(name), self.text(pattern, [])
        self.used_soft = self.used_soft or name in self.soft
        if value is None or name in self.unknown or UNKNOWN_PART.search(glob):
            unresolved.append("${" + name + op + pattern + "}")
            return "${" + name + op + pattern + "}"
        cuts = range(len(value) + 1) if len(op) == 1 else range(len(value), -1, -1)
        for k in cuts:
            front, back = (value[:k], value[k:]) if op[0] == "#" else (value[len(value) - k :], value[: len(value) - k])
            if fnmatchcase(front, glob):
                return back
        return value

    def _known(self, name: str, value: str, unresolved: list[str]) -> str:
        if name in self.unknown:  # set from something unknown, or differently by branches that cannot be decided
            unresolved.append("$" + name)
            # a value built around an unknown part (`VLLM="$SCRIPT_DIR/.venv/bin/vllm"`) keeps what is known, the
            # unknown part written as it was; a value that branches may set differently stays the name
            return value if UNKNOWN_PART.search(value) and not _UNKNOWN_WHOLE.match(value) else "$" + name
        return value

    def items(self, name: str) -> list[str] | None:
        """The items of "$@" or "${ARR[@]}", or None when they are not known."""
        return list(self.arrays[name]) if name in self.arrays and name not in self.unknown else None

    def _word(self, text: str, unresolved: list[str]) -> str:
        """The word of `${NAME:-word}` / `${NAME:+word}`: expanded, and its quotes removed as bash does
        (`${MODEL:-"org/name"}` is org/name; single quotes keep their text literal)."""
        out, run, i = "", "", 0
        while i < len(text):
            c = text[i]
            if c == "$" and text[i + 1 : i + 2] == "{":  # a nested ${...} stays whole, its own quotes inside it
                end = _closing_brace(text, i + 1)
                end = len(text) - 1 if end < 0 else end
                run, i = run + text[i : end + 1], end + 1
            elif c == "\\" and i + 1 < len(text):
                run, i = run + text[i : i + 2], i + 2
            elif c in "'\"":
                end = text.find(c, i + 1)
                if end < 0:  # an unmatched quote: the text as written
                    return out + self.text(run + text[i:], unresolved)
                inner = text[i + 1 : end]
                out += self.text(run, unresolved) + (inner if c == "'" else self.text(inner, unresolved))
                run, i = "", end + 1
            else:
                run, i = run + c, i + 1
        return out + self.text(run, unresolved)

    def text(self, text: str, unresolved: list[str]) -> str:
        """Expand variables in a default value or a here-document (no word splitting)."""
        word = Word()
        self.scan(text, [word], unresolved, split=False)
        return word.text

    def dollar(self, text: str, i: int, unresolved: list[str]) -> tuple[str, int]:
        """Expand the `$...` at text[i]; returns (expansion, index after it)."""
        if text.startswith("$((", i):
            end = text.find("))", i)
            end = len(text) if end < 0 else end + 2
            got = arithmetic(text[i + 3 : end - 2], self.scope, self.unknown)
            if got is None:
                unresolved.append(text[i:end])
                return text[i:end], end
            return str(got), end
        if text.startswith("$(", i):
            j = closing_paren(text, i + 1)
            path = self._path_of(text[i + 2 : j])
            if path is not None:
                return path, j + 1
            found = _found_on_path(text[i + 2 : j])
            if found is not None:
                return found, j + 1
            printed = self._here_document_of(text[i + 2 : j], unresolved)
            if printed is not None:
                return printed, j + 1
            unresolved.append(text[i : j + 1])
            return text[i : j + 1], j + 1
        if text.startswith("${", i):
            end = _closing_brace(text, i + 1)
            if end < 0:
                return text[i:], len(text)
            return self.value(text[i + 2 : end], unresolved), end + 1
        m = re.compile(rf"{VARIABLE_NAME}|\d|[@*#?$!]").match(text, i + 1)
        if not m:
            return "$", i + 1
        return self.value(m.group(0), unresolved), m.end()

    def _here_document_of(self, body: str, unresolved: list[str]) -> str | None:
        """The output of `$(cat <<DELIM ... DELIM)`: the here-document itself, as cat(1) prints its standard input -
        expanded unless the delimiter is quoted, leading tabs removed with `<<-` (bash(1), Here Documents), trailing
        newlines removed (Command Substitution). None for any other command."""
        m = _CAT_HERE_DOCUMENT.fullmatch(body)
        if not m or (m.group("tabs") and not m.group("dash")):  # only <<- ends at a tab-indented delimiter
            return None
        lines = (m.group("body") or "").split("\n")
        if m.group("dash"):
            lines = [ln.lstrip("\t") for ln in lines]
        printed = "\n".join(lines)
        return (printed if m.group("quote") else self.text(printed, unresolved)).rstrip("\n")

    def _path_of(self, body: str) -> str | None:
        """The output of a command substitution that only computes a path from a known absolute one - the idioms
        scripts find their own folder with (`$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`, `$(dirname "$0")`,
        `$(realpath "$0")`, `$(cd "$DIR/.." && pwd)`): dirname(1), cd then pwd, realpath(1) / readlink -f, on
        the expanded word. None for any other command, or a word not known here or not absolute."""
        body = _QUIET.sub("", body).strip()
        for kind, form in _PATH_COMMANDS:
            m = form.fullmatch(body)
            if not m:
                continue
            got: list[str] = []
            word = [Word()]
            self.scan(m.group(1).strip(), word, got, split=True)
            if got or len(word) != 1 or not word[0].started or not word[0].text.startswith("/"):
                return None
            path = posixpath.normpath(word[0].text)
            return posixpath.dirname(path) if kind == "dirname" else path
        return None

    def scan(self, text: str, words: list[Word], unresolved: list[str], *, split: bool) -> None:
        """Append the words of `text` (quotes removed, variables expanded) to `words`."""
        i = 0
        while i < len(text):
            c = text[i]
            placeholder = PLACEHOLDER.match(text, i) if c == "<" else None
            if placeholder:
                words[-1].text += placeholder.group(0)
                words[-1].started = True
                words[-1].unresolved.append(placeholder.group(0))
                unresolved.append(placeholder.group(0))
                i = placeholder.end()
            elif c == "\\" and i + 1 < len(text):
                words[-1].text += text[i + 1]
                words[-1].started = True
                i += 2
            elif c == "`":  # an old-style command substitution: its output is unknown
                end = text.find("`", i + 1)
                end = len(text) if end < 0 else end
                words[-1].text += text[i : end + 1]
                words[-1].started = True
                words[-1].unresolved.append(text[i : end + 1])
                unresolved.append(text[i : end + 1])
                i = end + 1
            elif c == "'" and split:
                end = text.find("'", i + 1)
                end = len(text) if end < 0 else end
                words[-1].text += text[i + 1 : end]
                words[-1].started = True
                i = end + 1
            elif c == '"' and split:
                listed = self._list(text, i, words, unresolved)
                i = listed if listed is not None else self._double_quoted(text, i + 1, words[-1], unresolved)
            elif c == "$":
                i = self._unquoted_dollar(text, i, words, unresolved, split=split)
            elif c.isspace() and split:
                if words[-1].started:
                    words.append(Word())
                i += 1
            else:
                if not words[-1].started:
                    words[-1].bare = True
                m = (_PLAIN_SPLIT if split else _PLAIN_WHOLE).match(text, i)
                words[-1].text += m.group(0) if m else c
                words[-1].started = True
                i = m.end() if m else i + 1

    def _list(self, text: str, i: int, words: list[Word], unresolved: list[str]) -> int | None:
        """A whole quoted "$@" / "${ARR[@]}" word with known items: one word per item (the index after it); the
        item standing for what an undecided branch may have appended (shell.py's _appended) stays unresolved."""
        m = _LIST.match(text, i)
        if not m or words[-1].started or (m.end() < len(text) and not text[m.end()].isspace()):
            return None
        items = self.items(m.group(1) or m.group(2) or "@")
        if items is None:
            return None
        for item in items:
            words[-1].text, words[-1].started = item, True
            if item == f"${{{m.group(1) or m.group(2) or '@'}[@]}}":
                words[-1].unresolved.append(item)
                unresolved.append(item)
            words.append(Word())
        return m.end()

    def _double_quoted(self, text: str, j: int, word: Word, unresolved: list[str]) -> int:
        buf = ""
        while j < len(text) and text[j] != '"':
            placeholder = PLACEHOLDER.match(text, j) if text[j] == "<" else None
            if placeholder:
                buf += placeholder.group(0)
                word.unresolved.append(placeholder.group(0))
                unresolved.append(placeholder.group(0))
                j = placeholder.end()
            elif text[j] == "\\" and j + 1 < len(text) and text[j + 1] in '"\\$`':
                buf, j = buf + text[j + 1], j + 2
            elif text[j] == "$":
                before, empty = len(unresolved), len(self.empty_from)
                start = j
                value, j = self.dollar(text, j, unresolved)
                word.unresolved += unresolved[before:]
                word.empty_from += self.empty_from[empty:]
                if _quoted_for_later(text, start, j, value, self.empty_from[empty:], word.text):
                    # `cmd+=" --model '$MODEL'"`: the string holds `''$MODEL''`, which expands it when it runs
                    value = f"'${self.empty_from[empty]}'"
                buf += value
            else:
                m = _PLAIN_QUOTED.match(text, j)
                buf, j = (buf + m.group(0), m.end()) if m else (buf + text[j], j + 1)
        word.text += buf
        word.started = True
        return j + 1

    def _unquoted_dollar(self, text: str, i: int, words: list[Word], unresolved: list[str], *, split: bool) -> int:
        before, empty = len(unresolved), len(self.empty_from)
        self.quoted_word = False
        value, i = self.dollar(text, i, unresolved)
        missing = unresolved[before:]
        words[-1].empty_from += self.empty_from[empty:]
        if self.quoted_word:  # `${X-"a b"}` unquoted: the quoted default is one word, not split
            words[-1].text += value
            words[-1].started = True
            return i
        # a command line held with unknown parts (`C="vllm serve $MODEL --port 1"`, then `exec $C`) is split at its
        # known blanks as bash splits it; each unknown part stays one word
        around = bool(missing) and _UNKNOWN_WHOLE.match(value) is None and len(_split_around(value)) > 1
        if not split or (missing and not around) or ASSIGNMENT.match(words[-1].text):
            # no word splitting in an assignment's value; an unknown value (a `$(...)` output, a placeholder, an
            # unset variable) stays one unknown word
            words[-1].text += value
            words[-1].started = True
            words[-1].unresolved += missing
            return i
        parts = _split_around(value) if around else value.split()  # unquoted: the expansion is split into words
        if not parts:
            return i
        if value[:1].isspace() and words[-1].started:
            words.append(Word())
        for k, part in enumerate(parts):
            if k:
                words.append(Word())
            words[-1].text += part
            words[-1].started = True
            words[-1].unresolved += missing if not around or UNKNOWN_PART.search(part) else []
        if value[-1:].isspace():
            words.append(Word())
        return i


def _split_around(value: str) -> list[str]:
    """`value` split at its blanks outside the unknown parts it keeps as written (`$(cmd a)`, `${X:-a b}`, `...`)."""
    parts: list[str] = []
    current, depth, tick = "", 0, False
    for k, c in enumerate(value):
        if c == "`":
            tick = not tick
        elif c in "({" and (value[k - 1 : k] == "$" or depth):
            depth += 1
        elif c in ")}" and depth:
            depth -= 1
        if c.isspace() and not depth and not tick:
            parts, current = parts + ([current] if current else []), ""
        else:
            current += c
    return parts + ([current] if current else [])


def _closing_brace(text: str, j: int) -> int:
    """Index of the `}` closing the `{` at text[j] (defaults nest: `${A:-${B:-x}}`), or -1."""
    depth = 0
    for k in range(j, len(text)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return k
    return -1


def closing_paren(text: str, j: int) -> int:
    """Index of the `)` closing the `(` at text[j] (or the end)."""
    depth = 0
    while j < len(text):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j
        j += 1
    return len(text) - 1


def _quoted_for_later(text: str, start: int, end: int, value: str, empty_from: list[str], word: str) -> bool:
    """An empty value only the script's options or its caller fill, single-quoted inside a command line a string
    holds for a later `bash -c` / `eval` (`cmd+=" --model '$MODEL'"`): the empty argument it makes when the string
    runs is that value, unresolved as it would be written directly (outside_words)."""
    quoted = start > 0 and text[start - 1] == "'" and text[end : end + 1] == "'"
    return value == "" and bool(empty_from) and quoted and bool(ASSIGNMENT.match(word))
