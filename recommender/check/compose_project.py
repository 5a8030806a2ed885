"""How docker compose assembles a project before it runs a service (pure): the files `include:` names (each with
its own folder and env files), `extends:` chains merged as Compose merges them, and a service's `env_file:`
entries; read through a FileReader of the files beside the compose file."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from typing import Any

from recommender.check.compose_interpolation import compose_interpolate, dotenv_values
from recommender.check.manifest_values import as_list, as_mapping
from recommender.errors import InputError
from recommender.quoting import quoted
from recommender.safe_load import UntrustedDocumentError, load_yaml

FileReader = Callable[[str], str | None]  # a file beside the compose file, by a path relative to its folder
# why a FileReader gave no text for a path: (Compose, too, fails on it, the reason in a few words)
UnreadReason = Callable[[str], tuple[bool, str]]


def is_compose_include(value: Any) -> bool:
    """A top-level `include:` as Compose writes it (a list of paths or of mappings with `path:`), not another tool's
    `include:` (GitLab CI's `- local: ...`)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) or (isinstance(v, dict) and "path" in v) for v in value)
    )


_REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*://|^git@")  # a Compose file Compose fetches (oci://, a git URL)
_Folder = tuple[FileReader | None, UnreadReason | None]


def _under(folder: _Folder, sub: str) -> _Folder:
    """The readers of `folder` for the files of its subfolder `sub`, by paths relative to `sub`."""
    read, unread = folder
    if not sub or sub == ".":
        return folder
    return (
        None if read is None else context_reader(read, sub),
        None if unread is None else (lambda rel: unread(f"{sub.rstrip('/')}/{rel}")),
    )


def _beside_text(folder: _Folder, path: str, where: str) -> str | None:
    """The text of a file a compose file names; a file Compose cannot read either is refused as Compose refuses it;
    None for one that is not read here (fetched by Compose, outside the folder checked, too large)."""
    read, unread = folder
    text = read(path) if read is not None and not _REMOTE.match(path) else None
    if text is None and unread is not None and not _REMOTE.match(path):
        refused, why = unread(path)
        if refused:
            raise InputError(f"{where} {path}: {why} (Compose refuses it)")
    return text


def _not_read_why(folder: _Folder, path: str) -> str:
    _, unread = folder
    if _REMOTE.match(path):
        return "a remote file Compose fetches (check does not)"
    return unread(path)[1] if unread is not None else "not read"


_MAX_INCLUDES = 8  # `include` nested deeper than this is refused (Compose refuses cycles; nesting is rarely 2 deep)


def includes(
    doc: Mapping[str, Any],
    source: str,
    dotenv: Mapping[str, str] | None,
    beside: FileReader | None,
    unread: UnreadReason | None,
    chain: tuple[str, ...],
) -> list[tuple[str, dict[str, Any], dict[str, str], _Folder]]:
    """The Compose files `include:` names (docs.docker.com/reference/compose-file/include/; compose-go
    loader/include.go): a path, or {path (one or a list: the first, then files merged over it), project_directory,
    env_file}; each is read from its own folder, interpolated from its env_file (or the .env of its project
    directory), the including project's variables first. Each as (its path from the first file's folder, the
    document, its variables, the readers of its folder). A file missing, a cycle, or a file not read here (remote,
    outside the folder checked) is one line naming it."""
    items = doc.get("include")
    if items is None:
        return []
    if not isinstance(items, list):
        raise InputError(f"{source}: `include` must be a list")
    here = (beside, unread)
    out = []
    for n, item in enumerate(items):
        entry = {"path": item} if isinstance(item, str) else item
        paths = entry.get("path") if isinstance(entry, dict) else None
        paths = [paths] if isinstance(paths, str) else paths
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) for p in paths):
            raise InputError(f"{source}: include[{n}] must be a path, or a mapping whose `path` is one or a list")
        where = f"{source}: include"
        texts = []
        for p in paths:
            at = posixpath.normpath(posixpath.join(posixpath.dirname(chain[-1]), p))
            if at in chain or len(chain) > _MAX_INCLUDES:
                raise InputError(f"{where} {p}: comes back to {at}: an include cycle Compose refuses")
            text = _beside_text(here, p, where)
            if text is None:
                raise InputError(f"{where} {p}: {_not_read_why(here, p)}: the services it defines are not evaluated")
            texts.append((p, text))
        project = entry.get("project_directory")
        folder = str(project) if isinstance(project, str) else posixpath.dirname(paths[0])
        env = {**_include_env(entry.get("env_file"), here, folder, where), **(dotenv or {})}
        sub = compose_interpolate(_include_doc(texts, where), env, [])  # each file with its own variables
        out.append(
            (posixpath.normpath(posixpath.join(posixpath.dirname(chain[-1]), paths[0])), sub, env, _under(here, folder))
        )
    return out


