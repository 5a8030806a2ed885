"""Ansible playbooks (pure): the shell commands their tasks run, read as a script's command lines.

A playbook is a YAML list of plays (`hosts:` with `tasks:`, `pre_tasks:`, `post_tasks:`, `handlers:`); a task runs a
command line with the shell, command or raw module (`shell: docker exec ray-head bash -lc "..."`, or `cmd:` in a
mapping), its tasks nested in `block:` / `rescue:` / `always:` too (docs.ansible.com, playbooks_intro and the
ansible.builtin.shell / command / raw modules). Ansible renders `{{ expression }}` with Jinja2 before the module
runs: a play's `vars:` whose values are literals (or render to literals) fill `{{ name }}`; anything else - a filter,
an inventory group, a fact, a variable set in a file not read here (vars_files, group_vars) - stays a shell variable
`${name}` named after its first identifier, which the command reading reports unresolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from recommender.check.found import Found

CommandReader = Callable[[str, str], list[Found]]  # (command line text, source) -> servers
_PLAY_TASKS = ("pre_tasks", "tasks", "post_tasks", "handlers")
_MODULES = ("shell", "command", "raw")
_NESTED = ("block", "rescue", "always")
_JINJA = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_MAX_RENDER = 10  # `{{ a }}` -> `{{ b }}` -> ...: nesting deeper than this is not rendered (a loop of vars)
# one text's rendering fills at most this many references and grows to at most this many characters: a hostile play
# whose variables each name the next eight times would otherwise take 8^10 substitutions within the nesting depth
_MAX_REFERENCES = 2_000
_MAX_CHARS = 1_000_000


def is_playbook(doc: Any) -> bool:
    """A YAML list of plays: mappings, one at least with `hosts` and tasks."""
    if not isinstance(doc, list) or not doc or not all(isinstance(play, dict) for play in doc):
        return False
    return any("hosts" in play and any(k in play for k in _PLAY_TASKS) for play in doc)


def read_playbook(plays: list[dict[str, Any]], source: str, read: CommandReader) -> list[Found]:
    """The servers the shell / command / raw tasks of a playbook's plays start (resource `task/NAME`)."""
    out: list[Found] = []
    for play in plays:
        given = play.get("vars")
        variables: dict[str, Any] = {str(k): v for k, v in given.items()} if isinstance(given, dict) else {}
        for task in _tasks([t for k in _PLAY_TASKS for t in _as_list(play.get(k))]):
            line = _command_line(task)
            if line is None:
                continue
            name = str(task.get("name") or "command")
            out += [replace(f, resource=f"task/{name}") for f in read(render(line, variables), source)]
    return out


def _tasks(items: list[Any]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for task in items:
        if not isinstance(task, dict):
            continue
        nested = [t for k in _NESTED for t in _as_list(task.get(k))]
        out += _tasks(nested) if nested else [task]
    return out


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _command_line(task: Mapping[str, Any]) -> str | None:
    """The command line of a shell / command / raw task (the module's free-form text, or its `cmd`)."""
    for key, value in task.items():
        if str(key).rsplit(".", 1)[-1] not in _MODULES:  # `shell` or `ansible.builtin.shell`
            continue
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and isinstance(value.get("cmd"), str):
            return str(value["cmd"])
    return None


def render(text: str, variables: Mapping[str, Any]) -> str:
    """`{{ name }}` with a play variable whose value is a literal (rendered in turn); other expressions `${first
    identifier}`, left for the reading to report unresolved. Past the reference or size budget the rest is left
    unresolved the same way."""
    budget = [_MAX_REFERENCES]
    return _render(text, variables, 0, budget)


def _render(text: str, variables: Mapping[str, Any], depth: int, budget: list[int]) -> str:
    def one(match: re.Match[str]) -> str:
        expr = match.group(1)
        value = variables.get(expr) if _IDENTIFIER.fullmatch(expr) else None
        budget[0] -= 1
        literal = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        if literal and depth < _MAX_RENDER and budget[0] > 0 and len(str(value)) <= _MAX_CHARS:
            done = _render(str(value), variables, depth + 1, budget)
            if ("${" not in done or "${" in str(value)) and len(done) <= _MAX_CHARS:
                return done
        first = _IDENTIFIER.search(expr)
        return "${" + (first.group(0) if first else "expression") + "}"

    return _JINJA.sub(one, text)
