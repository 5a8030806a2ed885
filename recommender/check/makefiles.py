"""Makefiles (pure): each rule's recipe as the shell runs it, after make has expanded it. What GNU make does, from
its manual (https://www.gnu.org/software/make/manual/make.html):

- a recipe line starts with a tab and follows its rule's `targets: prerequisites` line (or comes after `;` on it);
  each line runs in a shell of its own ("Recipe Execution"); a leading `@`, `-` or `+` is make's, not the shell's;
  a backslash-newline inside a recipe reaches the shell as it is, less the tab that starts the next line
  ("Splitting Recipe Lines");
- before that, make expands the line: `$(VAR)` / `${VAR}` / `$V` to the variable's value, `$$` to `$` ("Using
  Variables in Recipes"); a variable the Makefile does not define comes from the environment or make's own command
  line (`make serve MODEL=...`), so it is unresolved here; `$(shell CMD)` is the output of CMD (read as the shell's
  `$(CMD)`), another function's value is not worked out (unresolved, named as written); `$@` is the target;
- `VAR = v`, `VAR := v`, `VAR ::= v`, `VAR ?= v` (only when not yet defined), `VAR += v` (appended after a space),
  `override` and `export` before them; a backslash-newline outside a recipe joins lines with one space; `#` starts a
  comment there; an exported variable is in the recipe shell's environment ("Communicating Variables to a
  Sub-make").

`define NAME ... endef` is a variable of several lines, `$(call NAME,a,b)` its value with `$(1)` a and `$(2)` b
("The call Function"), each of its lines a recipe line of its own ("Defining Canned Recipes"). Conditional
directives (`ifeq ... endif`) are not decided: the lines of every branch are read. `include`d files are not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from recommender.check.found import Found

MAKEFILE_NAME = re.compile(r"^(GNUmakefile|[Mm]akefile)$|\.(mk|mak)$")
_ASSIGN = re.compile(r"^((?:(?:export|override)\s+)*)([A-Za-z_][A-Za-z0-9_.-]*)\s*(\?=|::=|:=|\+=|!=|=)\s*(.*)$")
_EXPORT = re.compile(r"^export\s+([A-Za-z_][A-Za-z0-9_.\s-]*)$")
_RULE = re.compile(r"^([^:=#\t][^:=#]*?)\s*::?(?!=)\s*([^;=]*?)\s*(?:;(.*))?$")
_DIRECTIVE = re.compile(r"^(ifeq|ifneq|ifdef|ifndef|else|endif|include|-include|sinclude|vpath|unexport)\b")
_MAX_DEPTH = 16  # $(call)s nested deeper than this (a function calling itself) are not followed
# a variable whose value names itself, directly or through others, make refuses ("Recursive variable 'A' references
# itself (eventually)", expand.c recursively_expand_for_file): its reference is left unresolved as written; a
# $(call)ed function may recurse in make (func_call lifts the flag), so the depth limit bounds it
# what the expansions of one Makefile may do, all its texts together: references followed and characters produced.
# A chain of variables each naming the next four times, or $(call)s doubling their argument at each level, would
# take 4^16 steps or build text of 2^16 times its size within the depth limit (as make itself would: such a Makefile
# never finishes); past this work, every reference left is unresolved as written. Real Makefiles expand a few
# hundred references (ten per rule at most)
_MAX_REFERENCES = 20_000
_MAX_CHARACTERS = 1_000_000


class _Work:
    """What the expansions of one Makefile may still do (shared by all its texts and their nested expansions)."""

    def __init__(self) -> None:
        self.left = _MAX_REFERENCES
        self.characters = _MAX_CHARACTERS
        self.expanding: set[str] = set()  # the variables whose value is being expanded (make's `expanding` flag)

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0 and self.characters >= 0


ScriptReader = Callable[[str, str, Mapping[str, str]], list[Found]]


def is_makefile(name: str) -> bool:
    return bool(MAKEFILE_NAME.search(name))


def read_makefile(text: str, source: str, read_script: ScriptReader) -> list[Found]:
    """The servers the recipes of every rule start, each named `make TARGET`; `read_script(text, source, env)`
    reads one recipe line as a shell script, with the exported variables as its environment."""
    variables: dict[str, str] = {"MAKE": "make", "CURDIR": "."}  # make runs in the Makefile's folder
    exported: set[str] = set()
    work = _Work()
    rules = _parse(_logical_lines(text), variables, exported, work)
    env = {name: expand(variables[name], variables, work=work) for name in sorted(exported) if name in variables}
    found: list[Found] = []
    for target, lines in rules:
        for line in lines:
            for script in _recipe_lines(expand(line, variables, target, work=work)):
                found += [replace(f, resource=f"make {target}") for f in read_script(script, source, env)]
    return found


def _recipe_lines(text: str) -> list[str]:
    """A recipe line after expansion: a canned recipe (`$(call NAME,...)` of a `define`) gives several, each run
    by a shell of its own ("Defining Canned Recipes"); a backslash-newline keeps a line going."""
    out: list[str] = []
    for line in text.split("\n"):
        if out and out[-1].endswith("\\"):
            out[-1] += "\n" + line.removeprefix("\t")
        else:
            out.append(_without_prefixes(line))
    return [line for line in out if line.strip()]


def _logical_lines(text: str) -> list[tuple[bool, str]]:
    """(is a recipe line, its text): a recipe line keeps its backslash-newlines, less the tab after each; another
    line is joined to the next one by one space and loses its comment."""
    out: list[tuple[bool, str]] = []
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        recipe = line.startswith("\t")
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            nxt = lines[i]
            line = line + "\n" + nxt.removeprefix("\t") if recipe else line[:-1].rstrip() + " " + nxt.lstrip()
        out.append((recipe, line[1:] if recipe else re.sub(r"(?<!\\)#.*$", "", line).rstrip()))
        i += 1
    return out


def _parse(
    lines: list[tuple[bool, str]], variables: dict[str, str], exported: set[str], work: _Work
) -> list[tuple[str, list[str]]]:
    """The rules (target, recipe lines) in order; the variables and exported names are filled in."""
    rules: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    defining: list[str] | None = None  # the body of a `define NAME` block
    for recipe, line in lines:
        stripped = line.strip()
        if defining is not None:
            if stripped == "endef":
                variables[defining[0]] = "\n".join(defining[1:])
                defining = None
            else:
                defining.append(("\t" + line) if recipe else line)
            continue
        if stripped.startswith("define ") and len(stripped.split()) > 1:
            defining = [stripped.split()[1]]
            continue
        if recipe and current is not None:
            current.append(_without_prefixes(line))
            continue
        if not stripped or _DIRECTIVE.match(stripped):
            continue
        current = _read_statement(stripped, variables, exported, rules, work)
    return rules


def _read_statement(
    line: str, variables: dict[str, str], exported: set[str], rules: list[tuple[str, list[str]]], work: _Work
) -> list[str] | None:
    """A variable assignment, an `export`, or a rule line (whose recipe then follows: returned to append to)."""
    assign = _ASSIGN.match(line)
    if assign:
        words, name, op, value = assign.groups()
        if "export" in words.split():
            exported.add(name)
        if op == "?=" and name in variables:
            return None
        if op == "+=" and name in variables:
            value = f"{variables[name]} {value}"
        elif op == "!=":  # the output of a shell command
            value = f"$(shell {value})"
        variables[name] = expand(value, variables, work=work) if op in (":=", "::=") else value
        return None
    export = _EXPORT.match(line)
    if export:
        exported.update(export.group(1).split())
        return None
    rule = _RULE.match(line)
    if not rule:
        return None
    targets = [t for t in rule.group(1).split() if not t.startswith(".") and "%" not in t]
    if not targets:  # .PHONY, .SUFFIXES, a pattern rule: no server of its own
        return None
    lines: list[str] = [_without_prefixes(rule.group(3))] if rule.group(3) and rule.group(3).strip() else []
    rules.append((targets[0], lines))  # several targets share one recipe: read it once, named by the first
    return lines


def _without_prefixes(line: str) -> str:
    """A recipe line without make's own leading `@` (do not echo), `-` (ignore errors) and `+` (run anyway)."""
    return re.sub(r"^[\s@+-]*", "", line)


