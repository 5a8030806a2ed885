"""Subshell groups in a script's commands (pure): bash(1), Compound Commands, `( list )`: "list is executed in a
subshell environment ... Variable assignments and builtin commands that affect the shell's environment do not
remain in effect after the command completes". So `( cd compose/vllm && docker compose up -d )` runs compose in that
folder, and the script's later commands run where they were. The splitter leaves the parentheses on the first and
last commands of the group (`( cd compose/vllm`, `docker compose up -d )`); `groups` moves them to segments of their
own, `(` and `)`, which the runner reads as entering and leaving a subshell (shell.py's _Runner)."""

from __future__ import annotations

import re
from typing import Any

from recommender.check.shell_split import Segment

OPEN, CLOSE = "(", ")"
_CASE = re.compile(r"case\s")
_QUOTED = re.compile(r"'[^']*'|\"(?:\\.|[^\"\\])*\"")


def groups(segments: list[Segment]) -> list[Segment]:
    """The segments with each subshell group's parentheses as segments of their own (`(` before its first command,
    `)` after its last; what follows the `)` - a redirection, `&` - is dropped). Inside a `case` (whose patterns end
    in `)`) and for `((` arithmetic nothing is changed."""
    out: list[Segment] = []
    depth = cases = 0
    for seg in segments:
        text, op = seg.text, seg.op
        cases += 1 if _CASE.match(text) else -1 if re.match(r"esac\b", text) and cases else 0
        while not cases and text.startswith(OPEN) and not text.startswith("(("):
            out.append(Segment(OPEN, op))
            depth, text, op = depth + 1, text[1:].lstrip(), ""
        closes: list[Segment] = []
        while depth and not cases and (end := _unbalanced_close(text)) is not None:
            closes.append(Segment(CLOSE, ""))
            depth, text = depth - 1, text[:end].rstrip()
        if text:
            out.append(Segment(text, op, seg.heredoc, seg.heredoc_quoted))
        out += closes
    return out


def _unbalanced_close(text: str) -> int | None:
    """The index of the last `)` that closes nothing opened in `text` (quotes hide parentheses), if one does."""
    plain = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)
    depth, found = 0, None
    for k, c in enumerate(plain):
        if c == "(":
            depth += 1
        elif c == ")":
            if depth:
                depth -= 1
            else:
                found = k
    return found


class Subshells:
    """Entering and leaving a `( list )` subshell in shell.py's _Runner (a mixin): what the list sets - variables,
    exports, arrays, the folder `cd` moved to - is put back as it was when the group ends."""

    scope: dict[str, str]
    exported: set[str]
    allexport: bool
    arrays: dict[str, list[str]]
    unknown: set[str]
    soft: set[str]
    outside: set[str]
    cwd: str | None
    subshells: list[tuple[Any, ...]]

    def _subshell(self, text: str) -> bool:
        """Enter (`(`) or leave (`)`) a subshell: True when `text` is one of them (nothing else to run)."""
        if text == OPEN:
            arrays = {k: list(v) for k, v in self.arrays.items()}
            self.subshells.append((dict(self.scope), set(self.exported), self.allexport, arrays, self.cwd))
            self.subshells[-1] += (set(self.unknown), set(self.soft), set(self.outside))
            return True
        if text != CLOSE:
            return False
        if self.subshells:
            scope, self.exported, self.allexport, arrays, self.cwd, self.unknown, self.soft, self.outside = (
                self.subshells.pop()
            )
            self.scope.clear()
            self.scope.update(scope)
            self.arrays.clear()
            self.arrays.update(arrays)
        return True
