"""Read `check` inputs (files, directories, stdin, a command string) into Found records (I/O edge)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from recommender.check import readers
from recommender.check.found import Found
from recommender.errors import InputError

SUFFIXES = {".yaml", ".yml", ".json", ".service", ".sh", ".txt", ".cmd"}


def _yaml_docs(text: str, source: str) -> list[Any]:
    import yaml

    try:
        return [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{source}: malformed YAML{where}") from exc


def read_text(text: str, source: str, suffix: str = "") -> list[Found]:
    """Found records in one document, whatever its kind."""
    if suffix == ".service" or "[Service]" in text:
        return readers.read_systemd(text, source)
    if suffix in (".sh", ".txt", ".cmd") or (
        suffix == "" and text.lstrip().startswith(("vllm", "exec", "#!", "python"))
    ):
        return readers.read_command(text, source)
    docs = _yaml_docs(text, source)
    if not docs:
        return []
    maps = [d for d in docs if isinstance(d, dict)]
    if len(maps) != len(docs):
        if isinstance(docs[0], str) and len(docs) == 1:
            return readers.read_command(text, source)
        raise InputError(f"{source}: expected YAML mappings (Kubernetes objects, Helm values, compose, a plan)")
    first = maps[0]
    if first.get("kind") == "Plan" and str(first.get("apiVersion", "")).startswith("vllm-plan/"):
        return readers.read_plan(first, source)
    if all("kind" in d and "apiVersion" in d for d in maps):
        return readers.read_kubernetes(maps, source)
    if "servingEngineSpec" in first:
        return readers.read_helm(first, source)
    if "services" in first:
        return readers.read_compose(first, source)
    raise InputError(
        f"{source}: not a Kubernetes manifest, Helm values, compose file, systemd unit, plan or vllm serve command"
    )


def load_inputs(inputs: tuple[str, ...], stdin_text: str | None = None) -> tuple[list[Found], list[str]]:
    """All servers found, and notes about inputs skipped inside directories."""
    found: list[Found] = []
    notes: list[str] = []
    if not inputs:
        raise InputError("give at least one input: a vllm serve command, a file, a directory, or - for stdin")
    for item in inputs:
        path = Path(item)
        if item == "-":
            text = stdin_text if stdin_text is not None else sys.stdin.read()
            got = read_text(text, "<stdin>")
            if not got:
                raise InputError("<stdin>: no vLLM server found")
            found += got
        elif path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
            before = len(found)
            for f in files:
                try:
                    got = read_text(f.read_text(encoding="utf-8"), str(f), f.suffix)
                except InputError as exc:
                    if f.suffix in (".yaml", ".yml", ".json") and "malformed" in str(exc):
                        raise
                    notes.append(f"skipped {f}: {exc}")
                    continue
                if got:
                    found += got
                else:
                    notes.append(f"skipped {f}: no vLLM server in it")
            if len(found) == before:
                raise InputError(f"{item}: no vLLM server found in {len(files)} file(s)")
        elif path.is_file():
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise InputError(f"cannot read {item}: {exc.strerror}") from exc
            got = read_text(text, item, path.suffix)
            if not got:
                raise InputError(f"{item}: no vLLM server found (no container or command runs `vllm serve`)")
            found += got
        elif ("vllm" in item and "serve" in item) or item.startswith("serve "):
            got = readers.read_command(item if "vllm" in item else "vllm " + item, "<argument>")
            if not got:
                raise InputError("the command does not run `vllm serve`")
            found += got
        else:
            raise InputError(f"{item}: no such file or directory (and not a `vllm serve ...` command)")
    return found, notes
