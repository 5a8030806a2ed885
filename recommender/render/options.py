"""What `render` is asked besides the plan (RenderOptions) and whether a plan renders with them (pure): each option
validated for the artifacts that place it, and the plan's command and image tag checked against the plan's release."""

from __future__ import annotations

import re
from dataclasses import dataclass

from recommender.documents.plan import MAX_REPLICAS, Plan
from recommender.errors import InputError
from recommender.memory.engine import VllmVersion
from recommender.render.escape import SYSTEMD_EXECUTABLE_REFUSED
from recommender.render.names import validate_k8s_name
from recommender.serve_args import parse_serve_argv
from recommender.serve_release_errors import strict_errors
from recommender.values import MAX_STORAGE_GIB

# distribution/reference's grammar for a repository name (no tag, no digest) and for a tag; the first component
# is a registry only with a dot, a port or as localhost (docker's rule), else it is a lowercase path component.
_HOST = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_PATH = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(rf"(?:(?:localhost|{_HOST}(?:\.{_HOST})+|{_HOST}(?=:))(?::[0-9]+)?/)?{_PATH}(?:/{_PATH})*")
_TAG = re.compile(r"[\w][\w.-]{0,127}", re.ASCII)
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """Choices the plan does not make: where and how to deploy."""

    name: str | None = None
    namespace: str = "default"
    port: int = 8000
    image: str = "vllm/vllm-openai"
    image_tag: str | None = None
    storage_class: str | None = None
    storage_gib: int | None = None
    hf_token_secret: str = "hf-token"
    replicas: int | None = None  # override the plan's replica count
    runtime_class: str | None = None
    vllm_bin: str = "/opt/vllm/bin/vllm"
    user: str = "vllm"
    env_file: str = "/etc/vllm/vllm.env"
    hf_home: str = "/var/lib/vllm/huggingface"


def check_options(opts: RenderOptions) -> None:
    checks: list[tuple[bool, str]] = [
        (1 <= opts.port <= 65535, f"--port must be between 1 and 65535, got {opts.port}"),
        (
            opts.replicas is None or 1 <= opts.replicas <= MAX_REPLICAS,
            f"--replicas must be between 1 and {MAX_REPLICAS:,}, got {opts.replicas}",
        ),
        (
            opts.storage_gib is None or 1 <= opts.storage_gib <= MAX_STORAGE_GIB,
            f"--storage-gib must be between 1 and {MAX_STORAGE_GIB:,}, got {opts.storage_gib}",
        ),
        (
            len(opts.image) <= 255 and bool(_IMAGE.fullmatch(opts.image)),
            f"--image {opts.image!r} is not an image repository (give the tag with --image-tag)",
        ),
        (
            opts.image_tag is None or bool(_TAG.fullmatch(opts.image_tag)),
            f"--image-tag {opts.image_tag!r} is not a valid image tag",
        ),
        (
            opts.vllm_bin.startswith("/") and opts.vllm_bin.isprintable() and len(opts.vllm_bin) <= 4096,
            f"--vllm-bin must be an absolute path (systemd requires it), got {opts.vllm_bin!r}",
        ),
        (
            not any(ch in SYSTEMD_EXECUTABLE_REFUSED for ch in opts.vllm_bin),
            f"--vllm-bin {opts.vllm_bin!r}: systemd refuses quotes and backslashes in the program path",
        ),
        (bool(_USER.fullmatch(opts.user)), f"user {opts.user!r} is not a valid user name"),
    ]
    for what, value in (("--storage-class", opts.storage_class), ("--runtime-class", opts.runtime_class)):
        checks.append(
            (
                value is None or (len(value) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(value))),
                f"{what} {value!r} is not a valid Kubernetes name (lowercase letters, digits, '-', '.')",
            )
        )
    checks += [
        (p.startswith("/") and p.isprintable(), f"{p!r} is not an absolute path") for p in (opts.env_file, opts.hf_home)
    ]
    for ok, message in checks:
        if not ok:
            raise InputError(message)
    validate_k8s_name(opts.namespace, what="namespace")
    validate_k8s_name(opts.hf_token_secret, what="secret name")


def check_renderable(plan: Plan, opts: RenderOptions) -> None:
    """What would be deployed is what the plan judged: its command as the plan's release parses it (a hand-edited
    plan may add an option vLLM refuses) and, for vLLM's own image, that release's tag. Called on a validated
    plan before rendering; the renderers' escaping does not rely on it (tests/test_injection.py)."""
    version = VllmVersion.parse(plan.inputs.vllm_version)
    refused = strict_errors(parse_serve_argv(list(plan.best.command), version=version), version)
    if refused:
        raise InputError(
            f"the plan's command would not start: vLLM {version} refuses it ({refused[0]}); "
            "`vllm-plan check` on the plan names the fix"
        )
    official = re.fullmatch(r"(docker\.io/)?vllm/vllm-openai", opts.image)  # its tags are vLLM's releases
    tagged = VllmVersion.from_tag(opts.image_tag) if opts.image_tag and official else None
    if tagged is not None and tagged != version:
        raise InputError(
            f"--image-tag {opts.image_tag} runs vLLM {tagged}, but the plan was made for vLLM {version}: "
            f"plan for that release (`recommend --vllm-version {tagged}`) or leave --image-tag out"
        )
