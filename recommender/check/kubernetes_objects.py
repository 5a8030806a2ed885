"""Find vLLM servers in Kubernetes objects: workloads (Deployment, StatefulSet, Job, LeaderWorkerSet, any custom
resource holding a pod template or a single runner container) and the serving custom resources (NVIDIA Dynamo,
LLMKube, KubeAI, KServe InferenceService, AIBrix, OME, LLMInferenceService, RayService with ray.serve.llm), substituting `$(VAR)`
as the kubelet does (pure: documents in, Found out)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from recommender.check.commands import (
    find_in_words,
    not_evaluable,
    with_image_cmd,
)
from recommender.check.found import Found
from recommender.check.images import image_tag, is_vllm_image
from recommender.check.manifest_values import (
    NVIDIA_GPU,
    as_list,
    as_mapping,
    gpu_count,
    k8s_env,
    k8s_substitute,
    unresolved_gpu_count,
    words_of,
)
from recommender.errors import InputError


def _node_labels(pod_spec: Mapping[str, Any]) -> dict[str, str]:
    """nodeSelector, plus required node-affinity `In` terms with one value (a choice of several is no answer)."""
    labels = (
        {str(k): str(v) for k, v in (pod_spec.get("nodeSelector") or {}).items()}
        if isinstance(pod_spec.get("nodeSelector"), dict)
        else {}
    )
    affinity = as_mapping(pod_spec.get("affinity"))
    node = as_mapping(affinity.get("nodeAffinity"))
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    for term in terms if isinstance(terms, list) else []:
        for expr in as_list(as_mapping(term).get("matchExpressions")):
            if isinstance(expr, dict) and expr.get("operator") == "In" and len(as_list(expr.get("values"))) == 1:
                labels.setdefault(str(expr.get("key")), str(expr["values"][0]))
    return labels


def _has_shm(pod_spec: Mapping[str, Any], container: Mapping[str, Any]) -> bool:
    if pod_spec.get("hostIPC") is True:
        return True
    memory_volumes = {
        str(v.get("name"))
        for v in as_list(pod_spec.get("volumes"))
        if isinstance(v, dict)
        and v.get("name") is not None
        and (
            as_mapping(v.get("emptyDir")).get("medium") == "Memory"
            or as_mapping(v.get("hostPath")).get("path") == "/dev/shm"
        )
    }
    return any(
        isinstance(m, dict) and m.get("mountPath") == "/dev/shm" and str(m.get("name")) in memory_volumes
        for m in as_list(container.get("volumeMounts"))
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
            inner_meta = as_mapping(node.get("metadata")) or meta
            for key, value in node.items():
                if key not in ("metadata", "status"):
                    yield from walk(value, (*path, str(key)), inner_meta)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, (*path, str(i)), meta)

    yield from walk(doc.get("spec"), (), {})


_SINGLE_CONTAINER = ("runner", "mainContainer")
# what the LeaderWorkerSet controller sets in every pod of a group (lws.sigs.k8s.io/docs/reference: environment
# variables): a script branching on the worker index runs the leader's command in one pod, the workers' in others
_LWS_VARIABLES = ("LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX")


def _is_container(node: Any) -> bool:
    return isinstance(node, dict) and ("command" in node or "args" in node)


def _pod_gpus(pod_spec: Mapping[str, Any]) -> int:
    total = 0
    for c in as_list(pod_spec.get("containers")):
        try:
            count, _ = gpu_count(c.get("resources") if isinstance(c, dict) else None)
        except InputError:
            count = None
        total += count or 0
    return total


def _group_gpus(doc: Mapping[str, Any], role: str) -> tuple[int | None, bool, int]:
    """(GPUs of the engine's whole group, a pool?, pods per replica) for multi-pod kinds, from the leader's role."""
    pods = list(_pods(doc))
    if "leaderTemplate" in role or "workerTemplate" in role:  # LeaderWorkerSet: leader + (size - 1) workers
        lwt = as_mapping(as_mapping(doc.get("spec")).get("leaderWorkerTemplate"))
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
    meta = as_mapping(doc.get("metadata"))
    name = meta.get("name") or f"#{index}"
    return f"{doc.get('kind')}/{meta.get('namespace', 'default')}/{name}"


def _config_maps(docs: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The ConfigMaps the manifest itself holds: name -> data."""
    return {
        str(as_mapping(d.get("metadata")).get("name")): {str(k): str(v) for k, v in as_mapping(d.get("data")).items()}
        for d in docs
        if d.get("kind") == "ConfigMap" and str(d.get("apiVersion", "")) == "v1"
    }


def _with_config_maps(node: Any, maps: Mapping[str, Mapping[str, str]]) -> Any:
    """`node` with the env values a container takes from a ConfigMap of the same manifest written in: `envFrom:
    configMapRef` as entries before `env` (which wins, as the kubelet has it), `valueFrom: configMapKeyRef` as the
    value. A ConfigMap the file does not hold stays a value set elsewhere (unresolved)."""
    if isinstance(node, list):
        return [_with_config_maps(v, maps) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _with_config_maps(v, maps) for k, v in node.items()}
    if not _is_container(out) or not (isinstance(out.get("env"), list) or isinstance(out.get("envFrom"), list)):
        return out
    env: list[Any] = []
    for source in as_list(out.get("envFrom")):
        ref = as_mapping(as_mapping(source).get("configMapRef")).get("name")
        prefix = str(as_mapping(source).get("prefix") or "")
        env += [{"name": prefix + k, "value": v} for k, v in maps.get(str(ref), {}).items()]
    for item in as_list(out.get("env")):
        ref = as_mapping(as_mapping(as_mapping(item).get("valueFrom")).get("configMapKeyRef"))
        value = maps.get(str(ref.get("name")), {}).get(str(ref.get("key")))
        env.append({"name": item["name"], "value": value} if value is not None and "name" in item else item)
    out["env"] = env
    return out


def read_kubernetes(docs: list[dict[str, Any]], source: str) -> list[Found]:
    """vLLM containers of every object in a (multi-document) manifest (env values from its own ConfigMaps)."""
    out: list[Found] = []
    maps = _config_maps(docs)
    docs = [_with_config_maps(d, maps) for d in docs] if maps else docs
    for index, doc in enumerate(docs, 1):
        kind = str(doc.get("kind"))
        if kind == "Model" and str(doc.get("apiVersion", "")).startswith("kubeai.org/"):
            out += read_kubeai(doc, source, index)
            continue
        if kind in ("RayService",) and isinstance(as_mapping(doc.get("spec")).get("serveConfigV2"), str):
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


def _no_worker_pods(doc: Mapping[str, Any], role: str) -> bool:
    """A LeaderWorkerSet's worker template when the group is the leader alone (`size: 1`): no worker pod runs it
    (without a leaderTemplate the leader itself is made from the worker template)."""
    lwt = as_mapping(as_mapping(doc.get("spec")).get("leaderWorkerTemplate"))
    return "workerTemplate" in role and str(lwt.get("size", 1)) == "1" and "leaderTemplate" in lwt


def _read_pods(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    out = []
    for role, pod_spec, pod_meta in _pods(doc):
        if _no_worker_pods(doc, role):
            continue
        for container in as_list(pod_spec.get("containers")):
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
    words, env, missing = _container_argv(doc, container, source, index)
    image = str(container.get("image", ""))
    # KubeRay starts every Ray pod with its own `ray start` command: the image's entrypoint never runs there
    entrypoint = None if container.get("command") or "GroupSpec" in role else image
    platform = _LWS_VARIABLES if "leaderTemplate" in role or "workerTemplate" in role else ()
    hits = find_in_words(
        words,
        env,
        tuple(missing),
        entrypoint,
        vllm_entrypoint=_runs_vllm_args(doc, container, words),
        platform=platform,
    )
    if not hits:
        return []
    if entrypoint and not words:  # no args: the image's CMD runs, which the file does not show
        hits = [with_image_cmd(hit, image) for hit in hits]
    gpus, other, gpu_var = _container_gpus(doc, container, source, index)
    total, pool, size = _group_gpus(doc, role)
    meta = as_mapping(doc.get("metadata"))
    annotations = {
        str(k): str(v) for part in (meta, as_mapping(pod_meta)) for k, v in as_mapping(part.get("annotations")).items()
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
            unresolved=tuple(dict.fromkeys([*hit.unresolved, *([gpu_var] if gpu_var else [])])),
            not_evaluable=f"runs on {other}, not NVIDIA GPUs"
            if other and not gpus
            else not_evaluable(hit.argv, hit.env, image),
            env=dict(hit.env),
        )
        for hit in hits
    ]


def _container_argv(
    doc: Mapping[str, Any], container: Mapping[str, Any], source: str, index: int
) -> tuple[list[str], dict[str, str], list[str]]:
    """(command + args with the kubelet's `$(VAR)` expansion, the literal env, the `$(VAR)`s left unexpanded)."""
    command, args = words_of(container.get("command")), words_of(container.get("args"))
    if command is None or args is None:
        raise InputError(f"{source} ({resource_name(doc, index)}): container command and args must be lists of strings")
    env, _ = k8s_env(container)  # names set from secrets or fields stay unresolved
    missing: list[str] = []
    words = []
    for w in command + args:
        text, miss = k8s_substitute(w, env)
        words.append(text)
        missing += miss
    return words, env, missing


def _container_gpus(
    doc: Mapping[str, Any], container: Mapping[str, Any], source: str, index: int
) -> tuple[int | None, str | None, str | None]:
    """(nvidia.com/gpu count, another accelerator named, the template variable the count is written as)."""
    try:
        gpus, other = gpu_count(container.get("resources"))
    except InputError as exc:
        raise InputError(f"{source} ({resource_name(doc, index)}, {container.get('name', '')}): {exc}") from None
    return gpus, other, unresolved_gpu_count(container.get("resources"))


def _runs_vllm_args(doc: Mapping[str, Any], container: Mapping[str, Any], args: list[str]) -> bool:
    """Arguments to an image's own entrypoint: a vLLM image, or (an image named by a placeholder or a private
    build) `--model` arguments in a workload or container named for vLLM."""
    image = str(container.get("image", ""))
    if is_vllm_image(image):
        return True
    names = f"{as_mapping(doc.get('metadata')).get('name', '')} {container.get('name', '')}".lower()
    return "vllm" in names and any(a == "--model" or a.startswith("--model=") for a in args)


def read_dynamo(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """NVIDIA Dynamo's DynamoGraphDeployment: each service's extraPodSpec.mainContainer (workers run
    `python3 -m dynamo.vllm` with vLLM's engine flags); `resources.limits.gpu` per pod and `multinode.nodeCount`
    pods per engine."""
    out: list[Found] = []
    for name, service in as_mapping(as_mapping(doc.get("spec")).get("services")).items():
        pod = as_mapping(as_mapping(service).get("extraPodSpec"))
        main = as_mapping(pod.get("mainContainer"))
        if not _is_container(main):
            continue
        res = as_mapping(as_mapping(service).get("resources"))
        count = as_mapping(res.get("limits")).get("gpu", as_mapping(res.get("requests")).get("gpu"))
        gpus = int(str(count)) if str(count).isdigit() else None
        nodes = as_mapping(as_mapping(service).get("multinode")).get("nodeCount", 1)
        nodes = int(str(nodes)) if str(nodes).isdigit() else 1
        container = {**main, "name": main.get("name") or str(name)}
        if gpus is not None:
            container["resources"] = {"limits": {NVIDIA_GPU: gpus}}
        found = _container_found(
            doc, f"services/{name}", {**pod, "containers": [container]}, {}, container, source, index
        )
        out += [
            # the image's tag is Dynamo's release, not vLLM's
            replace(f, gpus_total=gpus * nodes if gpus is not None else None, pods_per_replica=nodes, image_tag=None)
            for f in found
        ]
    return out


def _llmkube_flags(cfg: Mapping[str, Any], gpus: int) -> list[str]:
    """The flags LLMKube's controller writes for a typed `vllmConfig` (internal/controller/runtime_vllm.go and
    runtime_vllm_args.go): each field its own rule, in its order. Booleans only when true, TP only above 1, the KV
    dtype unless "auto" (kvCacheCustomDtype first), the utilization and CPU offload only with GPUs; other keys
    (hfTokenSecretRef, fields the CRD schema prunes) write nothing."""
    out: list[str] = []
    tp = cfg.get("tensorParallelSize")
    out += ["--tensor-parallel-size", str(tp)] if isinstance(tp, int) and tp > 1 else []
    for key, flag in (("maxModelLen", "--max-model-len"), ("quantization", "--quantization"), ("dtype", "--dtype")):
        out += [flag, str(cfg[key])] if cfg.get(key) not in (None, "") else []
    kv = str(cfg.get("kvCacheCustomDtype") or cfg.get("kvCacheDtype") or "")
    out += ["--kv-cache-dtype", kv] if kv not in ("", "auto") else []
    out += ["--enable-prefix-caching"] if cfg.get("enablePrefixCaching") is True else []
    out += ["--enable-chunked-prefill"] if cfg.get("enableChunkedPrefill") is True else []
    for key, flag in (("maxNumBatchedTokens", "--max-num-batched-tokens"), ("attentionBackend", "--attention-backend")):
        out += [flag, str(cfg[key])] if cfg.get(key) not in (None, "") else []
    spec = as_mapping(cfg.get("speculative"))
    if spec.get("enabled") is True and spec.get("model"):
        out += ["--speculative-model", str(spec["model"])]
        n = spec.get("numSpeculativeTokens")
        out += ["--num-speculative-tokens", str(n)] if n is not None else []
    out += ["--enable-expert-parallel"] if cfg.get("enableExpertParallel") is True else []
    for key, flag in (("cpuOffloadGB", "--cpu-offload-gb"), ("gpuMemoryUtilization", "--gpu-memory-utilization")):
        out += [flag, str(cfg[key])] if cfg.get(key) is not None and gpus > 0 else []
    return out


def read_llmkube(doc: dict[str, Any], docs: list[dict[str, Any]], source: str, index: int) -> list[Found]:
    """LLMKube's InferenceService with `runtime: vllm`: the Model it references (`source: hf://org/name@rev`,
    `hardware.gpu`), `vllmConfig` as LLMKube's controller turns it into flags (_llmkube_flags; with more than one GPU
    and no tensorParallelSize it adds --tensor-parallel-size GPUS), `parallelSlots` (--max-num-seqs unless
    extraArgs has it), `extraArgs` last, `env`."""
    spec = as_mapping(doc.get("spec"))
    if str(spec.get("runtime", "")).lower() != "vllm":
        return []
    ref = str(spec.get("modelRef", ""))
    model_doc = next(
        (d for d in docs if d.get("kind") == "Model" and as_mapping(d.get("metadata")).get("name") == ref), {}
    )
    model_spec = as_mapping(model_doc.get("spec"))
    model = re.sub(r"^(hf|pvc|s3|gs)://", "", str(model_spec.get("source", ""))).split("@", 1)[0] or f"<{ref}>"
    gpu = as_mapping(as_mapping(model_spec.get("hardware")).get("gpu"))
    count = gpu.get("count") if isinstance(gpu.get("count"), int) and gpu["count"] > 0 else None
    isvc_gpus = as_mapping(spec.get("resources")).get("gpu")
    gpus = count if count is not None else isvc_gpus if isinstance(isvc_gpus, int) and isvc_gpus > 0 else 0
    cfg = as_mapping(spec.get("vllmConfig"))
    argv = ["vllm", "serve", model, *_llmkube_flags(cfg, gpus)]
    argv += ["--tensor-parallel-size", str(gpus)] if gpus > 1 and "tensorParallelSize" not in cfg else []
    args = words_of(spec.get("extraArgs"))
    if args is None:
        raise InputError(f"{source} ({resource_name(doc, index)}): spec.extraArgs must be a list of strings")
    slots = spec.get("parallelSlots")
    if isinstance(slots, int) and slots >= 1 and not any(a.split("=", 1)[0] == "--max-num-seqs" for a in args):
        argv += ["--max-num-seqs", str(slots)]
    argv += args
    env, _ = k8s_env(spec)
    vendor = str(gpu.get("vendor", "nvidia")).lower()
    image = str(spec.get("image", ""))
    mounts = {"volumeMounts": spec.get("extraVolumeMounts")}
    pod = {"volumes": spec.get("extraVolumes"), "containers": [mounts]}
    return [
        Found(
            source,
            resource_name(doc, index),
            tuple(argv),
            gpus_per_pod=gpus or None,
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
    spec = as_mapping(doc.get("spec"))
    if str(spec.get("engine", "")).lower() != "vllm":
        return []
    url = str(spec.get("url", ""))
    model = re.sub(r"^(hf|pvc|s3|gs|oss)://", "", url)
    args = words_of(spec.get("args"))
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
    predictor = as_mapping(as_mapping(doc.get("spec")).get("predictor"))
    model = predictor.get("model") if isinstance(predictor.get("model"), dict) else None
    if model is None:
        return _read_pods(doc, source, index)
    fmt = str(as_mapping(model.get("modelFormat")).get("name", "")).lower()
    args = words_of(model.get("args")) or []
    runtime = str(model.get("runtime") or "")
    if runtime and not runtime.startswith("kserve-huggingfaceserver"):
        return []  # a ServingRuntime of its own: its container (read where the file holds it) runs the server
    if fmt not in ("huggingface", "vllm") or any(a in ("--backend=huggingface", "--backend=hf") for a in args):
        return []
    uri = str(model.get("storageUri", ""))
    ref = re.sub(r"^hf://", "", uri) if uri.startswith("hf://") else "/mnt/models"
    kept = [a for a in args if not a.startswith(("--model_name", "--model_dir", "--backend", "--model-name"))]
    gpus, _ = gpu_count(model.get("resources"))
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
    spec = as_mapping(doc.get("spec"))
    uri = str(as_mapping(spec.get("model")).get("uri", ""))
    model = re.sub(r"^hf://", "", uri) if uri.startswith("hf://") else "/mnt/models"
    template = as_mapping(spec.get("template"))
    main = next((c for c in as_list(template.get("containers")) if isinstance(c, dict) and c.get("name") == "main"), {})
    if _is_container(main):  # a command of its own: KServe runs it, with the model's files at /mnt/models
        found = _container_found(doc, "template", template, {}, main, source, index)
        mounted = {"/mnt/models", "/mnt/models/"}
        return [replace(f, argv=tuple(model if w in mounted else w for w in f.argv)) for f in found]
    par = as_mapping(spec.get("parallelism"))
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
    gpus, _ = gpu_count(main.get("resources"))
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
        serve = as_mapping(doc.get("spec")).get("serveConfigV2") if doc.get("kind") == "RayService" else None
        try:
            apps = as_list(as_mapping(yaml_safe_load(serve)).get("applications")) if isinstance(serve, str) else []
        except InputError:
            continue
        for app in apps:
            path = str(as_mapping(app).get("import_path", ""))
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
    total, pool, _ = _group_gpus({"spec": as_mapping(spec.get("rayClusterConfig"))}, "headGroupSpec")
    for app in as_list(as_mapping(serve).get("applications")):
        configs = as_list(as_mapping(as_mapping(app).get("args")).get("llm_configs"))
        for cfg in configs if isinstance(configs, list) else []:
            if not isinstance(cfg, dict):
                continue
            loading = cfg.get("model_loading_config") or {}
            argv = ["vllm", "serve", str(loading.get("model_source") or loading.get("model_id") or "")]
            for key, value in as_mapping(cfg.get("engine_kwargs")).items():
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
