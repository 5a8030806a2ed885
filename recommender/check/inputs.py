"""What `check` was given, read into Found records (I/O edge): files, folders, stdin, a command, a chart.

An input that cannot be read (not UTF-8, malformed YAML, a kind nothing runs vLLM in, a structural error) becomes
a problem naming the file and the reason; the run goes on with the other inputs. A folder is walked (its charts
rendered by helm, KServe objects shared between its files); each file's text is read by check/load.py.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from recommender.check import (
    commands,
    compose_interpolation,
    compose_project,
    gitops,
    helm_charts,
    kserve_runtimes,
    shell,
)
from recommender.check.chart_inputs import NO_HELM, load_chart_file, load_values_file, read_rendered, render_chart
from recommender.check.found import Found
from recommender.check.images import pinned_release
from recommender.check.kustomize import kustomize_config_maps
from recommender.check.load import (
    DOCKERFILE_NAME,
    MAX_BYTES,
    MENTIONS_VLLM,
    SUFFIXES,
    NotADeployment,
    is_dockerfile,
    python_kind,
    read_text,
    yaml_docs,
)
from recommender.check.loaded import Loaded, naming
from recommender.check.makefiles import is_makefile
from recommender.check.read_once import read_once
from recommender.check.shared_objects import KSERVE_KINDS, kserve_objects, objects_of_kinds
from recommender.errors import InputError
from recommender.safe_load import path_kind


def read_dotenv(path: Path) -> dict[str, str]:
    """A compose `.env` file's variables (compose_interpolation.dotenv_values)."""
    return compose_interpolation.dotenv_values(path.read_text(encoding="utf-8", errors="replace"))


def _read_file(path: Path, label: str) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"{label}: larger than {MAX_BYTES >> 20} MiB, not a deployment file")
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {label}: {exc.strerror}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not UTF-8 text (byte {exc.start})") from None


# a copy-me example of a file, the convention of shipping `start.sh.example` / `compose.yml.sample` / `app.conf.dist`
# for the user to copy and edit: its content is the file it is an example of
_EXAMPLE_SUFFIXES = (".example", ".sample", ".dist")


def file_suffix(path: Path) -> str:
    """The suffix that says what a file is: `start_model.sh.example` is a shell script (a copy-me example of one)."""
    return Path(path.stem).suffix if path.suffix in _EXAMPLE_SUFFIXES else path.suffix


def load_file(
    path: Path, label: str, problems: list[str], shared: Sequence[dict[str, Any]] = (), root: Path | None = None
) -> list[Found]:
    """One file's servers (a `.env` beside a compose file is read for its interpolation; `shared`: KServe objects
    of the other files of the folder being checked; `root`: that folder, else None for a file given alone)."""
    text = _read_file(path, label)
    if path.suffix in (".yaml", ".yml"):
        shared = [*shared, *kustomize_config_maps(path)]
    dotenv_path = path.parent / ".env"
    dotenv = read_dotenv(dotenv_path) if dotenv_path.is_file() else None
    render = partial(_render_release, origin=path.parent)
    beside, unread = _reader_beside(path), _unread_beside(path)
    if is_dockerfile(path.name, file_suffix(path), text):
        beside = _build_context(path, root)
    origin = _script_origin(path, root)
    found = read_text(text, label, file_suffix(path), dotenv, problems, beside, render, shared, unread, origin)
    pinned = pinned_release(text) if found else None
    # the vLLM the file installs (`pip install vllm==X`, run before the server) replaces the image's own
    return [replace(f, image_tag=pinned) if pinned else f for f in found]


def _reader_beside(path: Path) -> compose_project.FileReader:
    """Reads a file under the folder of `path` (a compose service's Dockerfile), by a path relative to it; None for
    a file outside that folder, missing, too large or not UTF-8 (the reading then goes on without it)."""
    root = path.parent.resolve()

    def read(relative: str) -> str | None:
        try:
            target = (root / relative).resolve()
            if not target.is_relative_to(root) or not target.is_file() or target.stat().st_size > MAX_BYTES:
                return None
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    return read


def _script_origin(path: Path, root: Path | None) -> shell.Origin:
    """A script's own path and a reader of the files it sources (`source "$SCRIPT_DIR/../env.sh"`): files of its
    repository only - under the nearest folder above it holding .git, else the folder checked, else the folder
    above the script's own - never the checking machine's other files (/etc/profile, ~/.bashrc: the deployment
    host's, not this one's)."""
    here = path.resolve()
    top = next((p for p in here.parents if (p / ".git").exists()), None) or (root.resolve() if root else None)
    top = top or here.parent.parent

    def read(target: str) -> str | None:
        try:
            file = Path(target).resolve()
            if not file.is_relative_to(top) or not file.is_file() or file.stat().st_size > MAX_BYTES:
                return None
            return file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    return shell.Origin(str(here), str(top), read)