def expand(text: str, variables: Mapping[str, str], target: str = "", depth: int = 0, work: _Work | None = None) -> str:
    """`text` with make's references expanded (see the module's docstring); past the work one Makefile may take
    (`work`, shared by its texts), a reference is left unresolved as written."""
    work = work or _Work()
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "$" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt in "({":
            end = _closing(text, i + 1)
            out.append(_reference(text[i + 2 : end], variables, target, depth, work))
            work.characters -= len(out[-1])
            i = end + 1
        else:  # $V: the one-letter variable V, or an automatic variable
            out.append(_reference(nxt, variables, target, depth, work))
            work.characters -= len(out[-1])
            i += 2
    return "".join(out)


def _arguments(text: str) -> list[str]:
    """A function's comma-separated arguments, a comma inside parentheses or braces not splitting them."""
    parts, level, start = [], 0, 0
    for j, ch in enumerate(text):
        level += ch in "({"
        level -= ch in ")}"
        if ch == "," and level == 0:
            parts.append(text[start:j])
            start = j + 1
    return [*parts, text[start:]]


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis or brace that closes the one at `start` (the text's end when none does)."""
    opening = text[start]
    closing = ")" if opening == "(" else "}"
    level = 0
    for j in range(start, len(text)):
        if text[j] == opening:
            level += 1
        elif text[j] == closing:
            level -= 1
            if level == 0:
                return j
    return len(text)


def _reference(name: str, variables: Mapping[str, str], target: str, depth: int, work: _Work) -> str:
    if name == "@":
        return target
    if not work.spend():
        depth = _MAX_DEPTH  # nothing more is expanded: what is left stays unresolved as written
    if name.startswith("shell "):
        return "$(" + expand(name[6:], variables, target, depth + 1, work) + ")"
    if name.startswith("call ") and depth < _MAX_DEPTH:  # $(call NAME,a,b): NAME's value with $(1)=a, $(2)=b
        called, *args = _arguments(name[5:])
        local = {**variables, **{str(n): expand(a, variables, target, depth + 1, work) for n, a in enumerate(args, 1)}}
        return expand(variables.get(called.strip(), ""), local, target, depth + 1, work)
    if name in variables and depth < _MAX_DEPTH and name not in work.expanding:
        work.expanding.add(name)
        try:
            return expand(variables[name], variables, target, depth + 1, work)
        finally:
            work.expanding.discard(name)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return "${" + name + "}"  # from the environment or make's command line: unresolved here
    return "$(" + name + ")"  # a function, automatic variable or substitution: not worked out, unresolved as written
