"""Find vLLM servers in docker compose files, interpolating `${VAR}` from the environment and `.env` as Compose
does (pure: documents in, Found out)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from recommender.check.commands import (
    Hit,
    find_in_script,
    find_in_words,
    not_evaluable,
    with_image_cmd,
)
from recommender.check.compose_interpolation import compose_interpolate
from recommender.check.compose_mounts import compose_words, mounted_command, mounted_entrypoint
from recommender.check.compose_project import (
    FileReader,
    UnreadReason,
    context_reader,
    extended,
    includes,
    merged_over,
    service_env_files,
)
from recommender.check.dockerfile import final_stage, run_copied_script
from recommender.check.found import Found
from recommender.check.images import cpu_build, devices_seen, env_platform, image_tag, is_vllm_image, pinned_release
from recommender.check.manifest_values import as_list, as_mapping, is_count
from recommender.errors import InputError
from recommender.quoting import quoted


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
    for path, sub, env, under in includes(doc, source, dotenv, beside, unread, chain):
        sub_services = sub.get("services", {})
        if not isinstance(sub_services, dict):
            raise InputError(f"{source}: include {path}: `services` must be a mapping of service names to services")
        for name, svc in sub_services.items():  # the including file's own definition is merged over it
            if name in services and isinstance(svc, dict) and isinstance(services[name], dict):
                services[name] = merged_over(svc, services[name])
        rest = {k: v for k, v in sub_services.items() if k not in services}
        out += read_compose({**sub, "services": rest}, f"{source} [include {path}]", env, *under, (*chain, path))
    for name, raw in services.items():
        if not isinstance(raw, dict):
            raise InputError(f"{source} (service/{name}): a service must be a mapping")
        missing: list[str] = []
        raw, not_read = extended(str(name), raw, services, (beside, unread), f"{source} (service/{name})")
        svc = compose_interpolate(raw, dotenv or {}, missing)
        script = mounted_entrypoint(svc, beside) or mounted_command(svc, beside)
        built = _build_dockerfile(svc, beside)
        context = _build_context(svc)
        in_context = None if beside is None or context is None else context_reader(beside, context)
        file_env = service_env_files(svc.get("env_file"), beside, f"{source} (service/{name})")
        found = _compose_service(doc, str(name), svc, source, missing, built, script, in_context, file_env)
        out += [
            replace(f, files=_mounted_configs(svc, f.argv, beside), not_evaluable=f.not_evaluable or not_read)
            for f in found
        ]
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