def _build_context(dockerfile: Path, root: Path | None) -> compose_project.FileReader:
    """A Dockerfile's build context as `docker build` is given one: the Dockerfile's folder (`docker build DIR`),
    else, for a file its folder lacks, the folder the command runs in with `-f DIR/Dockerfile .`
    (docs.docker.com/build/concepts/context): the folder checked, or the current directory for a file given alone
    under it; else, for a file given alone, the nearest folder above it that holds the file - a build from a
    context without it fails ("COPY failed: file not found"), so the image deployed was built from one that has
    it (`docker build -f docker/Dockerfile .` at the repository's root). Never above the repository (the folder
    holding .git) or, without one, more than two folders up; never outside the folder checked."""
    here = dockerfile.resolve().parent
    base = (root or Path.cwd()).resolve()
    readers = [_reader_beside(dockerfile)]
    if base != here and here.is_relative_to(base):
        readers.append(_reader_beside(base / "Dockerfile"))
    if root is None:
        top = next((p for p in [here, *here.parents] if (p / ".git").exists()), None)
        limit = [here.parent, here.parent.parent] if top is None else [p for p in here.parents if p.is_relative_to(top)]
        readers += [_reader_beside(folder / "Dockerfile") for folder in limit if folder != base]

    def read(relative: str) -> str | None:
        return next((text for r in readers if (text := r(relative)) is not None), None)

    return read


def _unread_beside(path: Path) -> compose_project.UnreadReason:
    """Why `_reader_beside(path)` gives no text for a file: (Compose, too, fails on it, the reason)."""
    root = path.parent.resolve()

    def why(relative: str) -> tuple[bool, str]:
        try:
            target = (root / relative).resolve()
            if not target.exists():
                return True, "no such file"
            if not target.is_file():
                return True, "not a file"
            if not target.is_relative_to(root):
                return False, "outside the folder of the file checked: not read"
            if target.stat().st_size > MAX_BYTES:
                return False, f"larger than {MAX_BYTES >> 20} MiB: not read"
        except OSError as exc:
            return True, f"cannot be read ({exc.strerror})"
        except ValueError:  # a NUL byte
            return True, "not a path"
        return True, "not UTF-8 text"

    return why


