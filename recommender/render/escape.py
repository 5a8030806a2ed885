"""Text escaped for one target (shell, systemd, YAML, comments), as types the templates can place (pure).

The template engine places only `Escaped` strings and numbers (render/engine.py refuses anything else), and the
only way to make an `Escaped` string is through the functions below, so every string in an artifact went through
the quoting of its target:

- shell: `shlex.quote` (single quotes; nothing inside is special);
- systemd: ExecStart arguments double-quoted with C escapes for `\\` and `"` and for every non-printable
  character, `%` doubled (specifiers) and `$` doubled (environment expansion), per systemd.service(5) "Command
  lines" and systemd.syntax(7) "Quoting" (a quoted `;` is an argument, not a command separator); the program
  path with `%` doubled only; setting values with `%` doubled and no line break;
- YAML: a double-quoted scalar (JSON's string syntax, a subset of YAML's) with every character YAML reads as a
  line break or refuses (U+0085, U+2028, U+2029, DEL, C1 controls, surrogates, ...) written as an escape;
  docker compose and Kubernetes container arguments also double `$`, which they would otherwise interpolate
  (`${VAR}` in compose; `$(VAR)` in Kubernetes command, args and env values);
- comments: one line, every non-printable character shown as an escape, no trailing line continuation.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable


class Escaped(str):
    """Text already escaped for the artifact it is placed in."""

    __slots__ = ()


class Shell(Escaped):
    """Words quoted for a POSIX shell."""

    __slots__ = ()


class Systemd(Escaped):
    """A value quoted for a systemd unit file."""

    __slots__ = ()


class Yaml(Escaped):
    """A YAML flow scalar or flow sequence that parses back to exactly the value it was made from."""

    __slots__ = ()


class Comment(Escaped):
    """Text safe inside a `#` comment line of any of the artifacts."""

    __slots__ = ()


def _even_backslashes(text: str) -> str:
    """A line that cannot end in a line continuation (an odd run of trailing backslashes)."""
    trailing = len(text) - len(text.rstrip("\\"))
    return text + "\\" if trailing % 2 else text


def one_line(text: str) -> str:
    """Text with every non-printable character (newlines, line separators, controls) shown as an escape."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def comment(text: str) -> Comment:
    """Text for a `#` comment line."""
    return Comment(_even_backslashes(one_line(text)))


def shell(words: Iterable[str]) -> Shell:
    """A command line for sh: each word quoted when it needs it."""
    return Shell(shlex.join(words))


_SYSTEMD_BARE = re.compile(r"[A-Za-z0-9_@+=:,./-]+")


def _systemd_char(ch: str) -> str:
    if ch in '\\"':
        return "\\" + ch
    if ch in "%$":
        return ch + ch
    if ch.isprintable():
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def systemd_word(word: str) -> Systemd:
    """One ExecStart= (or Environment=) word that systemd passes through literally."""
    if _SYSTEMD_BARE.fullmatch(word):
        return Systemd(word)
    return Systemd('"' + "".join(_systemd_char(ch) for ch in word) + '"')


SYSTEMD_EXECUTABLE_REFUSED = "\"'\\"  # systemd refuses these in the program path ("special characters")


def systemd_command(program: str, args: Iterable[str]) -> Systemd:
    """An ExecStart= command line. The program path is not subject to `$` expansion (so `$` stays single);
    systemd refuses quotes, backslashes and control characters in it, so the caller validated them away."""
    if not program.isprintable() or any(ch in SYSTEMD_EXECUTABLE_REFUSED for ch in program):
        raise ValueError(f"systemd cannot run a program path holding quotes, backslashes or controls: {program!r}")
    exe = program.replace("%", "%%")
    quoted = exe if _SYSTEMD_BARE.fullmatch(exe) else f'"{exe}"'
    return Systemd(" ".join([quoted, *(systemd_word(w) for w in args)]))


def systemd_text(text: str) -> Systemd:
    """A free-text setting value (Description=, User=, paths): one line, specifiers doubled."""
    return Systemd(_even_backslashes(one_line(text).replace("%", "%%")))


# Everything outside YAML's printable set, its line breaks (U+0085, U+2028, U+2029) and the byte-order mark.
_YAML_UNSAFE = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _yaml_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def yaml_str(value: str) -> Yaml:
    """A double-quoted YAML scalar for `value`."""
    return Yaml(_YAML_UNSAFE.sub(_yaml_escape, json.dumps(value, ensure_ascii=False)))


def yaml_arg(value: str) -> Yaml:
    """A Kubernetes container command/args/env word, or a docker compose value: `$` doubled, then quoted."""
    return yaml_str(value.replace("$", "$$"))


def yaml_list(values: Iterable[str]) -> Yaml:
    """A flow sequence of strings: ["0", "1"]."""
    return Yaml("[" + ", ".join(yaml_str(v) for v in values) + "]")
