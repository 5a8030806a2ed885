"""The branch state of shell.py's runner (pure): `if/elif/else/fi` and `case ... esac` being read, which branch is
taken, skipped or undecided, and what a variable holds after an undecided one.

A branch whose condition can be decided from the script's own variables is taken or skipped as the shell would;
every branch of an undecidable one is read, and a variable its branches may leave with different values is unknown
after it (unless the branch the script takes without arguments gives it a value: _take_default). A branch that ends
the script (`exit`) reaches nothing after the `fi`, so its values do not count.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from recommender.check.launchers import strip_prefixes
from recommender.check.shell_conditions import combine, combine_or, either, negated
from recommender.check.shell_expansion import Word
from recommender.check.shell_split import Segment

_PROGRAM = re.compile(r"^(vllm|python(\d(\.\d+)?)?)$")  # what a command headed by a variable may run vLLM with
_SPECIAL = set("123456789@*#")  # positional and special parameters: the script's arguments
_KEYWORDS = {"then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac", "{", "}", "!"}


@dataclass
class _Frame:
    """One `if` being read: the state of the branch being read (True taken, False skipped, None unknown) and
    whether an earlier branch was certainly taken (then every later one is skipped) or maybe taken."""

    state: bool | None = None
    taken: bool | None = False
    condition: list[tuple[str, bool | None]] = field(default_factory=list)
    in_condition: bool = True
    undecided: bool = False  # some branch could not be decided: its assignments make a value uncertain
    branches: list[dict[str, str]] = field(default_factory=list)  # what each read branch assigned
    before: dict[str, str | None] = field(default_factory=dict)  # the values before the `if`
    arrays: set[str] = field(default_factory=set)  # which of them are bash arrays (their items joined by NUL)
    unknown_before: set[str] = field(default_factory=set)  # which of them were not known before the `if`
    has_else: bool = False
    exited: set[int] = field(default_factory=set)  # read branches that end the script (`else echo ...; exit 1`)
    # The same `if` decided with the defaults that stand for the script's arguments (`${1:-nvfp4}`), as the shell
    # runs it without arguments: which read branch that takes (None: none), unless some condition stays unknown.
    by_default: list[tuple[str, bool | None]] = field(default_factory=list)
    default_taken: bool | None = False
    default_branch: int | None = None
    default_known: bool = True
    serial: int = 0  # which `if`/`case` of the script this is (Command.alternative)
    on_arguments: bool = False  # a condition or subject names what the script's arguments set: its branches are modes


@dataclass
class _Case:
    """A `case` being read: its subject (None: not known here), and whether the next words are an arm's patterns
    (split at `|` into several segments until the `)`)."""

    subject: str | None
    frame: _Frame
    default: str | None = None  # the subject as the script runs without arguments (a default standing for one)
    expecting: bool = True
    patterns: list[str] = field(default_factory=list)
    on_argument: bool = False  # the subject is a positional parameter not known here (`case "$1" in` of an option loop)


class Branches:
    """The `if` and `case` state of shell.py's _Runner (a mixin): the frames being read, and the methods that open,
    decide and close them. The runner holds the variables and reads the words and conditions."""

    scope: dict[str, str]
    unknown: set[str]
    soft: set[str]
    arrays: dict[str, list[str]]
    frames: list[_Frame]
    cases: list[_Case]
    opened: int  # the `if`s and `case`s opened so far (each frame's serial)
    options: set[str]  # names the script's arguments may set (shell._FROM_ARGUMENT)

    if TYPE_CHECKING:  # the runner's, used here

        def _words(self, text: str) -> tuple[list[Word], list[str]]: ...

        def _condition(self, text: str, *, defaults: bool = False) -> bool | None: ...

        def _segment(self, seg: Segment, previous: Segment | None) -> None: ...

    @property
    def case_depth(self) -> int:
        return len(self.cases)

    def _new_frame(self, *, in_condition: bool = True, state: bool | None = None) -> _Frame:
        self.opened += 1
        return _Frame(state=state, in_condition=in_condition, serial=self.opened)

    def _alternative(self) -> tuple[tuple[int, int], ...]:
        """Where the command being read sits among the branches of the undecided `if`s and `case`s around it: (which
        one, which branch) for each. Commands in different branches of one of them are alternatives: bash runs one
        branch of an `if` (the first whose condition holds) or of a `case` (the first arm that matches), bash(1),
        Compound Commands."""
        frames = [f for f in self.frames if f.state is None and f.branches and not f.on_arguments]
        return tuple((f.serial, len(f.branches) - 1) for f in frames)

    def _names_arguments(self, text: str) -> bool:
        """Whether a condition or a `case` subject reads what the script's arguments give (`$1`, `"$@"`, a variable
        an option loop sets): its branches are the script's modes, each a server of its own (shell.py _FROM_ARGUMENT),
        where a condition on the machine (`command -v vllm`, a file test) picks how the same server is run."""
        names = re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*|[1-9@*#])", text)
        return any(n in self.options or n in _SPECIAL for n in names)

    @property
    def active(self) -> bool:
        return all(f.state is not False for f in self.frames) and not any(f.in_condition for f in self.frames)

    def _case(self, words: list[Word], seg: Segment) -> None:
        """`case WORD in [PATTERN...]`: a known subject decides its arms as the shell would; each arm is a branch."""
        subject = words[1] if len(words) > 1 else Word()
        known = not (subject.unresolved or subject.soft) and self.active
        self.frames.append(self._new_frame(in_condition=False, state=None if self.active else False))
        self.frames[-1].on_arguments = subject.soft or self._names_arguments(seg.text.split(" in ", 1)[0])
        default = subject.text if not subject.unresolved and self.active else None
        on_argument = not known and bool(re.fullmatch(r"\$\{?[1-9]\}?", subject.text))
        self.cases.append(
            _Case(subject.text if known else None, self.frames[-1], default=default, on_argument=on_argument)
        )
        rest = seg.text.split(" in ", 1)[1].strip() if " in " in seg.text else ""
        if rest:
            self._case_arm(Segment(rest, ""), None)

    def _case_arm(self, seg: Segment, previous: Segment | None) -> None:
        """The patterns of an arm (`a|b)` arrives as segments `a`, `b)` joined by `|`), then its commands."""
        case = self.cases[-1]
        case.expecting = True
        if re.match(r"esac\b", seg.text):
            self.frames = [f for f in self.frames if f is not case.frame]
            self._close_if(case.frame)
            self.cases.pop()
            rest = seg.text[4:].strip()
            if rest:
                self._segment(Segment(rest, ""), previous)
            return
        head, paren, body = seg.text.partition(")")
        case.patterns.append(head.strip().lstrip("("))
        if not paren:
            return
        case.expecting = False
        matches = [self._matches(case.subject, p) for p in case.patterns]
        by_default = [self._matches(case.default, p) for p in case.patterns]
        case.frame.has_else = case.frame.has_else or "*" in case.patterns
        case.patterns = []
        case.frame.in_condition, case.frame.condition = True, [("", combine_or(matches))]
        case.frame.by_default = [("", combine_or(by_default))]
        self._close_condition()
        if body.strip():
            self._segment(Segment(body.strip(), ""), previous)

    def _matches(self, subject: str | None, pattern: str) -> bool | None:
        if pattern == "*":
            return True
        words, unresolved = self._words(pattern)
        if subject is None or unresolved:
            return None
        return fnmatchcase(subject, "".join(w.text for w in words))

    def _record(self, name: str, value: str, *, array: bool = False) -> None:
        """Note an assignment in the branch of an `if` being read (see _close_if); an array's value is its items
        joined by NUL."""
        frame = self.frames[-1] if self.frames else None
        if frame is not None and frame.branches:
            if name not in frame.before and name in self.unknown:
                frame.unknown_before.add(name)
            if array:
                frame.arrays.add(name)
                frame.before.setdefault(name, "\0".join(self.arrays[name]) if name in self.arrays else None)
            else:
                frame.before.setdefault(name, self.scope.get(name))
            frame.branches[-1][name] = value

    def _structure(self, words: list[Word], seg: Segment) -> list[Word] | None:
        """Apply the shell keywords at the start of a command; None when the command was a condition."""
        while words:
            head = words[0].text
            if head in ("if", "elif"):
                self._open_branch(head)
                words = words[1:]
                continue
            if head == "then" and self.frames and self.frames[-1].in_condition:
                self._close_condition()
                words = words[1:]
                continue
            if head == "else" and self.frames:
                frame = self.frames[-1]
                frame.state = negated(frame.taken)
                frame.has_else = True
                self._default_branch(frame, negated(frame.default_taken))
                self._enter_branch(frame)
                words = words[1:]
                continue
            if head == "fi" and self.frames:
                self._close_if(self.frames.pop())
                words = words[1:]
                continue
            if head == "case":
                self._case(words, seg)
                return None
            if head in _KEYWORDS and not (head == "!" and self.frames and self.frames[-1].in_condition):
                words = words[1:]
                continue
            break
        if self.frames and self.frames[-1].in_condition and words:
            self.frames[-1].on_arguments = self.frames[-1].on_arguments or self._names_arguments(seg.text)
            self.frames[-1].condition.append((seg.op, self._condition(seg.text)))
            self.frames[-1].by_default.append((seg.op, self._condition(seg.text, defaults=True)))
            return None
        return words

    def _enter_branch(self, frame: _Frame) -> None:
        frame.undecided = frame.undecided or frame.state is None
        if frame.state is not False:
            frame.branches.append({})

    def _close_if(self, frame: _Frame) -> None:
        """After `fi`: a variable that undecided branches may leave with different values is not known."""
        if not frame.undecided:
            return
        for name, before in frame.before.items():
            # a branch that ends the script leaves nothing after `fi`: only the others reach the commands below it
            values = {b.get(name, before) for k, b in enumerate(frame.branches) if k not in frame.exited}
            if not frame.has_else:
                values.add(before)
            if len(values) == 1 and None not in values:  # the one value the branches going on give it
                value = values.pop()
                assert value is not None
                if name in frame.arrays:
                    self._restore(name, value)
                else:
                    self.scope[name] = value
            elif len(values) > 1 and not self._take_default(frame, name, before) and not self._appended(frame, name):
                if not self._same_program(name, values, before):
                    self.unknown.add(name)

    def _restore(self, name: str, value: str) -> None:
        self.arrays[name] = value.split("\0") if value else []
        self.scope[name] = self.arrays[name][0] if self.arrays[name] else ""

    def _same_program(self, name: str, values: set[str | None], before: str | None) -> bool:
        """A variable every branch leaves naming one program, vLLM's CLI or a Python interpreter, either as PATH finds
        it (`VLLM_EXEC="$(command -v vllm)"`) or by a path to it (`./.venv/bin/vllm`): the command it heads runs that
        program whichever branch ran (the value before the `if` is kept, a path or the name)."""
        words = [v for v in values if v is not None]
        if name in self.unknown or len(words) != len(values) or not all(words):
            return False
        if name in self.arrays:  # `VLLM_CMD=(uv run vllm)` / `(vllm)`: the program after its launcher (`uv run`)
            heads = [strip_prefixes(v.split("\0"))[0] for v in words]
            if any(len(h) != 1 for h in heads):
                return False
            programs = [h[0] for h in heads]
        elif any(re.search(r"[\s\0$`]", v) for v in words):
            return False
        else:
            programs = words
        bases = {posixpath.basename(v) for v in programs}
        if len(bases) != 1 or any(re.search(r"[\s$`]", b) for b in bases) or not _PROGRAM.match(bases.pop()):
            return False
        if name in self.arrays:
            plain = [v for v in words if "\0" not in v]  # a value that is the program alone, if a branch gives one
            self._restore(name, sorted(plain or words)[0])
            return True
        self.scope[name] = before if before is not None else sorted(words)[0]
        return True

    def _appended(self, frame: _Frame, name: str) -> bool:
        """An array the undecided branches only append to (`if [ -n "$TASK" ]; then ARGS+=(--runner "$TASK"); fi`):
        the items it had before the `if` stay known, the ones a branch may add one unknown word after them."""
        before = frame.before.get(name)
        if name not in frame.arrays or before is None or name in frame.unknown_before or name in self.unknown:
            return False
        prefix = before.split("\0") if before else []
        values = [b.get(name, before) for b in frame.branches]
        if any(v is None or (v.split("\0") if v else [])[: len(prefix)] != prefix for v in values):
            return False
        marker = f"${{{name}[@]}}"
        self.arrays[name] = [*prefix, *([] if prefix[-1:] == [marker] else [marker])]
        self.scope[name] = self.arrays[name][0]
        return True

    def _take_default(self, frame: _Frame, name: str, before: str | None) -> bool:
        """Give `name` the value of the branch the script takes without arguments (`case "${1:-nvfp4}"`): a value
        for the servers read (each branch's own `vllm serve` is still read as a mode), not for later conditions."""
        if not frame.default_known:
            return False
        branch = frame.branches[frame.default_branch] if frame.default_branch is not None else {}
        value = branch.get(name, before)
        if name not in branch and name in frame.unknown_before:
            return False
        if value is not None and "$" in value and name not in frame.arrays:  # an array's items keep unknown parts
            return False
        if value is None:
            self.scope.pop(name, None)
            self.arrays.pop(name, None)
        elif name in frame.arrays:
            self.arrays[name] = value.split("\0") if value else []
            self.scope[name] = self.arrays[name][0] if self.arrays[name] else ""
        else:
            self.scope[name] = value
        self.unknown.discard(name)
        self.soft.add(name)
        return True

    def _open_branch(self, head: str) -> None:
        if head == "if":
            self.frames.append(self._new_frame())
            return
        if not self.frames:
            self.frames.append(self._new_frame())
        frame = self.frames[-1]
        frame.in_condition, frame.condition, frame.by_default = True, [], []

    def _close_condition(self) -> None:
        frame = self.frames[-1]
        frame.in_condition = False
        value = combine(frame.condition)
        if frame.taken is True:
            frame.state = False
        else:
            frame.state = value if frame.taken is False else (None if value is not False else False)
        frame.taken = either(frame.taken, frame.state)
        by_default = combine(frame.by_default)
        self._default_branch(frame, False if frame.default_taken is True else by_default)
        self._enter_branch(frame)

    def _default_branch(self, frame: _Frame, taken: bool | None) -> None:
        """Note whether the branch about to be read is the one the script takes when run without arguments."""
        frame.default_known = frame.default_known and taken is not None
        if taken and frame.state is not False:
            frame.default_branch = len(frame.branches)
        frame.default_taken = either(frame.default_taken, taken)
