"""`docker compose run SERVICE [COMMAND...]` in a script (pure): the service of the compose file the command reads,
run once with the command line's overrides (docs.docker.com/reference/cli/docker/compose/run: COMMAND replaces the
service's command, `--entrypoint` its entrypoint, `-e` adds to its environment). The compose file is the one
`-f`/`--file` names, else compose.yaml / compose.yml / docker-compose.yaml / docker-compose.yml in the folder the
script runs in (taken to be its own), read through the script's origin (its repository's files only)."""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Any

from recommender.check import compose_interpolation, shell
from recommender.check.found import Found
from recommender.errors import InputError
from recommender.safe_load import UntrustedDocumentError, load_yaml

DEFAULT_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
# global options of `docker compose` that take a value, and `run`'s (docs.docker.com/reference/cli/docker/compose)
_GLOBAL_VALUED = {"-f", "--file", "-p", "--project-name", "--project-directory", "--env-file", "--profile",
                  "--ansi", "--progress", "--parallel"}  # fmt: skip
_RUN_VALUED = {"-e", "--env", "--entrypoint", "--name", "-v", "--volume", "-p", "--publish", "-u", "--user", "-w",
               "--workdir", "-l", "--label", "--cap-add", "--cap-drop", "--env-from-file", "--pull"}  # fmt: skip


def is_compose_run(words: tuple[str, ...]) -> bool:
    """`docker compose [options] run ...` or `docker-compose [options] run ...`."""
    rest = _after_compose(words)
    return rest is not None and _subcommand(rest)[0] == "run"


def _after_compose(words: tuple[str, ...]) -> list[str] | None:
    head = words[0].rsplit("/", 1)[-1] if words else ""
    if head == "docker-compose":
        return list(words[1:])
    if head in ("docker", "podman") and len(words) > 1 and words[1] == "compose":
        return list(words[2:])
    return None


def _subcommand(rest: list[str]) -> tuple[str, dict[str, list[str]], list[str]]:
    """(the subcommand, the global options with values, the words after the subcommand)."""
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        name, eq, value = rest[i].partition("=")
        if name in _GLOBAL_VALUED and not eq and i + 1 < len(rest):
            value, i = rest[i + 1], i + 1
        options.setdefault(name, []).append(value)
        i += 1
    return (rest[i] if i < len(rest) else ""), options, rest[i + 1 :]


def read_compose_run(cmd: shell.Command, source: str, origin: shell.Origin | None) -> list[Found]:
    """The servers `docker compose run SERVICE [COMMAND...]` starts (none when its compose file is not read here)."""
    from recommender.check import compose_files  # imported here: compose_files reads scripts with commands.py

    rest = _after_compose(cmd.words)
    if rest is None or origin is None:
        return []
    _, options, run = _subcommand(rest)
    here = posixpath.dirname(origin.path)
    folder = posixpath.normpath(posixpath.join(here, (options.get("--project-directory") or ["."])[-1]))
    files = options.get("-f", []) + options.get("--file", [])
    paths = [posixpath.normpath(posixpath.join(here, f)) for f in files] or [
        posixpath.join(folder, name) for name in DEFAULT_FILES
    ]
    path, text = next(((p, t) for p in paths if (t := origin.read(p)) is not None), ("", None))
    if text is None:
        return []
    try:
        doc = load_yaml(text)
    except UntrustedDocumentError as exc:
        raise InputError(f"{source}: {path}: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("services"), dict):
        return []
    service, overrides = _run_overrides(run)
    svc = doc["services"].get(service)
    if not isinstance(svc, dict):
        return []
    extra = overrides.pop("environment", [])
    svc = {**svc, **overrides}
    if extra:  # `-e K=V` over the service's own environment (`-e K` alone passes the shell's K)
        environment = compose_files.service_environment(svc)
        for item in extra:
            key, eq, value = str(item).partition("=")
            environment[key] = value if eq else str(cmd.env.get(key, ""))
        svc["environment"] = environment
    dotenv_text = origin.read(posixpath.join(posixpath.dirname(path), ".env"))
    env = {**(compose_interpolation.dotenv_values(dotenv_text) if dotenv_text is not None else {}), **cmd.env}

    def beside(relative: str) -> str | None:
        return origin.read(posixpath.normpath(posixpath.join(posixpath.dirname(path), relative)))

    label = f"{source} [docker compose run {service}]"
    found = compose_files.read_compose({**doc, "services": {service: svc}}, label, env, beside)
    # the words the shell left unknown stay unknown (a $FLAGS the script sets in a branch not decided here)
    return [replace(f, unresolved=tuple(dict.fromkeys((*f.unresolved, *cmd.unresolved)))) for f in found]


def _literal(word: str) -> str:
    """A word of the command line, kept as the shell gave it: Compose interpolates its file, not the words after
    the service (`$` written `$$`, which the compose reader turns back into `$`)."""
    return word.replace("$", "$$")


def _run_overrides(run: list[str]) -> tuple[str, dict[str, Any]]:
    """(SERVICE, the service's fields the command line replaces) from the words after `run`."""
    i, environment, overrides = 0, [], {}
    while i < len(run) and run[i].startswith("-"):
        name, eq, value = run[i].partition("=")
        if name in _RUN_VALUED and not eq and i + 1 < len(run):
            value, i = run[i + 1], i + 1
        if name in ("-e", "--env"):
            environment.append(value)
        elif name == "--entrypoint":
            overrides["entrypoint"] = [_literal(value)]
        i += 1
    service = run[i] if i < len(run) else ""
    command = [_literal(w) for w in run[i + 1 :]]
    if command:
        overrides["command"] = command
    if environment:
        overrides["environment"] = environment
    return service, overrides