def _include_env(env_file: Any, here: _Folder, folder: str, where: str) -> dict[str, str]:
    """The variables an included file is interpolated with: its `env_file` (one or a list, relative to the including
    file's folder; `/dev/null` for none), else the `.env` of its project directory when there is one."""
    if env_file is None:
        text = here[0](posixpath.join(folder, ".env")) if here[0] is not None else None
        return dotenv_values(text) if text is not None else {}
    files = [env_file] if isinstance(env_file, str) else env_file
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise InputError(f"{where}: env_file must be a path or a list of paths")
    env: dict[str, str] = {}
    for f in files:
        if f == "/dev/null":
            continue
        text = _beside_text(here, f, f"{where} env_file")
        env.update(dotenv_values(text) if text is not None else {})
    return env


def service_env_files(env_file: Any, read: FileReader | None, where: str) -> dict[str, str]:
    """The container variables a service's `env_file` sets (docs.docker.com/reference/compose-file/services/#env_file:
    a path or a list, each a path or {path, required, format}, relative to the compose file's folder, later files
    over earlier ones; `environment` then overrides them). A file not read here (not in the repository, as a
    git-ignored `.env` made from an example is not) sets nothing: the variables it would set stay unresolved."""
    if env_file is None:
        return {}
    entries = env_file if isinstance(env_file, list) else [env_file]
    env: dict[str, str] = {}
    for entry in entries:
        path = entry.get("path") if isinstance(entry, dict) else entry
        if not isinstance(path, str):
            raise InputError(f"{where}: env_file must be a path, a list of paths or of {{path: ...}} mappings")
        text = read(path) if read is not None and not _REMOTE.match(path) else None
        env.update(dotenv_values(text) if text is not None else {})
    return env


def _include_doc(texts: list[tuple[str, str]], where: str) -> dict[str, Any]:
    """An included Compose file, with the files listed after it merged over it service by service."""
    out: dict[str, Any] = {}
    for path, text in texts:
        doc = _yaml_mapping(text, f"{where} {path}")
        services = doc.get("services", {})
        if not isinstance(services, dict):
            raise InputError(f"{where} {path}: `services` must be a mapping of service names to services")
        merged = dict(as_mapping(out.get("services")))
        for name, svc in services.items():
            old = merged.get(name)
            merged[name] = merged_over(old, svc) if isinstance(old, dict) and isinstance(svc, dict) else svc
        out = {**out, **doc, "services": merged}
    return out


_MAX_EXTENDS = 8  # `extends` chains deeper than this are refused (Compose refuses cycles; a chain is rarely 2 deep)


def _replaced(parent: str, key: str) -> bool:
    """A sequence the extending service replaces rather than appends to (Compose's merge rules)."""
    return (not parent and key in ("command", "entrypoint")) or (parent == "healthcheck" and key == "test")