def _nothing_found(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix in (".yaml", ".yml", ".json"):
        away = kserve_runtimes.missing_runtimes(objects_of_kinds(text, str(path), KSERVE_KINDS))
        if away:  # the vLLM command is in the runtime's container, in a file not given
            return (
                f"no vLLM server found: {away[0]}, which is not in this file; check it together with the runtime's "
                "file (or the folder holding both), as KServe combines them"
            )
    if MENTIONS_VLLM.search(text):
        return (
            "no vLLM server found: vLLM's server is named only where nothing runs it (a comment, a grep or pkill "
            "pattern, a message, a program the file starts but does not contain)"
        )
    return "no vLLM server found (no container or command runs `vllm serve`)"


def load_inputs(inputs: tuple[str, ...], stdin_text: str | None = None) -> Loaded:
    """All servers found; what could not be read is a problem for that input only."""
    if not inputs:
        raise InputError("give at least one input: a vllm serve command, a file, a directory, or - for stdin")
    out = Loaded()
    given: list[Path] = []  # the files given one by one: one may run another (`check run.sh compose.yml`)
    for item in inputs:
        try:
            _load_input(item, out, given, stdin_text)
        except InputError as exc:
            out.problems.append(naming(item, exc))
    if len(given) > 1:  # a file another given file runs is read once, as it runs it (as in a folder)
        out.found, once = read_once(out.found, _file_of(given))
        out.notes += once
    return out


def _load_input(item: str, out: Loaded, given: list[Path], stdin_text: str | None) -> None:
    """One input's servers into `out`; a file given is added to `given`."""
    path = Path(item)
    if item == "-":
        text = stdin_text if stdin_text is not None else sys.stdin.read()
        got = read_text(text, "<stdin>", problems=out.problems)
        if not got:
            out.problems.append("<stdin>: no vLLM server found")
        out.found += got
    elif path_kind(path) == "dir":  # "missing" too for a command longer than a file name can be
        _load_dir(path, out)
    elif path_kind(path) == "file" and helm_charts.chart_of(path) and helm_charts.find_helm():
        load_chart_file(path, out)
    elif path_kind(path) == "file":
        given.append(path)
        try:
            problems = len(out.problems)
            got = load_file(path, item, out.problems)
        except InputError:
            if not _read_as_values(path, out):
                raise
            return
        if not got and _read_as_values(path, out):
            del out.problems[problems:]  # what reading it alone said, before its chart was found
            return
        if not got:
            out.problems.append(f"{item}: {_nothing_found(path)}")
        out.found += got
    elif re.search(r"\bvllm\b.*\bserve\b|vllm\.entrypoints|^serve\s", item) or _container_run(item):
        got = commands.read_command(item if not item.startswith("serve ") else "vllm " + item, "<argument>")
        if not got:
            out.problems.append("<argument>: the command does not run `vllm serve`")
        out.found += got
    else:
        out.problems.append(_unread(item, path))


def _read_as_values(path: Path, out: Loaded, root: Path | None = None) -> bool:
    """A file no reader took that is the values of a chart of its repository kept outside the chart's folder
    (helm_charts.values_chart; in a folder run, a chart of that folder): the chart rendered with it. A chart check
    knows keeps its own reading first."""
    chart = helm_charts.values_chart(path, root=root)
    if chart is None or helm_charts.find_helm() is None:
        return False
    load_values_file(chart, path, out)
    return True


def _container_run(item: str) -> bool:
    """`docker run ... vllm/vllm-openai:TAG --model M ...` given as one argument: the image's entrypoint is vLLM's
    server, so the command names no `vllm serve` (commands.read_command reads the image's)."""
    return bool(re.match(r"\s*(sudo\s+)?(docker|podman|nerdctl|nvidia-docker)\s+(container\s+)?run\s", item))


def _unread(item: str, path: Path) -> str:
    """Why an argument that is neither a file, a folder nor a command was not read."""
    if path_kind(path) == "other":
        return f"{item}: not a regular file (a device, FIFO or socket): not read"
    try:
        link = path.is_symlink()
    except (OSError, ValueError):  # a name too long to look up, a NUL byte
        link = False
    if link:
        return f"{item}: a symbolic link to nothing (or a loop of links): not read"
    return f"{item}: no such file or directory (and not a `vllm serve ...` command)"


def _load_dir(path: Path, out: Loaded) -> None:
    helm = helm_charts.find_helm()
    charts = helm_charts.chart_roots(path)
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and (
            p.suffix in SUFFIXES
            or DOCKERFILE_NAME.search(p.name)
            or is_makefile(p.name)
            or _extensionless_script(p, path)
        )
        and not (helm and any(p.is_relative_to(c) for c in charts))
    )
    released = _helmfile_values(files)
    files = [f for f in files if f.resolve() not in released]
    out.notes += [f"{f}: read as the values of {where}" for f, where in sorted(released.items())]
    included = _compose_included(files)
    files = [f for f in files if f.resolve() not in included]
    out.notes += [f"{f}: read as included by {where}" for f, where in sorted(included.items())]
    notes, before = len(out.notes), len(out.found)
    for chart in charts if helm else ():  # each chart with its own values, then each values file in its folder
        for values in [None, *helm_charts.overlays(chart)]:
            assert helm is not None
            try:
                render_chart(chart, [values] if values else [], helm, out, str(values or ""))
            except InputError as exc:
                out.problems.append(str(exc))
    out.notes += [f"skipped {chart}: a Helm chart, not read: {NO_HELM}" for chart in (charts if not helm else ())]
    for f in sorted(path.rglob("*.py")):  # a Python program that starts vLLM: its server, else named as not read
        text = f.read_text(encoding="utf-8", errors="replace") if f.is_file() and f.stat().st_size <= MAX_BYTES else ""
        if MENTIONS_VLLM.search(text):
            try:
                out.found += load_file(f, str(f), out.problems, root=path)
            except InputError:
                out.notes.append(f"skipped {f}: {python_kind(text)}: not read")
    kserve = kserve_objects(files)
    for f in files:
        _load_dir_file(f, path, [d for other, docs in kserve.items() if other != f for d in docs], out)
    out.found[before:], once = read_once(out.found[before:], _file_of(files))
    out.notes += once
    if len(out.found) == before:
        unread = [n.removeprefix("skipped ") for n in out.notes[notes:] if "not read" in n][:3]
        more = f" ({'; '.join(unread)})" if unread else ""
        charts_too = f" and {len(charts)} chart(s)" if charts and helm else ""
        out.problems.append(f"{path}: no vLLM server found in {len(files)} file(s){charts_too}{more}")


def _load_dir_file(f: Path, folder: Path, shared: list[dict[str, Any]], out: Loaded) -> None:
    """One file of a folder run: its servers, else why it was skipped (a problem for a manifest not read)."""
    try:
        got = load_file(f, str(f), out.problems, shared, root=folder)
    except InputError as exc:
        if _read_as_values(f, out, folder):
            return
        if f.suffix in (".yaml", ".yml", ".json", ".service") and not isinstance(exc, NotADeployment):
            out.problems.append(naming(str(f), exc))
        else:
            out.notes.append(f"skipped {f}: {exc}")
        return
    if got:
        out.found += got
    else:
        out.notes.append(f"skipped {f}: no vLLM server in it")


