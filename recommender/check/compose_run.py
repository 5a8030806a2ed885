"""`docker compose run SERVICE [COMMAND...]` and `docker compose up [SERVICE...]` in a script (pure): the services of
the compose file the command reads. `run` starts one service once with the command line's overrides
(docs.docker.com/reference/cli/docker/compose/run: COMMAND replaces the service's command, `--entrypoint` its
entrypoint, `-e` adds to its environment); `up` starts the services named (and those they `depends_on`), else all
(docs.docker.com/reference/cli/docker/compose/up). The compose file is the one `-f`/`--file` names, else compose.yaml
/ compose.yml / docker-compose.yaml / docker-compose.yml in the folder the script runs in (its own, or the one its
`cd` moved to), read through the script's origin (its repository's files only).

The file is interpolated as Compose does it for that command (docs.docker.com/compose/how-tos/environment-variables/
variable-interpolation and envvars-precedence): the variables of the shell that runs it (the script's `export`s and
the command's own `TP=4 docker compose up` prefix) over the `--env-file` files (later ones win), else over the `.env`
of the project directory, over a `${VAR:-default}`'s default. The script reader does not tell exported variables
from others (a `TP=8` without `export` is taken as passed too), as for the scripts a script runs (shell.py)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
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


_UP_VALUED = {"--scale", "-t", "--timeout", "--wait-timeout", "--exit-code-from", "--attach", "--no-attach", "--pull"}


def is_compose_run(words: tuple[str, ...]) -> bool:
    """`docker compose [options] run|up ...` or `docker-compose [options] run|up ...`."""
    rest = _after_compose(words)
    return rest is not None and _subcommand(rest)[0] in ("run", "up")


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
    """The servers `docker compose run SERVICE [COMMAND...]` or `docker compose up [SERVICE...]` starts (none when
    its compose file is not read here)."""
    from recommender.check import compose_files  # imported here: compose_files reads scripts with commands.py

    rest = _after_compose(cmd.words)
    if rest is None or origin is None:
        return []
    sub, options, after = _subcommand(rest)
    here = cmd.cwd or posixpath.dirname(origin.path)  # where the command runs: after the script's `cd`, if any
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
    project = folder if options.get("--project-directory") else posixpath.dirname(path)
    env = {**_env_files(origin, here, project, options.get("--env-file", [])), **cmd.env}
    if sub == "up":
        services, label = _up_services(doc["services"], after), f"{source} [docker compose up]"
    else:
        services, label = _run_service(doc["services"], after, cmd, compose_files.service_environment)
        label = f"{source} [docker compose run {label}]"
    if not services:
        return []

    def beside(relative: str) -> str | None:
        return origin.read(posixpath.normpath(posixpath.join(posixpath.dirname(path), relative)))

    found = compose_files.read_compose({**doc, "services": services}, label, env, beside)
    # the words the shell left unknown stay unknown (a $FLAGS the script sets in a branch not decided here)
    return [
        replace(f, unresolved=tuple(dict.fromkeys((*f.unresolved, *cmd.unresolved))), through=(*cmd.through, path))
        for f in found
    ]


def _env_files(origin: shell.Origin, here: str, project: str, given: list[str]) -> dict[str, str]:
    """The variables of the `--env-file` files (relative to where the command runs; later files win), else of the
    project directory's `.env` (Compose reads it only when no --env-file is given)."""
    paths = [posixpath.normpath(posixpath.join(here, f)) for f in given] or [posixpath.join(project, ".env")]
    env: dict[str, str] = {}
    for p in paths:
        text = origin.read(p)
        env.update(compose_interpolation.dotenv_values(text) if text is not None else {})
    return env


def _up_services(services: dict[str, Any], after: list[str]) -> dict[str, Any]:
    """The services `up [options] [SERVICE...]` starts: those named and what they depend on, else all of them."""
    named, i = [], 0
    while i < len(after):
        word = after[i]
        if word.startswith("-"):
            name, eq, _ = word.partition("=")
            i += 2 if name in _UP_VALUED and not eq else 1
            continue
        named.append(word)
        i += 1
    wanted = set(named) if named else set(services)
    todo = list(wanted)
    while todo:  # depends_on: a list of names or a mapping name -> condition
        svc = services.get(todo.pop())
        deps = svc.get("depends_on") if isinstance(svc, dict) else None
        for dep in deps if isinstance(deps, (list, dict)) else ():
            if isinstance(dep, str) and dep not in wanted:
                wanted.add(dep)
                todo.append(dep)
    return {k: v for k, v in services.items() if k in wanted and isinstance(v, dict)}


def _run_service(
    services: dict[str, Any], run: list[str], cmd: shell.Command, environment_of: Callable[[Any], dict[str, str]]
) -> tuple[dict[str, Any], str]:
    """({SERVICE: the service with the command line's overrides}, SERVICE) for `run [options] SERVICE [COMMAND...]`."""
    service, overrides = _run_overrides(run)
    svc = services.get(service)
    if not isinstance(svc, dict):
        return {}, service
    extra = overrides.pop("environment", [])
    svc = {**svc, **overrides}
    if extra:  # `-e K=V` over the service's own environment (`-e K` alone passes the shell's K)
        environment = environment_of(svc)
        for item in extra:
            key, eq, value = str(item).partition("=")
            environment[key] = value if eq else str(cmd.env.get(key, ""))
        svc["environment"] = environment
    return {service: svc}, service


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
