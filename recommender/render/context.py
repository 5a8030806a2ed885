"""Plan document -> the values each template places (pure: every number and string is computed here)."""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass
from typing import Any

from recommender.errors import InputError
from recommender.render.names import k8s_name, systemd_quote, validate_k8s_name

ARTIFACTS = ("command", "systemd", "k8s", "helm", "compose")
ANNOTATION_PREFIX = "vllm-plan.io"


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


def one_line(text: str) -> str:
    """Text safe inside a comment or a one-line systemd setting: control characters shown as escapes."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _yaml(value: Any) -> str:
    """A YAML scalar that parses back to exactly `value` (JSON is a subset of YAML flow scalars)."""
    return json.dumps(value, ensure_ascii=False)


def _plan_fields(plan: dict[str, Any]) -> dict[str, Any]:
    try:
        return {
            "argv": [str(a) for a in plan["command"]],
            "model": str(plan["model"]),
            "gpus": int(plan["gpus"]),
            "replicas": int(plan.get("replicas") or 1),
            "tp": int(plan["tensor_parallel_size"]),
            "pp": int(plan["pipeline_parallel_size"]),
            "inputs": dict(plan["inputs"]),
            "prediction": dict(plan["prediction"]),
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"the plan document is missing or has a malformed field ({exc})") from exc


def build_context(plan: dict[str, Any], opts: RenderOptions, *, tool_version: str) -> dict[str, Any]:
    """Everything the templates need, computed once."""
    p = _plan_fields(plan)
    if opts.replicas is not None:
        if opts.replicas < 1:
            raise InputError(f"--replicas must be at least 1, got {opts.replicas}")
        p["replicas"] = opts.replicas
    argv = p["argv"]
    if argv[:2] != ["vllm", "serve"] or len(argv) < 3:
        raise InputError("the plan's command must start with `vllm serve MODEL`")
    notes: list[str] = []
    name, note = k8s_name(opts.name or f"vllm-{p['model'].split('/')[-1]}", what="name", max_len=50)
    if note and opts.name:
        notes.append(note)
    namespace = validate_k8s_name(opts.namespace, what="namespace")
    secret = validate_k8s_name(opts.hf_token_secret, what="secret name")
    if not 1 <= opts.port <= 65535:
        raise InputError(f"--port must be between 1 and 65535, got {opts.port}")
    inputs, pred = p["inputs"], p["prediction"]
    version = str(inputs.get("vllm_version") or pred.get("vllm_version"))
    gpus_per_replica = p["tp"] * p["pp"]
    nodes = int(inputs.get("nodes") or 1)
    gpus_per_pod = gpus_per_replica // nodes if p["pp"] > 1 and nodes > 1 else gpus_per_replica
    weights_gib = float(pred.get("weights_gib") or 0) * gpus_per_replica
    serve_args = [*argv[2:], "--host", "0.0.0.0", "--port", str(opts.port)]
    multinode = nodes > 1 and p["pp"] > 1
    if multinode:
        serve_args += ["--distributed-executor-backend", "ray"]
    # Loading time budget: 10 s per GiB of weights (download + load) on top of 2 minutes, at most 1 hour.
    startup_seconds = min(3600, 120 + math.ceil(weights_gib * 10))
    storage = opts.storage_gib or max(20, math.ceil(weights_gib * 1.3 / 10) * 10)
    shm_gib = 1 if gpus_per_pod == 1 else min(32, 2 * gpus_per_pod)
    cpu = max(2, 4 * gpus_per_pod)
    memory_gib = 16 + 8 * gpus_per_pod
    gpu_key = str(inputs.get("gpu", ""))
    annotations = {
        f"{ANNOTATION_PREFIX}/tool-version": tool_version,
        f"{ANNOTATION_PREFIX}/vllm-version": version,
        f"{ANNOTATION_PREFIX}/gpu": gpu_key,
        f"{ANNOTATION_PREFIX}/kv-cache-tokens": str(pred.get("kv_cache_tokens")),
        f"{ANNOTATION_PREFIX}/max-concurrency": str(pred.get("max_concurrency")),
        f"{ANNOTATION_PREFIX}/max-model-len": str(pred.get("max_model_len")),
        f"{ANNOTATION_PREFIX}/target-concurrency": str(inputs.get("concurrency") or ""),
        f"{ANNOTATION_PREFIX}/target-context": str(inputs.get("context") or ""),
        f"{ANNOTATION_PREFIX}/replicas": str(p["replicas"]),
    }
    labels = {
        "app.kubernetes.io/name": "vllm",
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/version": version,
        "app.kubernetes.io/component": "inference-server",
        "app.kubernetes.io/managed-by": "vllm-plan",
    }
    visible = [
        ",".join(str(g) for g in range(r * gpus_per_replica, (r + 1) * gpus_per_replica)) for r in range(p["replicas"])
    ]
    exec_start = [opts.vllm_bin, "serve", *argv[2:], "--host", "0.0.0.0"]
    units = [
        {
            "name": f"{name}-{r}" if p["replicas"] > 1 else name,
            "cuda_visible_devices": visible[r],
            "device_ids": visible[r].split(","),
            # compose interpolates $ in every value: $$ keeps it literal
            "compose_args": [
                a.replace("$", "$$") for a in [*argv[2:], "--host", "0.0.0.0", "--port", str(opts.port + r)]
            ],
            "exec_start": " ".join(systemd_quote(a) for a in [*exec_start, "--port", str(opts.port + r)]),
            "port": opts.port + r,
        }
        for r in range(p["replicas"])
    ]
    return {
        "tool_version": tool_version,
        "vllm_version": version,
        "model": p["model"],
        "name": name,
        "model_comment": one_line(p["model"]),
        "model_systemd": one_line(p["model"]).replace("%", "%%").replace("$", "$$"),
        "namespace": namespace,
        "port": opts.port,
        "image": f"{opts.image}:{opts.image_tag or 'v' + version}",
        "image_repository": opts.image,
        "image_tag": opts.image_tag or f"v{version}",
        "gpus_per_pod": gpus_per_pod,
        "gpus_per_replica": gpus_per_replica,
        "replicas": p["replicas"],
        "nodes": nodes,
        "multinode": multinode,
        "tp": p["tp"],
        "pp": p["pp"],
        "shell_command": shlex.join([*argv, "--host", "0.0.0.0", "--port", str(opts.port)]),
        "serve_args": serve_args,
        "serve_args_shell": shlex.join(["vllm", "serve", *serve_args]),
        "startup_seconds": startup_seconds,
        "startup_failure_threshold": math.ceil(startup_seconds / 10),
        "storage": f"{storage}Gi",
        "access_mode": "ReadWriteOnce" if p["replicas"] == 1 else "ReadWriteMany",
        "storage_class": opts.storage_class,
        "shm": f"{shm_gib}Gi",
        "shm_compose": f"{shm_gib}g",
        "cpu": str(cpu),
        "cpu_count": cpu,
        "memory": f"{memory_gib}Gi",
        "hf_token_secret": secret,
        "gpu_product": inputs.get("gpu_product_label"),
        "runtime_class": opts.runtime_class,
        "annotations": annotations,
        "labels": labels,
        "comment_annotations": {k: one_line(v) for k, v in annotations.items()},
        "units": units,
        "user": opts.user,
        "env_file": opts.env_file,
        "hf_home": opts.hf_home,
        "timeout_start": startup_seconds + 60,
        "prediction": pred,
        "inputs": inputs,
        "notes": notes,
        "helm_extra_args": _helm_extra(argv[3:]),
        "max_model_len": pred.get("max_model_len"),
        "gpu_memory_utilization": pred.get("gpu_memory_utilization"),
        "max_num_seqs": pred.get("max_num_seqs"),
        "dtype": "auto",
    }


_HELM_FIELDS = {"--tensor-parallel-size", "--max-model-len", "--gpu-memory-utilization", "--max-num-seqs"}


def _helm_extra(flags: list[str]) -> list[str]:
    """Flags the production-stack chart has no dedicated key for."""
    out: list[str] = []
    i = 0
    while i < len(flags):
        flag = flags[i]
        takes_value = i + 1 < len(flags) and not flags[i + 1].startswith("--")
        if flag not in _HELM_FIELDS:
            out.append(flag)
            if takes_value:
                out.append(flags[i + 1])
        i += 2 if takes_value else 1
    return out


yaml_scalar = _yaml
