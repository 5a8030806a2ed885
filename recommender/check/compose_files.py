"""Find vLLM servers in docker compose files, interpolating `${VAR}` from the environment and `.env` as Compose
does (pure: documents in, Found out)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from recommender.check.commands import (
    Hit,
    find_in_script,
    find_in_words,
    not_evaluable,
    with_image_cmd,
)
from recommender.check.compose_interpolation import compose_interpolate, dotenv_values
from recommender.check.compose_mounts import compose_words, mounted_command, mounted_entrypoint
from recommender.check.dockerfile import final_stage, run_copied_script
from recommender.check.found import Found
from recommender.check.images import cpu_build, devices_seen, env_platform, image_tag, is_vllm_image, pinned_release
from recommender.check.manifest_values import as_list, as_mapping, is_count
from recommender.errors import InputError
from recommender.quoting import quoted
from recommender.safe_load import UntrustedDocumentError, load_yaml

FileReader = Callable[[str], str | None]  # a file beside the compose file, by a path relative to its folder
# why a FileReader gave no text for a path: (Compose, too, fails on it, the reason in a few words)
UnreadReason = Callable[[str], tuple[bool, str]]


def read_compose(
    doc: dict[str, Any],
    source: str,
    dotenv: Mapping[str, str] | None = None,
    beside: FileReader | None = None,
    unread: UnreadReason | None = None,
    chain: tuple[str, ...] = (),
) -> list[Found]:
    """docker compose services running vLLM: the files `include:` names first, interpolation from `.env`,
    entrypoint + command as Compose combines them (an entrypoint replaces the image's and its command), the image's
    own entrypoint otherwise - read from the Dockerfile a service builds when `beside` can read it (or
    `build.dockerfile_inline`). `chain`: the files included so far, by their path from the first one's folder."""
    services = doc.get("services", {})
    if not isinstance(services, dict):
        raise InputError(f"{source}: `services` must be a mapping of service names to services")
    services, out = dict(services), []
    chain = chain or (posixpath.basename(source),)
    for path, sub, env, under in _includes(doc, source, dotenv, beside, unread, chain):
        sub_services = sub.get("services", {})
        if not isinstance(sub_services, dict):
            raise InputError(f"{source}: include {path}: `services` must be a mapping of service names to services")
        for name, svc in sub_services.items():  # the including file's own definition is merged over it
            if name in services and isinstance(svc, dict) and isinstance(services[name], dict):
                services[name] = _merged(svc, services[name])
        rest = {k: v for k, v in sub_services.items() if k not in services}
        out += read_compose({**sub, "services": rest}, f"{source} [include {path}]", env, *under, (*chain, path))
    for name, raw in services.items():
        if not isinstance(raw, dict):
            raise InputError(f"{source} (service/{name}): a service must be a mapping")
        missing: list[str] = []
        raw, not_read = _extended(str(name), raw, services, (beside, unread), f"{source} (service/{name})")
        svc = compose_interpolate(raw, dotenv or {}, missing)
        script = mounted_entrypoint(svc, beside) or mounted_command(svc, beside)
        built = _build_dockerfile(svc, beside)
        context = _build_context(svc)
        in_context = None if beside is None or context is None else _context_reader(beside, context)
        file_env = _service_env_files(svc.get("env_file"), beside, f"{source} (service/{name})")
        found = _compose_service(doc, str(name), svc, source, missing, built, script, in_context, file_env)
        out += [
            replace(f, files=_mounted_configs(svc, f.argv, beside), not_evaluable=f.not_evaluable or not_read)
            for f in found
        ]
    return out


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
        None if read is None else _context_reader(read, sub),
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


def _includes(
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


def _service_env_files(env_file: Any, read: FileReader | None, where: str) -> dict[str, str]:
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
            merged[name] = _merged(old, svc) if isinstance(old, dict) and isinstance(svc, dict) else svc
        out = {**out, **doc, "services": merged}
    return out


_MAX_EXTENDS = 8  # `extends` chains deeper than this are refused (Compose refuses cycles; a chain is rarely 2 deep)


def _replaced(parent: str, key: str) -> bool:
    """A sequence the extending service replaces rather than appends to (Compose's merge rules)."""
    return (not parent and key in ("command", "entrypoint")) or (parent == "healthcheck" and key == "test")


def _extended(
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
    base, not_read = _extended(
        base_name, base, as_mapping(base_services), base_folder, where, depth + 1, (*chain, (at, base_name))
    )
    if sub:  # the base's build context is relative to the file that defines it
        base = _rebased_build(base, sub)
    return _merged(base, own), not_read


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


def _merged(base: Mapping[str, Any], own: Mapping[str, Any], key: str = "") -> dict[str, Any]:
    out = dict(base)
    for k, v in own.items():
        old = out.get(k)
        if not key and k in ("environment", "labels") and (isinstance(old, list) or isinstance(v, list)):
            out[k] = {**_env_mapping(old), **_env_mapping(v)}
        elif isinstance(old, dict) and isinstance(v, dict):
            out[k] = _merged(old, v, k)
        elif isinstance(old, list) and isinstance(v, list) and not _replaced(key, k):
            out[k] = [*old, *v]
        else:
            out[k] = v
    return out


def _bind_mounts(svc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(host path beside the compose file, path in the container) of the service's bind mounts: short syntax
    `./config.yaml:/app/config.yaml:ro` (a relative host path starts with `.`, as the Compose spec asks) or long
    syntax `type: bind`."""
    out = []
    for volume in as_list(svc.get("volumes")):
        if isinstance(volume, str):
            host, _, rest = volume.partition(":")
            target = rest.split(":", 1)[0]
        elif isinstance(volume, dict) and volume.get("type", "bind") == "bind":
            host, target = str(volume.get("source", "")), str(volume.get("target", ""))
        else:
            continue
        if host.startswith(".") and target.startswith("/"):
            out.append((host, target.rstrip("/") or "/"))
    return out


def _mounted_configs(svc: Mapping[str, Any], argv: tuple[str, ...], read: FileReader | None) -> dict[str, str]:
    """The `--config FILE` vLLM reads, as the container sees it, when the service bind-mounts it (or its folder)
    from beside the compose file: path -> text."""
    if read is None:
        return {}
    paths = [argv[i + 1] for i, w in enumerate(argv[:-1]) if w == "--config"]
    paths += [w.split("=", 1)[1] for w in argv if w.startswith("--config=")]
    out = {}
    for path in paths:
        for host, target in _bind_mounts(svc):
            if path == target or path.startswith(f"{target}/"):
                text = read(f"{host.rstrip('/')}{path[len(target) :]}")
                if text is not None:
                    out[path] = text
                break
    return out


def _context_reader(read: FileReader, context: str) -> FileReader:
    return lambda rel: read(f"{context.rstrip('/')}/{rel}")


def _build_context(svc: Mapping[str, Any]) -> str | None:
    """The build context folder of a service, relative to the compose file (None: no build, or a remote one)."""
    build = svc.get("build")
    if not isinstance(build, (str, dict)):
        return None
    context = build if isinstance(build, str) else str(as_mapping(build).get("context") or ".")
    return None if re.match(r"^[a-z][a-z0-9+.-]*://|^git@", context) else context


def _build_dockerfile(svc: Mapping[str, Any], read: FileReader | None) -> str | None:
    """The text of the Dockerfile a service builds: `build.dockerfile_inline`, or CONTEXT/DOCKERFILE read beside
    the compose file (None: no build, a remote context, or a file that cannot be read here)."""
    build = svc.get("build")
    if isinstance(build, dict) and isinstance(build.get("dockerfile_inline"), str):
        return str(build["dockerfile_inline"])
    context = _build_context(svc)
    if read is None or context is None:
        return None
    return read(f"{context.rstrip('/')}/{as_mapping(build).get('dockerfile') or 'Dockerfile'}")


def _with_image(
    stage: Any, entry: list[str] | None, command: list[str] | None, env: dict[str, str]
) -> tuple[list[str], str | None, dict[str, str]]:
    """(words, the vLLM image whose own entrypoint runs them or None, env) of a service built from `stage`: Compose's
    entrypoint replaces the image's (and drops its CMD), its command replaces the CMD."""
    env = {**stage.env, **env}
    if entry is not None:
        return [*entry, *(command or [])], None, env
    if stage.entrypoint is not None and stage.entrypoint[:2] == ["/bin/sh", "-c"]:
        return list(stage.entrypoint), None, env  # a shell-form ENTRYPOINT ignores CMD
    words = [*(stage.entrypoint or []), *(command if command is not None else stage.cmd or [])]
    inherited = stage.entrypoint is None and is_vllm_image(stage.base)
    return words, stage.base if inherited else None, env


def _build_args(svc: Mapping[str, Any]) -> dict[str, str]:
    """`build.args` as a mapping (Compose takes a mapping or a list of NAME=value)."""
    args = as_mapping(svc.get("build")).get("args")
    if isinstance(args, dict):
        return {str(k): "" if v is None else str(v) for k, v in args.items()}
    return dict(str(a).partition("=")[::2] for a in as_list(args))


def service_environment(svc: Mapping[str, Any]) -> dict[str, str]:
    """A service's `environment` (a mapping or a list of NAME=value) as a mapping."""
    environment = svc.get("environment")
    if isinstance(environment, dict):
        return {str(k): "" if v is None else str(v) for k, v in environment.items()}
    env = {}
    for item in environment if isinstance(environment, list) else []:
        k, _, v = str(item).partition("=")
        env[k] = v
    return env


def _built_hits(
    stage: Any,
    entry: list[str] | None,
    command: list[str] | None,
    env: dict[str, str],
    missing: list[str],
    in_context: FileReader | None,
) -> tuple[list[Hit], list[str], str | None, dict[str, str]]:
    """(servers, the words the container runs, the vLLM image whose entrypoint runs them or None, env) of a service
    built from a Dockerfile read here; a script the Dockerfile COPYs from the build context is run when it is that."""
    words, runs, env = _with_image(stage, entry, command, env)
    words = [w.replace("$$", "$") for w in words]
    hits = find_in_words(words, env, tuple(missing), runs)
    if not hits:  # the image runs a script its Dockerfile COPYs from the build context
        copied = run_copied_script(replace(stage, env=env), words, in_context)
        hits = [replace(h, unresolved=(*h.unresolved, *missing)) for h in copied]
    return hits, words, runs, env


def _compose_service(
    doc: Mapping[str, Any],
    name: str,
    svc: Mapping[str, Any],
    source: str,
    missing: list[str],
    built: str | None,
    script: tuple[str, int] | None = None,
    in_context: FileReader | None = None,
    file_env: Mapping[str, str] | None = None,
) -> list[Found]:
    image = str(svc.get("image", ""))
    try:
        entry = compose_words(svc.get("entrypoint"))
        command = compose_words(svc.get("command"))
        stage = final_stage(built, _build_args(svc)) if built is not None else None
    except InputError as exc:
        raise InputError(f"{source} (service/{name}): {exc}") from exc
    env = {**(file_env or {}), **service_environment(svc)}
    if stage is not None:  # the image is built here: its Dockerfile says what runs
        hits, words, runs, env = _built_hits(stage, entry, command, env, missing, in_context)
        image = runs or image
    else:
        words = [w.replace("$$", "$") for w in [*(entry or []), *(command or [])]]
        image = image or _built_vllm_image(svc, command)
        if entry is None and script is not None:  # the command runs a script mounted from beside the file
            hits = []
        elif entry is None and image and is_vllm_image(image):
            hits = find_in_words(words or [], env, tuple(missing), image)
            hits = [with_image_cmd(h, image) for h in hits] if command is None else hits
        else:
            hits = find_in_words(words, env, tuple(missing), None)
    if not hits and script is not None:  # the entrypoint (or command) is a script mounted from beside the file: run it
        ran = find_in_script(script[0], env, words[script[1] :])
        hits = [replace(h, unresolved=(*h.unresolved, *missing)) for h in ran if isinstance(h, Hit)]
    count = _compose_gpus(svc)
    out = []
    for hit in hits:
        # CUDA_VISIBLE_DEVICES, or for ROCm HIP_/ROCR_VISIBLE_DEVICES (rocm.docs.amd.com, GPU isolation techniques)
        visible = devices_seen(hit.env)
        out.append(
            Found(
                source,
                f"service/{name}",
                hit.argv,
                gpus_per_pod=visible if visible is not None else count,
                has_shm=bool(svc.get("shm_size")) or svc.get("ipc") == "host" or _mounts_dev_shm(svc),
                # the release the built image's Dockerfile installs (`pip install vllm==X`), else its base's tag
                image_tag=pinned_release(built or "") or (image_tag(image) if is_vllm_image(image) else None),
                annotations={str(k): str(v) for k, v in as_mapping(doc.get("x-vllm-plan")).items()},
                container=name,
                serve_form=hit.serve,
                unresolved=tuple(dict.fromkeys(hit.unresolved)),
                env=dict(hit.env),
                not_evaluable=_not_evaluable(svc, hit, image, built),
                problems=hit.problems,
            )
        )
    return out


def _not_evaluable(svc: Mapping[str, Any], hit: Hit, image: str, built: str | None) -> str | None:
    """Why a service's server does not run on NVIDIA GPUs: Gaudi's runtime, its image or environment, a Dockerfile
    (or build arg) that builds vLLM's CPU backend."""
    if svc.get("runtime") == "habana":
        return "runs on Habana Gaudi (runtime: habana)"
    return (
        hit.platform
        or not_evaluable(hit.argv, hit.env, image)
        or (cpu_build(built) if built is not None else None)
        or env_platform(_build_args(svc))
    )


_VLLM_FOLDER = re.compile(r"vllm([-_](openai|server|serve|cuda|gpu))?")  # not vllm-client, vllm-router, ...


def _built_vllm_image(svc: Mapping[str, Any], command: list[str] | None) -> str:
    """The vLLM image a service without `image:` builds, when its build says so: a build argument naming a vLLM image
    (HARBOR_VLLM_IMAGE: vllm/vllm-openai) or a context named for vLLM (./services/vllm), and a command of options or
    variables only (arguments for vLLM's entrypoint, not a program of its own). "" otherwise: the Dockerfile, not
    beside the file, decides."""
    build = svc.get("build")
    context = (
        build
        if isinstance(build, str)
        else str(as_mapping(build).get("context", ""))
        if isinstance(build, dict)
        else ""
    )
    args = as_mapping(build).get("args") if isinstance(build, dict) else None
    values = [str(v) for v in (args.values() if isinstance(args, dict) else as_list(args))]
    names = [n for n in (v.rsplit("=", 1)[-1] for v in values) if is_vllm_image(n)]
    folder = context.rstrip("/").rsplit("/", 1)[-1]
    names += [folder] if _VLLM_FOLDER.fullmatch(folder.lower()) else []
    if not names or (command and not command[0].startswith(("-", "$"))):
        return ""
    return names[0]


def _mounts_dev_shm(svc: Mapping[str, Any]) -> bool:
    return any(
        str(v).split(":")[-1].rstrip("/") == "/dev/shm" for v in as_list(svc.get("volumes")) if isinstance(v, str)
    )


def _compose_gpus(svc: Mapping[str, Any]) -> int | None:
    """GPUs a service reserves: `deploy.resources.reservations.devices`, or the service-level `gpus:` list of the
    same device requests (docs.docker.com/reference/compose-file/services/#gpus; `gpus: all` is not a count)."""
    deploy = as_mapping(svc.get("deploy"))
    devices = as_list(as_mapping(as_mapping(deploy.get("resources")).get("reservations")).get("devices"))
    gpus = svc.get("gpus")
    requests = [*(devices if isinstance(devices, list) else []), *(gpus if isinstance(gpus, list) else [])]
    for d in requests:
        if not isinstance(d, dict):
            continue
        if d.get("device_ids"):
            ids = d["device_ids"]
            return sum(len(str(i).split(",")) for i in ids) if isinstance(ids, list) else None
        count = d.get("count")
        if count not in (None, "all"):
            if not is_count(str(count)):
                if str(count).isascii() and str(count).isdigit():
                    raise InputError(f"deploy.resources.reservations.devices count: {len(str(count)):,} digits")
                raise InputError(f"deploy.resources.reservations.devices count {quoted(count)} is not a whole number")
            return int(str(count))
    return None
