"""The server a Dockerfile / Containerfile image starts (pure): its final stage's ENTRYPOINT and CMD as Docker
combines them (exec form as written, shell form through `/bin/sh -c`, CMD ignored after a shell-form ENTRYPOINT),
ENV and ARG defaults for the shell form, and the entrypoint inherited from a vLLM base image (`FROM
vllm/vllm-openai`). A vLLM entrypoint without a model takes its arguments from `docker run`: `"$@"`, unresolved.
An entrypoint that is a script the Dockerfile COPYs from its build context (`COPY start.sh ./start.sh` then
`ENTRYPOINT ["./start.sh"]`) runs that script with CMD as its arguments, when the context can be read.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from recommender.check.commands import Hit, find_in_script, find_in_words, not_evaluable
from recommender.check.found import Found
from recommender.check.images import cpu_build, image_tag, is_vllm_image
from recommender.errors import InputError
from recommender.safe_load import UntrustedDocumentError, load_json

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$", re.S)
RUN_ARGS = '"$@"'  # the arguments `docker run IMAGE ...` appends
ContextReader = Callable[[str], str | None]  # a file of the build context, by a path relative to it
_SHELL_NAMES = ("sh", "bash", "dash", "ash", "zsh")


@dataclass
class _Stage:
    base: str
    entrypoint: list[str] | None = None
    cmd: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = ""  # WORKDIR as set in the Dockerfile ("": the base image's, not known here)
    copies: dict[str, str] = field(default_factory=dict)  # path in the image -> source in the build context


def looks_like_dockerfile(text: str) -> bool:
    first = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    return bool(re.match(r"^\s*(FROM|ARG)\s+\S", first, re.I)) and bool(re.search(r"^\s*FROM\s+\S", text, re.M | re.I))


def _instructions(text: str) -> list[tuple[str, str]]:
    joined = re.sub(r"\\[ \t]*\r?\n", " ", text)
    out = []
    for line in joined.splitlines():
        if line.lstrip().startswith("#"):
            continue
        m = _INSTRUCTION.match(line)
        if m:
            out.append((m.group(1).upper(), m.group(2).strip()))
    return out


def _form(value: str) -> list[str]:
    """Exec form (a JSON list, taken as written) or shell form (run by /bin/sh -c)."""
    if value.startswith("["):
        try:
            words = load_json(value, max_depth=8)  # an exec form is one flat list; deeper is refused, not recursed
        except UntrustedDocumentError as exc:
            if not exc.syntax:
                raise InputError(f"an exec-form instruction {exc}") from None
            words = None  # not JSON: Docker runs it in the shell form
        if isinstance(words, list) and all(isinstance(w, str) for w in words):
            return words
    return ["/bin/sh", "-c", value]


def _env_pairs(value: str) -> dict[str, str]:
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    if words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}  # legacy `ENV KEY value`
    return dict(w.split("=", 1) for w in words if "=" in w)


_BUILD_VARIABLE = re.compile(r"\$\{(\w+)(?::([-+])([^}]*))?\}|\$(\w+)")


def _substitute(value: str, scope: dict[str, str]) -> str:
    """Docker's build-time substitution in an ENV value: `${NAME}`, `$NAME`, `${NAME:-word}`, `${NAME:+word}`
    from the ARGs and ENVs above it (`ARG MODEL_NAME=m` then `ENV MODEL_NAME=${MODEL_NAME}`); unknown names stay."""

    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(4)
        known = scope.get(name)
        if m.group(2) == "-":
            return known if known else m.group(3)
        if m.group(2) == "+":
            return m.group(3) if known else ""
        return known if known is not None else m.group(0)

    return _BUILD_VARIABLE.sub(one, value)


def final_stage(text: str, build_args: Mapping[str, str] | None = None) -> _Stage | None:
    """The image's final stage: its base, ENTRYPOINT, CMD and ENV (ARG defaults under them). `build_args` are the
    `--build-arg`s (a compose service's `build.args`): they override ARG defaults, and an ARG before FROM names the
    base (`ARG BASE_IMAGE` then `FROM ${BASE_IMAGE}`)."""
    stages: dict[str, _Stage] = {}
    args: dict[str, str] = {}
    given = dict(build_args or {})
    stage: _Stage | None = None
    for op, value in _instructions(text):
        if op == "FROM":
            words = _substitute(value, args).split()
            base = next((w for w in words if not w.startswith("--")), "")
            parent = stages.get(base.lower())
            stage = (
                _Stage(base, parent.entrypoint, parent.cmd, dict(parent.env), parent.workdir, dict(parent.copies))
                if parent
                else _Stage(base)
            )
            if len(words) >= 3 and words[-2].upper() == "AS":
                stages[words[-1].lower()] = stage
        elif op == "ARG":
            name, _, default = value.partition("=")
            args[name.strip()] = given.get(name.strip(), default.strip().strip("'\""))
        elif stage is None:
            continue
        elif op == "ENV":
            scope = {**args, **stage.env}
            stage.env.update({k: _substitute(v, scope) for k, v in _env_pairs(value).items()})
        elif op == "ENTRYPOINT":
            stage.entrypoint, stage.cmd = _form(value), None  # a new ENTRYPOINT resets the inherited CMD
        elif op == "CMD":
            stage.cmd = _form(value)
        elif op == "WORKDIR":
            stage.workdir = _in_image(_substitute(value.strip().strip("'\""), {**args, **stage.env}), stage.workdir)
        elif op in ("COPY", "ADD"):
            _copy(stage, value, {**args, **stage.env})
    if stage is not None:
        stage.env = {**args, **stage.env}
    return stage


def _in_image(path: str, workdir: str) -> str:
    """An image path as Docker resolves it: relative paths against the WORKDIR (`.` stands for a WORKDIR this
    Dockerfile does not set: the same unknown folder for COPY and ENTRYPOINT)."""
    return posixpath.normpath(posixpath.join(workdir or "/.", path))


def _copy(stage: _Stage, value: str, scope: dict[str, str]) -> None:
    """Record `COPY [--chmod=..] SRC... DEST` (shell or JSON form) from the build context: each source's path in the
    image (DEST, or DEST/NAME when DEST is a folder: ends with `/`, is `.`, or takes several sources). `--from=`
    copies from another stage or image, not from the context: not recorded; nor are globs and URLs."""
    words = _form(value) if value.startswith("[") else value.split()
    if words[:2] == ["/bin/sh", "-c"]:
        words = value.split()
    if any(w.startswith("--from") for w in words):
        return
    paths = [_substitute(w, scope) for w in words if not w.startswith("--")]
    if len(paths) < 2:
        return
    *sources, dest = paths
    folder = dest.endswith("/") or dest in (".", "./") or len(sources) > 1
    for src in sources:
        if any(c in src for c in "*?[") or "://" in src:
            continue
        name = posixpath.basename(src.rstrip("/"))
        stage.copies[_in_image(posixpath.join(dest, name) if folder else dest, stage.workdir)] = src


def script_run(stage: _Stage, words: list[str]) -> tuple[str, list[str]] | None:
    """(the build-context path of the script the container runs, its $0 $1 ...) when the container's command
    (ENTRYPOINT + CMD as Docker joins them) starts with, or runs a shell on, a file the Dockerfile COPYs in."""
    at = 1 if words and posixpath.basename(words[0]) in _SHELL_NAMES and len(words) > 1 else 0
    if at >= len(words) or words[at].startswith("-") or not words[at]:
        return None
    src = stage.copies.get(_in_image(words[at], stage.workdir))
    return (src, words[at:]) if src else None


def run_copied_script(stage: _Stage, words: list[str], read: ContextReader | None) -> list[Hit]:
    """The servers the copied script the container runs starts, reading it from the build context."""
    run = script_run(stage, words) if read is not None else None
    text = read(run[0]) if run is not None and read is not None else None
    if run is None or text is None:
        return []
    return [h for h in find_in_script(text, stage.env, run[1]) if isinstance(h, Hit)]


# `uv sync` installs the versions its lockfile records (docs.astral.sh/uv/concepts/projects/sync: "uv sync ... from
# the lockfile"; --frozen / --locked use uv.lock as it is); a package's entry is `name = "vllm"` then its version
_UV_SYNC = re.compile(r"^\s*RUN\b.*\buv\s+sync\b", re.M | re.I)
_UV_LOCKED_VLLM = re.compile(r'^name = "vllm"\s*\nversion = "([0-9][^"]*)"', re.M)


def locked_release(text: str, stage: _Stage, read: ContextReader | None) -> str | None:
    """The vLLM release an image installs with `uv sync` from the uv.lock it COPYs from the build context."""
    if read is None or not _UV_SYNC.search(re.sub(r"\\[ \t]*\r?\n", " ", text)):
        return None
    lock = next((src for dest, src in stage.copies.items() if posixpath.basename(dest) == "uv.lock"), None)
    locked = read(lock) if lock else None
    m = _UV_LOCKED_VLLM.search(locked or "")
    return m.group(1) if m else None


def _has_model(argv: tuple[str, ...], serve: bool) -> bool:
    """A model the command names, or a `--config` file that may name it (vLLM reads `model` from it, and refuses
    to start without one: FlexibleArgumentParser.load_config_file), not one `docker run` must add."""
    named = any(w in ("--model", "--config") or w.startswith("--model=") for w in argv)
    return named or (serve and len(argv) > 2 and not argv[2].startswith("-"))


def read_dockerfile(text: str, source: str, context: ContextReader | None = None) -> list[Found]:
    """The server the image runs by default (none when its entrypoint is a shell or another program, unless it is
    a script COPY'd from the build context, read with `context`: the Dockerfile's folder)."""
    try:
        stage = final_stage(text)
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    if stage is None:
        return []
    inherited = stage.entrypoint is None and is_vllm_image(stage.base)
    if stage.entrypoint is not None and stage.entrypoint[:2] == ["/bin/sh", "-c"]:
        words = stage.entrypoint  # a shell-form ENTRYPOINT ignores CMD and `docker run` arguments
    else:
        words = [*(stage.entrypoint or []), *(stage.cmd or [])]
    hits = find_in_words(words, stage.env, (), stage.base if inherited else None)
    if not hits:
        hits = run_copied_script(stage, words, context)
    locked = locked_release(text, stage, context) if hits else None
    out = []
    for hit in hits:
        argv, unresolved = hit.argv, hit.unresolved
        # the model comes with `docker run IMAGE ...` when its arguments follow the server: an ENTRYPOINT (the
        # image's own or vLLM's `vllm serve`) and no CMD; they replace a CMD (docs.docker.com, "Understand how CMD and
        # ENTRYPOINT interact"), so a CMD that names no model runs as written, on vLLM's default model
        if not _has_model(argv, hit.serve) and not stage.cmd:
            argv = (*argv[:2], RUN_ARGS, *argv[2:]) if hit.serve else (*argv, "--model", RUN_ARGS)
            unresolved = (*unresolved, RUN_ARGS)
        out.append(
            Found(
                source,
                "CMD" if stage.entrypoint is None else "ENTRYPOINT",
                argv,
                image_tag=locked or (image_tag(stage.base) if is_vllm_image(stage.base) else None),
                serve_form=hit.serve,
                unresolved=unresolved,
                env=dict(hit.env),
                container=stage.base,
                not_evaluable=hit.platform or not_evaluable(argv, hit.env, stage.base) or cpu_build(text),
                problems=hit.problems,
            )
        )
    return out
