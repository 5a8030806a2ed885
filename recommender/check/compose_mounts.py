"""The script a compose service's entrypoint or command runs when the service bind-mounts it from beside the compose
file (pure: the service and a reader of the files beside it in, the script's text out)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from recommender.check.images import has_vllms_entrypoint
from recommender.check.manifest_values import as_list, as_mapping, split_words
from recommender.errors import InputError

FileReader = Callable[[str], str | None]  # a file beside the compose file, by a path relative to its folder
_SHELLS = ("sh", "bash", "dash", "ash", "zsh")


def compose_words(value: Any) -> list[str] | None:
    """A service's `command` / `entrypoint` as Compose runs it: a list as given, a string split as a shell would."""
    if value is None:
        return None
    if isinstance(value, list):
        return [str(w) for w in value]
    if isinstance(value, str):
        return split_words(value)
    raise InputError(f"command/entrypoint must be a string or a list, not {type(value).__name__}")


def _mounted_script(svc: Mapping[str, Any], words: list[str], read: FileReader) -> tuple[str, int] | None:
    """(text, place in `words`) of the script `words` run - directly, or as the first operand of a shell (sh(1)
    reads it as the script) - when the service bind-mounts it from beside the compose file."""
    at = 1 if len(words) > 1 and words[0].rsplit("/", 1)[-1] in _SHELLS and not words[1].startswith("-") else 0
    for volume in as_list(svc.get("volumes")):
        if isinstance(volume, str):
            host, _, rest = volume.partition(":")
            target = rest.split(":", 1)[0]
        else:
            host, target = str(as_mapping(volume).get("source", "")), str(as_mapping(volume).get("target", ""))
        if target and target == words[at] and host.startswith("."):
            text = read(host)
            return (text, at) if text is not None else None
    return None


def mounted_entrypoint(svc: Mapping[str, Any], read: FileReader | None) -> tuple[str, int] | None:
    """(the text of a script the service's entrypoint runs, its place in the entrypoint) when the service bind-mounts
    it from beside the compose file (`./docker/vllm/entrypoint.sh:/entrypoint.sh`), run directly or by a shell
    (`["/bin/sh", "/app/start.sh"]`); None otherwise (a script baked into an image is not here)."""
    try:
        entry = compose_words(svc.get("entrypoint"))
    except InputError:
        return None
    return _mounted_script(svc, entry, read) if read is not None and entry else None


def mounted_command(svc: Mapping[str, Any], read: FileReader | None) -> tuple[str, int] | None:
    """(the text of the script a service's command runs, its place in the command) when the service sets no
    entrypoint, builds no image, and its command's program - or a shell's script operand - is a file it bind-mounts
    from beside the compose file (`command: /launch-cluster.sh vllm serve ...` with
    `./launch-cluster.sh:/launch-cluster.sh:ro`). Compose's `command` overrides the image's CMD (docs.docker.com,
    compose file reference, services: command); on an image without an ENTRYPOINT it is the program the container
    runs. vLLM's own image (vllm/vllm-openai) has one, `vllm serve`, whose arguments the command is: None there."""
    if read is None or svc.get("entrypoint") is not None or svc.get("build") is not None:
        return None
    if has_vllms_entrypoint(str(svc.get("image", ""))):
        return None
    try:
        command = compose_words(svc.get("command"))
    except InputError:
        return None
    return _mounted_script(svc, command, read) if command else None
