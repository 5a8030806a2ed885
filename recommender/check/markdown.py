"""Servers in a README or docs page: its code blocks, read as the reader would run or apply them (pure).

Fenced blocks (``` or ~~~), also indented under a list item or an admonition (`??? Commands`), are dedented.
Shell blocks (bash, sh, shell, console, zsh, none) are read as scripts, a `console` block's `$ ` prompts marking its
commands; YAML blocks go to the manifest readers (Kubernetes, compose, dstack, SkyPilot, Helm values) through
`read_yaml`, and so do here-documents fed to `kubectl apply -f -`; other languages are skipped. Each block is read
on its own (an `export` in one block does not reach the next: READMEs list alternatives), and `<placeholders>`
stay unresolved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from recommender.check import commands
from recommender.check.found import Found
from recommender.errors import InputError

_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*([\w+-]*)[^\n]*$")
_SHELL = {"", "bash", "sh", "shell", "console", "zsh", "terminal", "text", "sh-session", "shell-session", "plain"}
_YAML = {"yaml", "yml"}

YamlReader = Callable[[str, str], list[Found]]  # (YAML text, source) -> servers


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(language, dedented body) of every fenced block, in order."""
    lines = text.splitlines()
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1).expandtabs()), m.group(2), m.group(3).lower()
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", lines[i]):
            line = lines[i].expandtabs()
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            i += 1
        out.append((lang, "\n".join(body) + "\n"))
        i += 1
    return out


def _console_commands(body: str) -> str:
    """A console block's commands: the `$ `/`# ` prompt lines and their continuations (the rest is output)."""
    lines = body.splitlines()
    if not any(re.match(r"^\s*[$] ", ln) for ln in lines):
        return body
    out: list[str] = []
    continued = False
    for line in lines:
        m = re.match(r"^\s*[$] (.*)$", line)
        if m:
            out.append(m.group(1))
        elif continued:
            out.append(line)
        continued = bool(out) and out[-1].rstrip().endswith("\\") and (m is not None or continued)
    return "\n".join(out) + "\n"


def _looks_like_yaml(body: str) -> bool:
    first = next((ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    return bool(re.match(r"^(apiVersion|kind|services|type|resources|envs|run|version|name|image)\s*:", first))


def _applies_heredoc(body: str) -> bool:
    """A block, whatever its label, that is a shell command feeding a here-document to kubectl (`kubectl apply -f -
    <<EOF`, `cat <<EOF | kubectl apply -f -`): docs label such blocks `yaml` for the manifest inside."""
    first = next((ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    return bool(re.search(r"<<-?\s*['\"]?\w+", first)) and "kubectl" in first


def read_markdown(text: str, source: str, read_yaml: YamlReader) -> list[Found]:
    """The servers of every shell, console and YAML block, numbered across the page."""
    out: list[Found] = []
    for lang, body in code_blocks(text):
        if lang in _YAML and _applies_heredoc(body):
            out += commands.read_command(body, source, read_manifest=read_yaml)
        elif lang in _YAML or (lang in ("", "text", "plain") and _looks_like_yaml(body)):
            try:
                out += read_yaml(body, source)
            except InputError:
                continue  # a configuration fragment, not a deployment
        elif lang in _SHELL:
            script = _console_commands(body) if lang in ("console", "sh-session", "shell-session", "") else body
            out += commands.read_command(script, source, read_manifest=read_yaml)
    return renumbered(out)


def renumbered(found: list[Found]) -> list[Found]:
    """`command #1`, `docker run #2`, ... across a page (each block was numbered on its own)."""
    kinds = ("command", "docker run")
    plain = [replace(f, resource=re.sub(r" #\d+$", "", f.resource)) for f in found]
    numbered = [f for f in plain if f.resource in kinds]
    if len(numbered) < 2:
        return plain
    counter = iter(range(1, len(numbered) + 1))
    return [replace(f, resource=f"{f.resource} #{next(counter)}") if f.resource in kinds else f for f in plain]