def _file_of(files: list[Path]) -> Callable[[str], str | None]:
    """The resolved path of one of these files, given its label or a path to it (None: not one of them)."""
    resolved = {str(f.resolve()) for f in files}

    def file_of(path: str) -> str | None:
        try:
            here = str(Path(path).resolve())
        except (OSError, ValueError):
            return None
        return here if here in resolved else None

    return file_of


# a shell script's first line: `#!/bin/bash`, `#!/usr/bin/env -S bash -e`, `#!/bin/sh` (its interpreter by name)
_SHELL_SHEBANG = re.compile(rb"^#![ \t]*\S*/(?:env[ \t]+(?:-\S+[ \t]+)*)?(?:ba|z|da|k|a)?sh\b")


def _extensionless_script(p: Path, folder: Path) -> bool:
    """A file without a suffix (or a batch job's `.job`, as Slurm sites name theirs: `sbatch run_vllm_serve.job`)
    whose first line names a shell (`#!/bin/bash`): an executable script (`bin/serve`, `entrypoint`) the kernel runs
    by its shebang line (execve(2)) whatever its name; not in hidden folders (.git/hooks holds such files too)."""
    hidden = p.name.startswith(".") or any(part.startswith(".") for part in p.relative_to(folder).parts[:-1])
    if p.suffix not in ("", ".job") or hidden:
        return False
    try:
        with p.open("rb") as f:
            return bool(_SHELL_SHEBANG.match(f.read(128)))
    except OSError:
        return False


def _helmfile_values(files: list[Path]) -> dict[Path, str]:
    """The values files the helmfile.yaml files among these name for their releases (resolved path -> release):
    read with their release's chart, not alone as the values of a chart check does not know."""
    out: dict[Path, str] = {}
    for f in files:
        if not f.name.startswith("helmfile") or f.stat().st_size > MAX_BYTES:
            continue
        try:
            docs = yaml_docs(f.read_text(encoding="utf-8"), str(f), [])
        except (InputError, OSError, UnicodeDecodeError):
            continue
        for doc in docs:
            releases = gitops.helm_releases(doc) if isinstance(doc, dict) and gitops.is_helmfile(doc) else []
            for release in releases:
                out.update({(f.parent / v).resolve(): release.where for v in release.values_elsewhere})
    return out


def _compose_included(files: list[Path]) -> dict[Path, str]:
    """The Compose files that compose files among these `include:` (resolved path -> the including file): read as
    part of the application that includes them, not a second time alone."""
    out: dict[Path, str] = {}
    for f in files:
        if f.suffix not in (".yaml", ".yml") or f.stat().st_size > MAX_BYTES:
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        if "include" not in text:
            continue
        try:
            docs = yaml_docs(text, str(f), [])
        except InputError:
            continue
        for doc in docs:
            items = doc.get("include") if isinstance(doc, dict) else None
            for item in items if isinstance(items, list) and compose_project.is_compose_include(items) else []:
                paths = item if isinstance(item, str) else item.get("path")
                for p in [paths] if isinstance(paths, str) else paths if isinstance(paths, list) else []:
                    if isinstance(p, str) and (f.parent / p).resolve() != f.resolve():
                        out.setdefault((f.parent / p).resolve(), str(f))
    return out


def _render_release(release: gitops.HelmRelease, label: str, *, origin: Path) -> list[Found] | None:
    """The release rendered by helm, when its chart is a folder of the repository at hand; None otherwise."""
    helm = helm_charts.find_helm()
    chart = helm_charts.local_chart(origin, release.chart_path) if release.chart_path else None
    if chart is None or helm is None:
        return None
    files = [((origin if release.files_from_origin else chart) / f).resolve() for f in release.values_elsewhere]
    # the repository at hand: the folders the chart and the file naming it share (a PR's `../../etc/...` stays out)
    repository = Path(os.path.commonpath([chart, origin.resolve()]))
    outside = [str(f) for f, p in zip(release.values_elsewhere, files, strict=True) if not p.is_relative_to(repository)]
    if outside:
        raise InputError(f"{label}: value file(s) {', '.join(outside)} outside the repository {repository}: not read")
    missing = [str(f) for f, p in zip(release.values_elsewhere, files, strict=True) if not p.is_file()]
    if missing:
        raise InputError(f"{label}: value file(s) {', '.join(missing)} not found in chart {chart}")
    out = Loaded()
    try:
        read_rendered(chart, helm_charts.render(chart, files, helm, release.values), out, label)
    except helm_charts.MissingDependencies:
        return None  # read from its values as a release of a chart not at hand
    if out.problems:
        raise InputError(out.problems[0])
    return out.found