def extended(
    name: str,
    raw: dict[str, Any],
    services: Mapping[str, Any],
    folder: _Folder,
    where: str,
    depth: int = 0,
    chain: tuple[tuple[str, str], ...] = (),
) -> tuple[dict[str, Any], str | None]:
    """The service as Compose makes it from `extends:` (docs.docker.com/reference/compose-file/services/#extends):
    the base service, of this file or of the `file:` beside it, with this service's own keys merged over it as
    Compose merges them (docs.docker.com/reference/compose-file/merge/: mappings key by key, `command` and
    `entrypoint` replaced, other sequences appended, scalars replaced); and why it cannot be evaluated, when its base
    is in a file not read here (remote, outside the folder checked: the service as written, not judged). A base
    file Compose cannot read either (missing), a base service missing from a file read, or a chain that comes back
    to a service, is refused as Compose refuses it (compose-go loader/extends.go)."""
    ext = raw.get("extends")
    if ext is None:
        return raw, None
    if depth >= _MAX_EXTENDS:
        raise InputError(f"{where}: `extends` nested more than {_MAX_EXTENDS} deep")
    own = {k: v for k, v in raw.items() if k != "extends"}
    if isinstance(ext, str):
        file, base_name = None, ext
    elif isinstance(ext, dict) and isinstance(ext.get("service"), str):
        file, base_name = ext.get("file"), ext["service"]
    else:
        raise InputError(f"{where}: `extends` must name a service (a string, or a mapping with `service:`)")
    if file is not None and not isinstance(file, str):
        raise InputError(f"{where}: `extends` file must be a path, not {type(file).__name__}")
    here = chain[-1][0] if chain else ""
    chain = chain or ((here, name),)
    base_services: Any = services
    base_folder = folder
    sub = ""
    at = here if file is None else posixpath.normpath(posixpath.join(posixpath.dirname(here), file))
    if (at, base_name) in chain:
        raise InputError(
            f"{where}: `extends` comes back to service {quoted(base_name)}: a circular reference Compose refuses"
        )
    if file is not None:
        text = _beside_text(folder, file, f"{where}: `extends` file")
        if text is None:
            return own, f"it extends service {base_name} of {file}, {_not_read_why(folder, file)}"
        base_services = as_mapping(_yaml_mapping(text, f"{where}: extends {file}")).get("services")
        sub = posixpath.dirname(file)
        base_folder = _under(folder, sub)
    base = as_mapping(base_services).get(base_name)
    if base is None:
        in_file = "this file" if file is None else file
        raise InputError(f"{where}: `extends` names service {quoted(base_name)}, which {in_file} does not define")
    if not isinstance(base, dict):
        return own, None
    base, not_read = extended(
        base_name, base, as_mapping(base_services), base_folder, where, depth + 1, (*chain, (at, base_name))
    )
    if sub:  # the base's build context is relative to the file that defines it
        base = _rebased_build(base, sub)
    return merged_over(base, own), not_read


def _yaml_mapping(text: str, where: str) -> dict[str, Any]:
    """A Compose file named by another (extends, include): a YAML mapping, or one line naming it."""
    try:
        doc = load_yaml(text)
    except UntrustedDocumentError as exc:
        raise InputError(f"{where}: {exc}") from exc
    except Exception as exc:  # yaml's own errors: the file beside is not a compose file
        raise InputError(f"{where}: not a YAML compose file") from exc
    return doc if isinstance(doc, dict) else {}


def _rebased_build(svc: dict[str, Any], folder: str) -> dict[str, Any]:
    build = svc.get("build")
    if isinstance(build, str) and not posixpath.isabs(build):
        return {**svc, "build": posixpath.normpath(posixpath.join(folder, build))}
    if isinstance(build, dict):
        context = str(build.get("context", "."))
        if not posixpath.isabs(context) and "://" not in context:
            return {**svc, "build": {**build, "context": posixpath.normpath(posixpath.join(folder, context))}}
    return svc


def _env_mapping(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    out: dict[str, Any] = {}
    for item in as_list(value):
        k, eq, v = str(item).partition("=")
        out[k] = v if eq else None
    return out


def merged_over(base: Mapping[str, Any], own: Mapping[str, Any], key: str = "") -> dict[str, Any]:
    out = dict(base)
    for k, v in own.items():
        old = out.get(k)
        if not key and k in ("environment", "labels") and (isinstance(old, list) or isinstance(v, list)):
            out[k] = {**_env_mapping(old), **_env_mapping(v)}
        elif isinstance(old, dict) and isinstance(v, dict):
            out[k] = merged_over(old, v, k)
        elif isinstance(old, list) and isinstance(v, list) and not _replaced(key, k):
            out[k] = [*old, *v]
        else:
            out[k] = v
    return out


def context_reader(read: FileReader, context: str) -> FileReader:
    return lambda rel: read(f"{context.rstrip('/')}/{rel}")
