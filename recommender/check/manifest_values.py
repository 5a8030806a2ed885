"""What the manifest readers share: YAML values read as the mapping or list they should be, argument lists,
the GPU count in a container's resources, and a container's env with the kubelet's `$(VAR)` expansion (Kubernetes
objects and Helm values both hold containers)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from recommender.errors import InputError
from recommender.quoting import quoted

NVIDIA_GPU = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"
# accelerators vLLM's CUDA memory model here does not describe: the server is found but not judged
_OTHER_ACCELERATORS = ("google.com/tpu", "habana.ai/gaudi", "amd.com/gpu", "aws.amazon.com/neuron")
# a value a template tool fills before the manifest is applied: ${VAR} (envsubst), $(VAR), $VAR, <name>, __NAME__
TEMPLATE_WORD = re.compile(r"^(\$\{[^}]*\}|\$\([^)]*\)|\$[A-Za-z_]\w*|<[^<>]+>|__[A-Za-z][A-Za-z0-9_]*__)$")


def as_mapping(value: Any) -> dict[str, Any]:
    """A mapping from a YAML value that should be one (anything else reads as empty)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def split_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def words_of(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(w) for w in value]
    return None


# a count of GPUs, nodes or replicas longer than this is no machine's (and int() refuses 4,301 digits)
_COUNT_DIGITS = 9


def is_count(text: str) -> bool:
    """A whole number as a manifest writes a count: ASCII digits (str.isdigit also takes '²', which int() refuses),
    at most 9 of them."""
    return text.isascii() and text.isdigit() and len(text) <= _COUNT_DIGITS


def _mig_devices(section: Mapping[str, Any]) -> Any:
    """The MIG devices a container requests under the GPU Operator's `mixed` strategy (`nvidia.com/mig-1g.10gb: 2`,
    each one GPU to CUDA and so to vLLM: NVIDIA GPU Operator, "MIG Support in Kubernetes"), summed; None if none."""
    counts = [str(v).strip() for k, v in section.items() if str(k).startswith(MIG_PREFIX)]
    if not counts:
        return None
    if not all(is_count(c) for c in counts):
        return next(c for c in counts if not is_count(c))
    return sum(int(c) for c in counts)


def mig_profile(resources: Any) -> str | None:
    """The MIG profile a container's GPUs are slices of (`nvidia.com/mig-3g.40gb: 1` -> "3g.40gb"), when it requests
    one profile and no whole GPUs; None otherwise (several profiles are not one device size)."""
    res = as_mapping(resources)
    profiles: set[str] = set()
    for part in ("limits", "requests"):
        section = as_mapping(res.get(part))
        if section.get(NVIDIA_GPU) is not None:
            return None
        profiles |= {str(k)[len(MIG_PREFIX) :] for k in section if str(k).startswith(MIG_PREFIX)}
    return profiles.pop() if len(profiles) == 1 else None


def gpu_count(resources: Any) -> tuple[int | None, str | None]:
    """(nvidia.com/gpu limit or request - or the MIG devices requested, `nvidia.com/mig-<profile>` -, another
    accelerator resource named). A count a template tool fills (`${GPU_COUNT}`) is not known: None
    (`unresolved_gpu_count` names it)."""
    res = as_mapping(resources)
    other = None
    for part in ("limits", "requests"):
        section = as_mapping(res.get(part))
        for key in section:
            if any(str(key).startswith(a) for a in _OTHER_ACCELERATORS):
                other = str(key)
        value = section.get(NVIDIA_GPU)
        if value is None:
            value = _mig_devices(section)
        if value is not None:
            text = str(value).strip()
            if TEMPLATE_WORD.match(text):
                return None, other
            if not is_count(text):
                if text.isascii() and text.isdigit():
                    raise InputError(f"{NVIDIA_GPU} (or MIG devices): {len(text):,} digits is not a number of GPUs")
                raise InputError(f"{NVIDIA_GPU} (or MIG devices): {quoted(text)} is not a whole number of GPUs")
            return int(text), other
    return None, other


def unresolved_gpu_count(resources: Any) -> str | None:
    """The template variable an nvidia.com/gpu count is written as (`${VLLM_GPU_COUNT}`), if it is one."""
    res = as_mapping(resources)
    for part in ("limits", "requests"):
        value = as_mapping(res.get(part)).get(NVIDIA_GPU)
        if value is not None:
            text = str(value).strip()
            return text if TEMPLATE_WORD.match(text) else None
    return None


def k8s_env(container: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """A container's literal env (later entries see earlier ones, as the kubelet does) and the names set from
    somewhere this file does not show (valueFrom)."""
    env: dict[str, str] = {}
    external: list[str] = []
    for item in as_list(container.get("env")):
        if not isinstance(item, dict) or "name" not in item:
            continue
        name = str(item["name"])
        if "value" in item:
            env[name], _ = k8s_substitute(str(item["value"] if item["value"] is not None else ""), env)
        else:
            external.append(name)
    return env, external


def k8s_substitute(text: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """The kubelet's `$(VAR)` expansion: defined names replaced, `$$` escapes, undefined ones left as written."""
    missing: list[str] = []

    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        if name in env:
            return env[name]
        missing.append(f"$({name})")
        return m.group(0)

    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", sub, text), missing
