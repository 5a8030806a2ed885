"""Find vLLM server definitions in commands, Kubernetes manifests, Helm values, compose files, systemd units
and plan documents (pure: takes text, returns Found records)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

from recommender.check.found import Found
from recommender.documents import plan_annotations, plan_from_data
from recommender.errors import InputError

_API_SERVER = "vllm.entrypoints.openai.api_server"


def normalise_argv(words: list[str]) -> list[str] | None:
    """`vllm serve M ...`, `python -m vllm.entrypoints.openai.api_server --model M ...` -> ["vllm","serve",M,...]."""
    for i, w in enumerate(words):
        if (w == "vllm" or w.endswith("/vllm")) and i + 1 < len(words) and words[i + 1] == "serve":
            return ["vllm", "serve", *words[i + 2 :]]
        if w == _API_SERVER:
            rest = words[i + 1 :]
            if "--model" in rest:
                k = rest.index("--model")
                if k + 1 < len(rest):
                    return ["vllm", "serve", rest[k + 1], *rest[:k], *rest[k + 2 :]]
            return ["vllm", "serve", *rest]
    return None


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False)
    except ValueError as exc:
        raise InputError(f"cannot parse the command ({exc})") from exc


def comment_annotations(text: str) -> dict[str, str]:
    """`# vllm-plan.io/key: value` comment lines written by `render` into scripts and units."""
    return dict(re.findall(r"^#\s*(vllm-plan\.io/[a-z-]+):\s*(.*?)\s*$", text, re.M))


def read_command(text: str, source: str) -> list[Found]:
    """A shell line / script holding `vllm serve ...` (continuation lines joined)."""
    joined = re.sub(r"\\\n", " ", text)
    found = []
    for line in joined.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        words = _split(stripped.removeprefix("exec ").strip())
        argv = normalise_argv(words)
        if argv:
            found.append(Found(source, "command", tuple(argv), annotations=comment_annotations(text)))
    return found


def read_systemd(text: str, source: str) -> list[Found]:
    """ExecStart= of a systemd unit."""
    out = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        if line.startswith("ExecStart="):
            value = line.split("=", 1)[1].lstrip("-@:+!")
            words = [w.replace("$$", "$").replace("%%", "%") for w in _split(value)]
            argv = normalise_argv(words)
            if argv:
                gpus = re.search(r"^Environment=.*CUDA_VISIBLE_DEVICES=([\d,]+)", text, re.M)
                count = len(gpus.group(1).split(",")) if gpus else None
                out.append(
                    Found(source, "ExecStart", tuple(argv), gpus_per_pod=count, annotations=comment_annotations(text))
                )
    return out


def _container_argv(container: dict[str, Any]) -> list[str] | None:
    words = [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]
    argv = normalise_argv(words)
    if argv is None and words[:2] in (["sh", "-c"], ["bash", "-c"], ["/bin/sh", "-c"], ["/bin/bash", "-c"]):
        for chunk in words[2:]:
            for part in re.split(r"&&|;", chunk):
                argv = normalise_argv(_split(part.strip().removeprefix("exec ").strip()))
                if argv:
                    return argv
    if argv is None and "vllm" in str(container.get("image", "")) and not container.get("command"):
        # the vllm/vllm-openai image's entrypoint is `vllm serve`
        argv = normalise_argv(["vllm", "serve", *[str(a) for a in container.get("args") or []]])
    return argv


def _gpu_product(pod_spec: dict[str, Any]) -> str | None:
    selector = pod_spec.get("nodeSelector") or {}
    if "nvidia.com/gpu.product" in selector:
        return str(selector["nvidia.com/gpu.product"])
    terms = (
        ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    for term in terms:
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == "nvidia.com/gpu.product" and expr.get("operator") == "In" and expr.get("values"):
                return str(expr["values"][0])
    return None


def _gpu_count(container: dict[str, Any]) -> int | None:
    res = container.get("resources") or {}
    for part in ("limits", "requests"):
        value = (res.get(part) or {}).get("nvidia.com/gpu")
        if value is not None:
            try:
                return int(str(value))
            except ValueError:
                return None
    return None


def _has_shm(pod_spec: dict[str, Any], container: dict[str, Any]) -> bool:
    memory_volumes = {
        v.get("name") for v in pod_spec.get("volumes") or [] if (v.get("emptyDir") or {}).get("medium") == "Memory"
    }
    return any(
        m.get("mountPath") == "/dev/shm" and m.get("name") in memory_volumes
        for m in container.get("volumeMounts") or []
    )


def _pod_specs(doc: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], int]]:
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
        tmpl = spec.get("template") or {}
        yield tmpl.get("spec") or {}, (tmpl.get("metadata") or {}).get("annotations") or {}, 1
    elif kind == "Pod":
        yield spec, {}, 1
    elif kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        size = int(lwt.get("size") or 1)
        leader = lwt.get("leaderTemplate") or lwt.get("workerTemplate") or {}
        yield leader.get("spec") or {}, (leader.get("metadata") or {}).get("annotations") or {}, size


def read_kubernetes(docs: list[dict[str, Any]], source: str) -> list[Found]:
    """vLLM containers of the workloads in a (multi-document) manifest."""
    out = []
    for doc in docs:
        meta = doc.get("metadata") or {}
        resource = f"{doc.get('kind')}/{meta.get('namespace', 'default')}/{meta.get('name', '?')}"
        for pod_spec, pod_annotations, size in _pod_specs(doc):
            for container in pod_spec.get("containers") or []:
                argv = _container_argv(container)
                if argv is None:
                    continue
                image = str(container.get("image", ""))
                tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else None
                annotations = {
                    **{str(k): str(v) for k, v in (meta.get("annotations") or {}).items()},
                    **{str(k): str(v) for k, v in pod_annotations.items()},
                }
                out.append(
                    Found(
                        source,
                        resource,
                        tuple(argv),
                        gpu_product=_gpu_product(pod_spec),
                        gpus_per_pod=_gpu_count(container),
                        pods_per_replica=size,
                        has_shm=_has_shm(pod_spec, container),
                        annotations=annotations,
                        image_tag=tag,
                    )
                )
    return out


def read_helm(values: dict[str, Any], source: str) -> list[Found]:
    """production-stack chart values: servingEngineSpec.modelSpec[]."""
    out = []
    for spec in (values.get("servingEngineSpec") or {}).get("modelSpec") or []:
        cfg = spec.get("vllmConfig") or {}
        argv = ["vllm", "serve", str(spec.get("modelURL", ""))]
        for key, flag in (
            ("tensorParallelSize", "--tensor-parallel-size"),
            ("maxModelLen", "--max-model-len"),
            ("gpuMemoryUtilization", "--gpu-memory-utilization"),
            ("maxNumSeqs", "--max-num-seqs"),
            ("dtype", "--dtype"),
        ):
            if cfg.get(key) is not None:
                argv += [flag, str(cfg[key])]
        argv += [str(a) for a in cfg.get("extraArgs") or []]
        product = None
        for term in spec.get("nodeSelectorTerms") or []:
            for expr in term.get("matchExpressions") or []:
                if expr.get("key") == "nvidia.com/gpu.product" and expr.get("values"):
                    product = str(expr["values"][0])
        gpus = spec.get("requestGPU")
        out.append(
            Found(
                source,
                f"modelSpec/{spec.get('name', '?')}",
                tuple(argv),
                gpu_product=product,
                gpus_per_pod=int(gpus) if gpus is not None else None,
                has_shm=bool(spec.get("shmSize")),
                image_tag=spec.get("tag"),
            )
        )
    return out


def read_compose(doc: dict[str, Any], source: str) -> list[Found]:
    """docker compose services whose command runs vLLM."""
    out = []
    for name, svc in (doc.get("services") or {}).items():
        command = svc.get("command")
        words = _split(command) if isinstance(command, str) else [str(w) for w in command or []]
        words = [w.replace("$$", "$") for w in words]
        entry = svc.get("entrypoint")
        argv = normalise_argv(words)
        if argv is None and "vllm" in str(svc.get("image", "")) and not entry:
            argv = normalise_argv(["vllm", "serve", *words])
        if argv is None:
            continue
        devices = (((svc.get("deploy") or {}).get("resources") or {}).get("reservations") or {}).get("devices") or []
        count = None
        for d in devices:
            if d.get("device_ids"):
                count = len(d["device_ids"])
            elif d.get("count") not in (None, "all"):
                count = int(d["count"])
        image = str(svc.get("image", ""))
        tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else None
        has_shm = bool(svc.get("shm_size")) or svc.get("ipc") == "host"
        annotations = {str(k): str(v) for k, v in (doc.get("x-vllm-plan") or {}).items()}
        out.append(
            Found(
                source,
                f"service/{name}",
                tuple(argv),
                gpus_per_pod=count,
                has_shm=has_shm,
                image_tag=tag,
                annotations=annotations,
            )
        )
    return out


def read_plan(doc: dict[str, Any], source: str) -> list[Found]:
    """A plan document written by `recommend`, validated (a malformed or tampered plan is an input error); its
    promise and prediction become the annotations `render` would write, so the same checks apply."""
    plan = plan_from_data(doc, source)
    tool = plan.generator.removeprefix("vllm-plan ")
    claimed = plan_annotations.from_plan(plan, tool_version=tool)
    return [Found(source, "plan", plan.best.command, annotations=dict(plan_annotations.encode(claimed)))]
