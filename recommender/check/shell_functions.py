"""Shell functions in a script's commands (pure): where a definition starts and ends (bash(1), Shell Function
Definitions: `name() { list; }` or `function name { list; }`), so that a call runs the body with its arguments as
$1... (in the caller's shell: what it sets stays set)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from recommender.check.shell_split import Segment

_DEFINITION = re.compile(r"^(?:function\s+)?([A-Za-z_][\w:.-]*)\s*\(\s*\)\s*\{$|^function\s+([A-Za-z_][\w:.-]*)\s*\{$")
_OPENS = re.compile(r"(?:^|\s)\{$|^\{(?:\s|$)")  # a group or a definition opening on this segment
MAX_CALLS = 256  # calls of functions over one whole reading (a function calling itself would never end)
MAX_CALL_DEPTH = 16  # calls nested deeper than this are not followed (the call stays a command)


def function_name(text: str) -> str | None:
    """The function a segment starts the definition of (`render_template() {`), if it does."""
    m = _DEFINITION.match(text)
    return (m.group(1) or m.group(2)) if m else None


def function_end(segments: list[Segment], start: int) -> int | None:
    """The index of the `}` that closes the definition opened at `start` (None: not closed, read as before)."""
    depth = 0
    for i in range(start, len(segments)):
        text = segments[i].text
        if _OPENS.search(text):
            depth += 1
        if text == "}" or text.startswith(("} ", "}>", "}<")):
            depth -= 1
            if depth == 0:
                return i
    return None


def uncalled_first(functions: dict[str, list[Segment]]) -> list[str]:
    """The functions' names, those no other function's body names first (a `launch` whose `case` calls
    `launch_single`...), so that running them runs the others as they would be run."""

    def named_elsewhere(name: str) -> bool:
        word = re.compile(rf"(?<![\w.:-]){re.escape(name)}(?![\w.:-])")
        return any(word.search(seg.text) for other, body in functions.items() if other != name for seg in body)

    inner = {name for name in functions if named_elsewhere(name)}
    return [n for n in functions if n not in inner] + [n for n in functions if n in inner]


class Functions:
    """Calls of the script's functions in shell.py's _Runner (a mixin): the runner holds the variables, the bodies
    defined so far and the budget of calls."""

    scope: dict[str, str]
    unknown: set[str]
    arrays: dict[str, list[str]]
    functions: dict[str, list[Segment]]
    called: set[str]
    emitted: dict[str, set[tuple[Any, ...]]]  # what each function's calls gave: (words, stdin, cwd)
    calls_left: list[int]
    depth: int
    out: list[Any]
    halted: bool

    if TYPE_CHECKING:  # the runner's, used here

        def run(self, segments: list[Segment]) -> list[Any]: ...

        def _set_positional(self, items: list[str]) -> None: ...

    def run_all(self, segments: list[Segment]) -> list[Any]:
        """A whole script; then the body of each function it defines and never calls, as if run where it stands
        (its arguments unknown): a script of functions called from elsewhere still shows what they start."""
        self.run(segments)
        uncalled = [] if self.halted else uncalled_first(self.functions)  # a script that ended runs none of them
        for name in uncalled:  # those no other function calls first: they call the rest
            if name not in self.called:
                self.called.add(name)
                self.run(self.functions[name])
        return self.out

    def _call(self, argv: list[str]) -> bool:
        """A call of a function the script defined: its body, in this shell, with the arguments as $1..."""
        body = self.functions.get(argv[0]) if argv else None
        if body is None or self.calls_left[0] <= 0 or self.depth >= MAX_CALL_DEPTH:
            return False
        self.calls_left[0] -= 1
        self.called.add(argv[0])
        saved = ({k: v for k, v in self.scope.items() if k.isdigit() and k != "0"}, self.arrays.get("@"))
        unknown = "@" in self.unknown
        self._set_positional(argv[1:])
        self.depth += 1
        start = len(self.out)
        try:
            self.run(body)
        finally:
            self.depth -= 1
        # a function reached twice along branches not decided here (`start)` and `restart)` arms both calling
        # start_container) starts one server, not two: a command it already gave, word for word, is not repeated
        seen = self.emitted.setdefault(argv[0], set())
        fresh = [c for c in self.out[start:] if (c.words, c.stdin, c.cwd) not in seen]
        seen.update((c.words, c.stdin, c.cwd) for c in fresh)
        self.out[start:] = fresh
        for k in [k for k in self.scope if k.isdigit() and k != "0"]:
            del self.scope[k]
        self.scope.update(saved[0])
        if saved[1] is None:
            self.arrays.pop("@", None)
        else:
            self.arrays["@"] = saved[1]
        if unknown:
            self.unknown.add("@")
        return True
