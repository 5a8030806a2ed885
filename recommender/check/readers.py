"""Find vLLM servers in commands and scripts, Kubernetes objects (workloads, LeaderWorkerSet, Ray, KServe, KubeAI,
AIBrix, NVIDIA Dynamo, OME and any custom resource holding a pod template or a single runner container), Helm values (production-stack, the vLLM chart), compose
files, systemd units and plan documents, substituting variables as each platform does (pure: text in, Found out).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from recommender.check.commands import (
    comment_annotations,
    find_in_words,
    not_evaluable,
    numbered,
)
from recommender.check.found import Found
from recommender.check.images import env_platform, image_tag, is_vllm_image, visible_devices
from recommender.documents import plan_annotations, plan_from_data
from recommender.errors import InputError
from recommender.units import GiB

_NVIDIA = "nvidia.com/gpu"
# accelerators vLLM's CUDA memory model here does not describe: the server is found but not judged
_OTHER_ACCELERATORS = ("google.com/tpu", "habana.ai/gaudi", "amd.com/gpu", "aws.amazon.com/neuron")


def _m(value: Any) -> dict[str, Any]:
    """A mapping from a YAML value that should be one (anything else reads as empty)."""
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# --- systemd ---------------------------------------------------------------------------------------------------


def read_systemd(text: str, source: str) -> list[Found]:
    """ExecStart= of a systemd unit, with Environment= substituted as systemd does (`${X}`, `$X`, `$$`, `%%`)."""
    joined = re.sub(r"\\\r?\n", " ", text)
    env: dict[str, str] = {}
    unresolved: list[str] = []
    for m in re.finditer(r"^Environment=(.*)$", joined, re.M):
        for item in _split_or_raw(m.group(1)):
            k, eq, v = item.partition("=")
            if eq:
                env[k] = v
    if re.search(r"^EnvironmentFile=", joined, re.M):
        unresolved.append("EnvironmentFile")
    problems = tuple(_systemd_device_problems(joined))
    out = []
    for m in re.finditer(r"^ExecStart=(.*)$", joined, re.M):
        value = m.group(1).lstrip("-@:+!").replace("%%", "%")
        words: list[str] = []
        missing: list[str] = []
        for word in _split_or_raw(value.replace("$$", "\x00")):
            words += _systemd_expand(word, env, missing)
        words = [w.replace("\x00", "$") for w in words]
        out += [
            Found(
                source,
                "ExecStart",
                hit.argv,
                gpus_per_pod=visible_devices(hit.env),
                annotations=comment_annotations(text),
                serve_form=hit.serve,
                unresolved=tuple(dict.fromkeys([*missing, *hit.unresolved])),
                env=dict(hit.env),
                problems=problems,
                not_evaluable=env_platform(hit.env),
            )
            for hit in find_in_words(words, env, tuple(missing), None)
        ]
    return numbered(out)


def _systemd_device_problems(unit: str) -> list[str]:
    """Sandboxing that hides the GPUs from the service (systemd.exec(5)): vLLM then finds no CUDA device."""
    out = []
    if re.search(r"^PrivateDevices=(yes|true|on|1)\s*$", unit, re.M | re.I):
        out.append("PrivateDevices=yes hides /dev/nvidia* from the service: CUDA finds no GPU and vLLM will not start")
    policy = re.search(r"^DevicePolicy=(closed|strict)\s*$", unit, re.M)
    if policy and not re.search(r"^DeviceAllow=.*nvidia", unit, re.M):
        out.append(
            f"DevicePolicy={policy.group(1)} without DeviceAllow=/dev/nvidia*: CUDA finds no GPU and vLLM will not start"
        )
    return out


def _split_or_raw(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _systemd_expand(word: str, env: Mapping[str, str], missing: list[str]) -> list[str]:
    """`${X}` keeps one word; a word that is exactly `$X` splits on whitespace (systemd.service(5))."""
    m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
    if m:
        if m.group(1) not in env:
            missing.append(word)
            return [word]
        return env[m.group(1)].split()

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in env:
            missing.append(match.group(0))
            return match.group(0)
        return env[name]

    return [re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, word)]


# --- Kubernetes -------------------------------------------------------------------------------------------------


def k8s_env(container: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """A container's literal env (later entries see earlier ones, as the kubelet does) and the names set from
    somewhere this file does not show (valueFrom)."""
    env: dict[str, str] = {}
    external: list[str] = []
    for item in _l(container.get("env")):
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


def _words(value: Any) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(w) for w in value]
    return None


def _gpu_count(resources: Any) -> tuple[int | None, str | None]:
    """(nvidia.com/gpu limit or request, another accelerator resource named)."""
    res = _m(resources)
    other = None
    for part in ("limits", "requests"):
        section = _m(res.get(part))
        for key in section:
            if any(str(key).startswith(a) for a in _OTHER_ACCELERATORS):
                other = str(key)
        value = section.get(_NVIDIA)
        if value is not None:
            text = str(value).strip()
            if not text.isdigit():
                raise InputError(f"{_NVIDIA}: {text!r} is not a whole number of GPUs")
            return int(text), other
    return None, other


def _node_labels(pod_spec: Mapping[str, Any]) -> dict[str, str]:
    """nodeSelector, plus required node-affinity `In` terms with one value (a choice of several is no answer)."""
    labels = (
        {str(k): str(v) for k, v in (pod_spec.get("nodeSelector") or {}).items()}
        if isinstance(pod_spec.get("nodeSelector"), dict)
        else {}
    )
    affinity = _m(pod_spec.get("affinity"))
    node = _m(affinity.get("nodeAffinity"))
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    for term in terms if isinstance(terms, list) else []:
        for expr in _l(_m(term).get("matchExpressions")):
            if isinstance(expr, dict) and expr.get("operator") == "In" and len(_l(expr.get("values"))) == 1:
                labels.setdefault(str(expr.get("key")), str(expr["values"][0]))
    return labels


def _has_shm(pod_spec: Mapping[str, Any], container: Mapping[str, Any]) -> bool:
    if pod_spec.get("hostIPC") is True:
        return True
    memory_volumes = {
        str(v.get("name"))
        for v in _l(pod_spec.get("volumes"))
        if isinstance(v, dict)
        and v.get("name") is not None
        and (_m(v.get("emptyDir")).get("medium") == "Memory" or _m(v.get("hostPath")).get("path") == "/dev/shm")
    }
    return any(
        isinstance(m, dict) and m.get("mountPath") == "/dev/shm" and str(m.get("name")) in memory_volumes
        for m in _l(container.get("volumeMounts"))
    )


def _pods(doc: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    """(role, pod spec, pod template metadata) for every pod template in a document, known kind or not: any mapping
    with a `containers` list is a pod spec (CRDs such as StormService or RayClusterFleet nest it deeply)."""

    def walk(node: Any, path: tuple[str, ...], meta: Mapping[str, Any]) -> Iterator[tuple[str, Any, Any]]:
        if isinstance(node, dict):
            if isinstance(node.get("containers"), list):
                yield "/".join(path), node, meta
                return
            for key, value in node.items():  # one container under its own key: OME's runner, Dynamo's mainContainer
                if key in _SINGLE_CONTAINER and _is_container(value):
                    yield "/".join((*path, str(key))), {**node, "containers": [value]}, meta
            inner_meta = _m(node.get("metadata")) or meta
            for key, value in node.items():
                if key not in ("metadata", "status"):
                    yield from walk(value, (*path, str(key)), inner_meta)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, (*path, str(i)), meta)

    yield from walk(doc.get("spec"), (), {})


_SINGLE_CONTAINER = ("runner", "mainContainer")


def _is_container(node: Any) -> bool:
    return isinstance(node, dict) and ("command" in node or "args" in node)


def _pod_gpus(pod_spec: Mapping[str, Any]) -> int:
    total = 0
    for c in _l(pod_spec.get("containers")):
        try:
            count, _ = _gpu_count(c.get("resources") if isinstance(c, dict) else None)
        except InputError:
            count = None
        total += count or 0
    return total


def _group_gpus(doc: Mapping[str, Any], role: str) -> tuple[int | None, bool, int]:
    """(GPUs of the engine's whole group, a pool?, pods per replica) for multi-pod kinds, from the leader's role."""
    pods = list(_pods(doc))
    if "leaderTemplate" in role or "workerTemplate" in role:  # LeaderWorkerSet: leader + (size - 1) workers
        lwt = _m(_m(doc.get("spec")).get("leaderWorkerTemplate"))
        size = int(str(lwt.get("size") or 1)) if str(lwt.get("size") or 1).isdigit() else 1
        leader = next((p for r, p, _ in pods if "leaderTemplate" in r), None)
        worker = next((p for r, p, _ in pods if "workerTemplate" in r), None)
        total = _pod_gpus(leader or worker or {}) + (size - 1) * _pod_gpus(worker or leader or {})
        return total, False, size
    if "headGroupSpec" in role:  # Ray: the head and every worker group form one pool of GPUs
        total = _pod_gpus(next((p for r, p, _ in pods if "headGroupSpec" in r), {}))
        prefix = role.split("headGroupSpec")[0]
        for r, p, _ in pods:
            if r.startswith(prefix + "workerGroupSpecs"):
                group = _dig(doc.get("spec"), r.split("/")[: r.split("/").index("workerGroupSpecs") + 2])
                reps = group.get("replicas", group.get("minReplicas", 1)) if isinstance(group, dict) else 1
                hosts = group.get("numOfHosts", 1) if isinstance(group, dict) else 1
                total += int(reps or 0) * int(hosts or 1) * _pod_gpus(p)
        return total, True, 1
    return None, False, 1


def _dig(node: Any, path: list[str]) -> Any:
    for key in path:
        if isinstance(node, list) and key.isdigit():
            node = node[int(key)]
        elif isinstance(node, dict):
            node = node.get(key)
        else:
            return None
    return node


def resource_name(doc: Mapping[str, Any], index: int) -> str:
    meta = _m(doc.get("metadata"))
    name = meta.get("name") or f"#{index}"
    return f"{doc.get('kind')}/{meta.get('namespace', 'default')}/{name}"


def read_kubernetes(docs: list[dict[str, Any]], source: str) -> list[Found]:
    """vLLM containers of every object in a (multi-document) manifest."""
    out: list[Found] = []
    for index, doc in enumerate(docs, 1):
        kind = str(doc.get("kind"))
        if kind == "Model" and str(doc.get("apiVersion", "")).startswith("kubeai.org/"):
            out += read_kubeai(doc, source, index)
            continue
        if kind in ("RayService",) and isinstance(_m(doc.get("spec")).get("serveConfigV2"), str):
            out += read_ray_serve_llm(doc, source, index)
        if kind == "InferenceService" and str(doc.get("apiVersion", "")).startswith("inference.llmkube.dev/"):
            out += read_llmkube(doc, docs, source, index)
            continue
        if kind == "InferenceService":
            out += read_inference_service(doc, source, index)
            continue
        if kind == "LLMInferenceService":
            out += read_llm_inference_service(doc, source, index)
            continue
        if kind == "DynamoGraphDeployment":
            out += read_dynamo(doc, source, index)
            continue
        out += _read_pods(doc, source, index)
    return out


def _read_pods(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    out = []
    for role, pod_spec, pod_meta in _pods(doc):
        for container in _l(pod_spec.get("containers")):
            if isinstance(container, dict):
                found = _container_found(doc, role, pod_spec, pod_meta, container, source, index)
                out += found
    return out


def _container_found(
    doc: dict[str, Any],
    role: str,
    pod_spec: Mapping[str, Any],
    pod_meta: Mapping[str, Any],
    container: Mapping[str, Any],
    source: str,
    index: int,
) -> list[Found]:
    command, args = _words(container.get("command")), _words(container.get("args"))
    if command is None or args is None:
        raise InputError(f"{source} ({resource_name(doc, index)}): container command and args must be lists of strings")
    env, _ = k8s_env(container)  # names set from secrets or fields stay unresolved
    missing: list[str] = []
    words = []
    for w in command + args:
        text, miss = k8s_substitute(w, env)
        words.append(text)
        missing += miss
    image = str(container.get("image", ""))
    # KubeRay starts every Ray pod with its own `ray start` command: the image's entrypoint never runs there
    entrypoint = None if container.get("command") or "GroupSpec" in role else image
    hits = find_in_words(words, env, tuple(missing), entrypoint, vllm_entrypoint=_runs_vllm_args(doc, container, words))
    if not hits:
        return []
    gpus, other = _gpu_count(container.get("resources"))
    total, pool, size = _group_gpus(doc, role)
    meta = _m(doc.get("metadata"))
    annotations = {
        **{str(k): str(v) for k, v in _m(meta.get("annotations")).items()},
        **{str(k): str(v) for k, v in _m(_m(pod_meta).get("annotations")).items()},
    }
    return [
        Found(
            source,
            resource_name(doc, index),
            hit.argv,
            gpus_per_pod=gpus,
            pods_per_replica=size,
            # KubeRay adds a memory-backed /dev/shm to every Ray pod
            has_shm=_has_shm(pod_spec, container) or "GroupSpec" in role,
            annotations=annotations,
            image_tag=image_tag(image) if is_vllm_image(image) else None,
            container=str(container.get("name", "")),
            serve_form=hit.serve,
            node_labels=_node_labels(pod_spec),
            gpus_total=total,
            gpus_at_least=pool,
            unresolved=tuple(dict.fromkeys(hit.unresolved)),
            not_evaluable=f"runs on {other}, not NVIDIA GPUs"
            if other and not gpus
            else not_evaluable(hit.argv, hit.env, image),
            env=dict(hit.env),
        )
        for hit in hits
    ]


def _runs_vllm_args(doc: Mapping[str, Any], container: Mapping[str, Any], args: list[str]) -> bool:
    """Arguments to an image's own entrypoint: a vLLM image, or (an image named by a placeholder or a private
    build) `--model` arguments in a workload or container named for vLLM."""
    image = str(container.get("image", ""))
    if is_vllm_image(image):
        return True
    names = f"{_m(doc.get('metadata')).get('name', '')} {container.get('name', '')}".lower()
    return "vllm" in names and any(a == "--model" or a.startswith("--model=") for a in args)


def read_dynamo(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """NVIDIA Dynamo's DynamoGraphDeployment: each service's extraPodSpec.mainContainer (workers run
    `python3 -m dynamo.vllm` with vLLM's engine flags); `resources.limits.gpu` per pod and `multinode.nodeCount`
    pods per engine."""
    out: list[Found] = []
    for name, service in _m(_m(doc.get("spec")).get("services")).items():
        pod = _m(_m(service).get("extraPodSpec"))
        main = _m(pod.get("mainContainer"))
        if not _is_container(main):
            continue
        res = _m(_m(service).get("resources"))
        count = _m(res.get("limits")).get("gpu", _m(res.get("requests")).get("gpu"))
        gpus = int(str(count)) if str(count).isdigit() else None
        nodes = _m(_m(service).get("multinode")).get("nodeCount", 1)
        nodes = int(str(nodes)) if str(nodes).isdigit() else 1
        container = {**main, "name": main.get("name") or str(name)}
        if gpus is not None:
            container["resources"] = {"limits": {_NVIDIA: gpus}}
        found = _container_found(
            doc, f"services/{name}", {**pod, "containers": [container]}, {}, container, source, index
        )
        out += [
            # the image's tag is Dynamo's release, not vLLM's
            replace(f, gpus_total=gpus * nodes if gpus is not None else None, pods_per_replica=nodes, image_tag=None)
            for f in found
        ]
    return out


def read_llmkube(doc: dict[str, Any], docs: list[dict[str, Any]], source: str, index: int) -> list[Found]:
    """LLMKube's InferenceService with `runtime: vllm`: the Model it references (`source: hf://org/name@rev`,
    `hardware.gpu`), `vllmConfig` (each key a vLLM flag: maxModelLen -> --max-model-len), `extraArgs`, `env`."""
    spec = _m(doc.get("spec"))
    if str(spec.get("runtime", "")).lower() != "vllm":
        return []
    ref = str(spec.get("modelRef", ""))
    model_doc = next((d for d in docs if d.get("kind") == "Model" and _m(d.get("metadata")).get("name") == ref), {})
    model_spec = _m(model_doc.get("spec"))
    model = re.sub(r"^(hf|pvc|s3|gs)://", "", str(model_spec.get("source", ""))).split("@", 1)[0] or f"<{ref}>"
    argv = ["vllm", "serve", model]
    for key, value in _m(spec.get("vllmConfig")).items():
        flag = "--" + re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", str(key)).lower()
        argv += [flag] if value is True else ["--no-" + flag[2:]] if value is False else [flag, str(value)]
    args = _words(spec.get("extraArgs"))
    if args is None:
        raise InputError(f"{source} ({resource_name(doc, index)}): spec.extraArgs must be a list of strings")
    argv += args
    env, _ = k8s_env(spec)
    gpu = _m(_m(model_spec.get("hardware")).get("gpu"))
    vendor = str(gpu.get("vendor", "nvidia")).lower()
    image = str(spec.get("image", ""))
    mounts = {"volumeMounts": spec.get("extraVolumeMounts")}
    pod = {"volumes": spec.get("extraVolumes"), "containers": [mounts]}
    return [
        Found(
            source,
            resource_name(doc, index),
            tuple(argv),
            gpus_per_pod=int(gpu["count"]) if str(gpu.get("count", "")).isdigit() else None,
            has_shm=_has_shm(pod, mounts),
            image_tag=image_tag(image) if is_vllm_image(image) else None,
            container="vllm",
            not_evaluable=f"the Model's GPUs are {vendor}, not NVIDIA"
            if vendor != "nvidia"
            else not_evaluable(tuple(argv), env, image),
            env=env,
        )
    ]


def read_kubeai(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """KubeAI Model: engine VLLM, `url: hf://org/name`, `args`, `resourceProfile: nvidia-gpu-l4:2`."""
    spec = _m(doc.get("spec"))
    if str(spec.get("engine", "")).lower() != "vllm":
        return []
    url = str(spec.get("url", ""))
    model = re.sub(r"^(hf|pvc|s3|gs|oss)://", "", url)
    args = _words(spec.get("args"))
    if args is None:
        raise InputError(f"{source} ({resource_name(doc, index)}): spec.args must be a list of strings")
    profile, _, count = str(spec.get("resourceProfile", "")).partition(":")
    product = None
    other = None
    if profile.startswith("nvidia-gpu-"):
        product = profile.removeprefix("nvidia-gpu-")
    elif profile and profile != "cpu":
        other = profile
    env = {str(k): str(v) for k, v in (spec.get("env") or {}).items()} if isinstance(spec.get("env"), dict) else {}
    return [
        Found(
            source,
            resource_name(doc, index),
            ("vllm", "serve", model, *args),
            gpu_product=product,
            gpus_per_pod=int(count) if count.isdigit() else None,
            has_shm=True,  # KubeAI mounts a memory-backed /dev/shm in every vLLM pod
            container="vllm",
            not_evaluable=f"resourceProfile {profile} is not an NVIDIA GPU" if other else None,
            env=env,
        )
    ]


def read_inference_service(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """KServe InferenceService: the Hugging Face runtime serves `storageUri: hf://...` with vLLM unless
    `--backend=huggingface`; a predictor with its own containers is read like a pod."""
    predictor = _m(_m(doc.get("spec")).get("predictor"))
    model = predictor.get("model") if isinstance(predictor.get("model"), dict) else None
    if model is None:
        return _read_pods(doc, source, index)
    fmt = str(_m(model.get("modelFormat")).get("name", "")).lower()
    args = _words(model.get("args")) or []
    if fmt not in ("huggingface", "vllm") or any(a in ("--backend=huggingface", "--backend=hf") for a in args):
        return []
    uri = str(model.get("storageUri", ""))
    ref = re.sub(r"^hf://", "", uri) if uri.startswith("hf://") else "/mnt/models"
    kept = [a for a in args if not a.startswith(("--model_name", "--model_dir", "--backend", "--model-name"))]
    gpus, _ = _gpu_count(model.get("resources"))
    return [
        Found(
            source,
            resource_name(doc, index),
            ("vllm", "serve", ref, *kept),
            gpus_per_pod=gpus,
            container="kserve-container",
        )
    ]


def read_llm_inference_service(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """KServe LLMInferenceService: `spec.model.uri`, `spec.parallelism`, VLLM_ADDITIONAL_ARGS in the main
    container (KServe's templates run `vllm serve /mnt/models ... $VLLM_ADDITIONAL_ARGS`)."""
    spec = _m(doc.get("spec"))
    uri = str(_m(spec.get("model")).get("uri", ""))
    model = re.sub(r"^hf://", "", uri) if uri.startswith("hf://") else "/mnt/models"
    template = _m(spec.get("template"))
    main = next((c for c in _l(template.get("containers")) if isinstance(c, dict) and c.get("name") == "main"), {})
    if _is_container(main):  # a command of its own: KServe runs it, with the model's files at /mnt/models
        found = _container_found(doc, "template", template, {}, main, source, index)
        mounted = {"/mnt/models", "/mnt/models/"}
        return [replace(f, argv=tuple(model if w in mounted else w for w in f.argv)) for f in found]
    par = _m(spec.get("parallelism"))
    argv = ["vllm", "serve", model]
    for key, flag in (("tensor", "--tensor-parallel-size"), ("pipeline", "--pipeline-parallel-size")):
        if par.get(key):
            argv += [flag, str(par[key])]
    if par.get("data"):
        argv += ["--data-parallel-size", str(par["data"])]
        if par.get("dataLocal"):
            argv += ["--data-parallel-size-local", str(par["dataLocal"])]
    if par.get("expert"):
        argv.append("--enable-expert-parallel")
    env, _ = k8s_env(main)
    argv += env.get("VLLM_ADDITIONAL_ARGS", "").split()
    gpus, _ = _gpu_count(main.get("resources"))
    return [Found(source, resource_name(doc, index), tuple(argv), gpus_per_pod=gpus, container="main", env=env)]


_RAY_ENGINE_KWARGS = {
    "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "enable_expert_parallel", "quantization",
    "dtype", "kv_cache_dtype", "gpu_memory_utilization", "kv_cache_memory_bytes", "max_model_len", "max_num_seqs",
    "max_num_batched_tokens", "block_size", "enforce_eager", "enable_prefix_caching", "cpu_offload_gb",
}  # fmt: skip


def unread_ray_apps(docs: list[dict[str, Any]]) -> list[str]:
    """`RayService/ns/name runs the Ray Serve application vllm_serve:deployment` for each application that is not
    one of ray.serve.llm's (Python code of the deployment's own, which check does not read)."""
    out = []
    for index, doc in enumerate(docs, 1):
        serve = _m(doc.get("spec")).get("serveConfigV2") if doc.get("kind") == "RayService" else None
        try:
            apps = _l(_m(yaml_safe_load(serve)).get("applications")) if isinstance(serve, str) else []
        except InputError:
            continue
        for app in apps:
            path = str(_m(app).get("import_path", ""))
            if path and not path.startswith("ray.serve.llm"):
                out.append(f"{resource_name(doc, index)} runs the Ray Serve application {path}")
    return out


def yaml_safe_load(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError("not YAML") from exc


def read_ray_serve_llm(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """RayService running `ray.serve.llm` apps: each llm_config's model_source and engine_kwargs."""
    import yaml

    spec = doc["spec"]
    try:
        serve = yaml.safe_load(spec["serveConfigV2"])
    except yaml.YAMLError as exc:
        raise InputError(f"{source} ({resource_name(doc, index)}): serveConfigV2 is not YAML") from exc
    out = []
    total, pool, _ = _group_gpus({"spec": _m(spec.get("rayClusterConfig"))}, "headGroupSpec")
    for app in _l(_m(serve).get("applications")):
        configs = _l(_m(_m(app).get("args")).get("llm_configs"))
        for cfg in configs if isinstance(configs, list) else []:
            if not isinstance(cfg, dict):
                continue
            loading = cfg.get("model_loading_config") or {}
            argv = ["vllm", "serve", str(loading.get("model_source") or loading.get("model_id") or "")]
            for key, value in _m(cfg.get("engine_kwargs")).items():
                if str(key) not in _RAY_ENGINE_KWARGS:
                    continue  # passed to EngineArgs as keywords, not parsed as flags: only these matter here
                flag = "--" + str(key).replace("_", "-")
                if value is True:
                    argv.append(flag)
                elif value is False:
                    argv.append("--no-" + flag[2:])
                elif value is not None:
                    argv += [flag, str(value)]
            out.append(
                Found(
                    source,
                    resource_name(doc, index),
                    tuple(argv),
                    gpu_product=str(cfg["accelerator_type"]) if cfg.get("accelerator_type") else None,
                    container=f"llm_config/{loading.get('model_id', '?')}",
                    gpus_total=total,
                    gpus_at_least=pool,
                    has_shm=True,  # Ray's object store provides the shared memory for its workers
                )
            )
    return out


# --- Helm values -------------------------------------------------------------------------------------------------


def _helm_gpu_product(spec: dict[str, Any]) -> str | None:
    """The GPU product a production-stack modelSpec selects (nodeSelectorTerms on nvidia.com/gpu.product; the
    last one given wins)."""
    product = None
    for term in _l(spec.get("nodeSelectorTerms")):
        for expr in _l(_m(term).get("matchExpressions")):
            labels = _l(_m(expr).get("values"))
            if _m(expr).get("key") == "nvidia.com/gpu.product" and labels:
                product = str(labels[0])
    return product


def read_helm(values: dict[str, Any], source: str) -> list[Found]:
    """production-stack chart values: servingEngineSpec.modelSpec[], as deployment-vllm-multi.yaml renders it."""
    out = []
    for spec in _l(_m(values.get("servingEngineSpec")).get("modelSpec")):
        if not isinstance(spec, dict) or spec.get("enabled") is False:
            continue
        cfg = _m(spec.get("vllmConfig"))
        argv = ["vllm", "serve", str(spec.get("modelURL", ""))]
        for key, flag in (
            ("maxModelLen", "--max-model-len"),
            ("dtype", "--dtype"),
            ("tensorParallelSize", "--tensor-parallel-size"),
            ("maxNumSeqs", "--max-num-seqs"),
            ("gpuMemoryUtilization", "--gpu-memory-utilization"),
        ):
            if cfg.get(key) is not None:
                argv += [flag, str(cfg[key])]
        argv.append("--enable-prefix-caching" if cfg.get("enablePrefixCaching") else "--no-enable-prefix-caching")
        ray = isinstance(spec.get("raySpec"), dict) and bool(spec["raySpec"].get("enabled"))
        if ray and cfg.get("pipelineParallelSize") is not None:
            argv += ["--pipeline-parallel-size", str(cfg["pipelineParallelSize"])]
        extra = cfg.get("extraArgs")
        if extra is not None and not isinstance(extra, list):
            raise InputError(f"{source} (modelSpec/{spec.get('name', '?')}): vllmConfig.extraArgs must be a list")
        argv += [str(a) for a in extra or []]
        gpus = spec.get("requestGPU")
        if gpus is not None and not str(gpus).isdigit():
            raise InputError(f"{source} (modelSpec/{spec.get('name', '?')}): requestGPU {gpus!r} is not a whole number")
        total = None
        if ray:
            head = _m(spec["raySpec"].get("headNode")).get("requestGPU")
            pp = str(cfg.get("pipelineParallelSize") or 1)
            if not str(head or 0).isdigit() or not pp.isdigit():
                raise InputError(
                    f"{source} (modelSpec/{spec.get('name', '?')}): raySpec.headNode.requestGPU and "
                    "vllmConfig.pipelineParallelSize must be whole numbers"
                )
            total = int(head or 0) + int(gpus or 0) * max(0, int(pp) - 1)
        out.append(
            Found(
                source,
                f"modelSpec/{spec.get('name', '?')}",
                tuple(argv),
                gpu_product=_helm_gpu_product(spec),
                gpus_per_pod=int(gpus) if gpus is not None else None,
                has_shm="tensorParallelSize" in cfg or ray,
                image_tag=str(spec["tag"]) if spec.get("tag") is not None else None,
                container="vllm",
                gpus_total=total,
            )
        )
    return out


def read_vllm_chart(values: dict[str, Any], source: str) -> list[Found]:
    """The vLLM project's own chart (examples/online_serving/chart-helm): image.command, resources, gpuModels."""
    image = _m(values.get("image"))
    words = _words(image.get("command"))
    if words is None:
        raise InputError(f"{source}: image.command must be a list of strings")
    env, _ = k8s_env(image)
    hits = find_in_words(words, env, (), None)  # image.command replaces the image's entrypoint
    gpus, _ = _gpu_count(values.get("resources"))
    models = _l(values.get("gpuModels"))
    shm = _m(values.get("shm"))
    return [
        Found(
            source,
            "values",
            hit.argv,
            gpu_product=str(models[0]) if len(models) == 1 else None,
            gpus_per_pod=gpus,
            has_shm=bool(shm.get("enabled")),
            image_tag=str(image["tag"]) if image.get("tag") is not None else None,
            container="vllm",
            serve_form=hit.serve,
            unresolved=hit.unresolved,
            env=dict(hit.env),
        )
        for hit in hits
    ]


def read_nm_vllm_chart(values: dict[str, Any], source: str) -> list[Found]:
    """Neural Magic's nm-vllm chart (neuralmagic/helm-charts charts/nm-vllm): its deployment template runs
    `python3 -m vllm.entrypoints.openai.api_server --host H --model modelName --port P apiServer.extraArgs...`."""
    api = _m(values.get("apiServer"))
    extra = _words(api.get("extraArgs"))
    if extra is None:
        raise InputError(f"{source}: apiServer.extraArgs must be a list of strings")
    argv = ("vllm", "serve", "--model", str(values.get("modelName", "")), *extra)
    gpus, other = _gpu_count(values.get("resources"))
    image = _m(values.get("image"))
    labels = {str(k): str(v) for k, v in _m(values.get("nodeSelector")).items()}
    return [
        Found(
            source,
            "values",
            argv,
            gpus_per_pod=gpus,
            image_tag=str(image["tag"]) if image.get("tag") is not None else None,
            container="nm-vllm",
            serve_form=False,
            node_labels=labels,
            not_evaluable=f"runs on {other}, not NVIDIA GPUs" if other and not gpus else None,
        )
    ]


def _containers_in(node: Any, path: tuple[str, ...]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Mappings shaped like a container anywhere in a values file: an image and a command or args list."""
    if isinstance(node, dict):
        image = node.get("image")
        has_image = isinstance(image, str) or (isinstance(image, dict) and "repository" in image)
        if has_image and (isinstance(node.get("args"), list) or isinstance(node.get("command"), list)):
            yield "/".join(path), node
            return
        for key, value in node.items():
            yield from _containers_in(value, (*path, str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _containers_in(value, (*path, str(i)))


def read_values_containers(values: dict[str, Any], source: str) -> list[Found]:
    """Helm values of another chart whose containers are written out (llm-d's modelservice `decode.containers`,
    bjw-s app-template `controllers.*.containers.*`, ...): each vLLM container, read like a pod's."""
    out = []
    for path, container in _containers_in(values, ()):
        image = container.get("image")
        ref = f"{image.get('repository')}:{image.get('tag', '')}".rstrip(":") if isinstance(image, dict) else str(image)
        command, args = _words(container.get("command")), _words(container.get("args"))
        if command is None or args is None:
            continue
        env, _ = k8s_env(container)
        hits = find_in_words([*command, *args], env, (), None if command else ref)
        gpus, other = _gpu_count(container.get("resources"))
        out += [
            Found(
                source,
                f"values/{path}",
                hit.argv,
                gpus_per_pod=gpus,
                image_tag=image_tag(ref) if is_vllm_image(ref) else None,
                container=str(container.get("name", path.rsplit("/", 1)[-1])),
                serve_form=hit.serve,
                unresolved=hit.unresolved,
                env=dict(hit.env),
                not_evaluable=f"runs on {other}, not NVIDIA GPUs"
                if other and not gpus
                else not_evaluable(hit.argv, hit.env, ref),
            )
            for hit in hits
        ]
    return out


# --- docker compose -----------------------------------------------------------------------------------------------


def compose_interpolate(node: Any, env: Mapping[str, str], missing: list[str]) -> Any:
    """Compose's interpolation of every string: `${X}`, `${X:-d}`, `${X-d}`, `${X:+a}`, `${X:?e}` (defaults may
    nest: `${A:-${B:-d}}`), `$X`; `$$` is a `$`."""
    if isinstance(node, dict):
        return {k: compose_interpolate(v, env, missing) for k, v in node.items()}
    if isinstance(node, list):
        return [compose_interpolate(v, env, missing) for v in node]
    if not isinstance(node, str) or "$" not in node:
        return node
    return _compose_text(node, env, missing)


_COMPOSE_NAME = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _compose_text(text: str, env: Mapping[str, str], missing: list[str], depth: int = 0) -> str:
    if depth > 8:  # defaults nested deeper than any compose file writes them: untrusted text, not recursed into
        missing.append(text[:40])
        return text
    out, i = [], 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$$")  # kept for the container: `$$` is a literal `$` there
            i += 2
        elif text.startswith("${", i):
            braces, j = 0, i + 1
            while j < len(text) and not (text[j] == "}" and braces == 1):
                braces += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            out.append(_compose_variable(text[i + 2 : j], env, missing, depth) if j < len(text) else text[i:])
            i = j + 1
        elif _COMPOSE_NAME.match(text, i):
            m = _COMPOSE_NAME.match(text, i)
            assert m is not None
            out.append(_compose_variable(m.group(1), env, missing, depth, braced=False))
            i = m.end()
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _compose_variable(body: str, env: Mapping[str, str], missing: list[str], depth: int, *, braced: bool = True) -> str:
    m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])(.*))?", body, re.S)
    if not m:
        return "${" + body + "}"
    name, op, arg = m.group(1), m.group(2) or "", m.group(3) or ""
    value = env.get(name)
    unset = value is None or (op.startswith(":") and value == "")
    if op in (":-", "-"):
        return _compose_text(arg, env, missing, depth + 1) if unset else str(value)
    if op in (":+", "+"):
        return "" if unset else _compose_text(arg, env, missing, depth + 1)
    if value is None:
        missing.append("${" + name + "}" if braced else "$" + name)
        return "${" + name + "}"
    return value


def _compose_words(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return [str(w) for w in value]
    if isinstance(value, str):
        return _split_or_raw(value)
    raise InputError(f"command/entrypoint must be a string or a list, not {type(value).__name__}")


def read_compose(doc: dict[str, Any], source: str, dotenv: Mapping[str, str] | None = None) -> list[Found]:
    """docker compose services running vLLM: interpolation from `.env`, entrypoint + command as Compose combines
    them (an entrypoint replaces the image's and its command), the image's own entrypoint otherwise."""
    services = doc.get("services")
    if not isinstance(services, dict):
        raise InputError(f"{source}: `services` must be a mapping of service names to services")
    out = []
    for name, raw in services.items():
        if not isinstance(raw, dict):
            raise InputError(f"{source} (service/{name}): a service must be a mapping")
        missing: list[str] = []
        svc = compose_interpolate(raw, dotenv or {}, missing)
        out += _compose_service(doc, str(name), svc, source, missing)
    return out


def _compose_env(svc: Mapping[str, Any]) -> dict[str, str]:
    environment = svc.get("environment")
    if isinstance(environment, dict):
        return {str(k): "" if v is None else str(v) for k, v in environment.items()}
    env = {}
    for item in environment if isinstance(environment, list) else []:
        k, _, v = str(item).partition("=")
        env[k] = v
    return env


def _compose_service(
    doc: Mapping[str, Any], name: str, svc: Mapping[str, Any], source: str, missing: list[str]
) -> list[Found]:
    image = str(svc.get("image", ""))
    try:
        entry = _compose_words(svc.get("entrypoint"))
        command = _compose_words(svc.get("command"))
    except InputError as exc:
        raise InputError(f"{source} (service/{name}): {exc}") from exc
    env = _compose_env(svc)
    words = [w.replace("$$", "$") for w in [*(entry or []), *(command or [])]]
    if entry is None and image and is_vllm_image(image):
        hits = find_in_words(words or [], env, tuple(missing), image)
    else:
        hits = find_in_words(words, env, tuple(missing), None)
    count = _compose_gpus(svc)
    out = []
    for hit in hits:
        visible = visible_devices(hit.env)
        out.append(
            Found(
                source,
                f"service/{name}",
                hit.argv,
                gpus_per_pod=visible if visible is not None else count,
                has_shm=bool(svc.get("shm_size")) or svc.get("ipc") == "host" or _mounts_dev_shm(svc),
                image_tag=image_tag(image) if is_vllm_image(image) else None,
                annotations={str(k): str(v) for k, v in _m(doc.get("x-vllm-plan")).items()},
                container=name,
                serve_form=hit.serve,
                unresolved=tuple(dict.fromkeys(hit.unresolved)),
                env=dict(hit.env),
                not_evaluable="runs on Habana Gaudi (runtime: habana)"
                if svc.get("runtime") == "habana"
                else not_evaluable(hit.argv, hit.env, image),
            )
        )
    return out


def _mounts_dev_shm(svc: Mapping[str, Any]) -> bool:
    return any(str(v).split(":")[-1].rstrip("/") == "/dev/shm" for v in _l(svc.get("volumes")) if isinstance(v, str))


def _compose_gpus(svc: Mapping[str, Any]) -> int | None:
    deploy = _m(svc.get("deploy"))
    devices = _l(_m(_m(deploy.get("resources")).get("reservations")).get("devices"))
    for d in devices if isinstance(devices, list) else []:
        if not isinstance(d, dict):
            continue
        if d.get("device_ids"):
            ids = d["device_ids"]
            return sum(len(str(i).split(",")) for i in ids) if isinstance(ids, list) else None
        count = d.get("count")
        if count not in (None, "all"):
            if not str(count).isdigit():
                raise InputError(f"deploy.resources.reservations.devices count {count!r} is not a whole number")
            return int(str(count))
    return None


# --- plans ---------------------------------------------------------------------------------------------------------


def read_plan(doc: dict[str, Any], source: str) -> list[Found]:
    """A plan document written by `recommend`, validated (a malformed or tampered plan is an input error); its
    promise and prediction become the annotations `render` would write, so the same checks apply."""
    plan = plan_from_data(doc, source)
    tool = plan.generator.removeprefix("vllm-plan ")
    claimed = plan_annotations.from_plan(plan, tool_version=tool)
    free = plan.inputs.free_memory_gib
    return [
        Found(
            source,
            "plan",
            plan.best.command,
            annotations=dict(plan_annotations.encode(claimed)),
            free_bytes=int(free * GiB) if free is not None else None,  # the plan was made for this much free memory
        )
    ]
