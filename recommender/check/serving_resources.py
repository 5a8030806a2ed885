"""Find vLLM servers in the serving custom resources that hold no plain pod template, or write vLLM's flags from
fields of their own: NVIDIA Dynamo, LLMKube, KubeAI, KServe InferenceService and LLMInferenceService, RayService
with ray.serve.llm (pure: one document in, Found out; read_kubernetes dispatches here)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from recommender.check import kserve_huggingface as hf
from recommender.check import kserve_runtimes
from recommender.check.commands import not_evaluable
from recommender.check.found import Found
from recommender.check.images import image_tag, is_vllm_image, visible_devices
from recommender.check.kubernetes_objects import (
    container_found,
    group_gpus,
    has_shm,
    is_container,
    node_labels,
    read_pods,
    resource_name,
)
from recommender.check.manifest_values import (
    NVIDIA_GPU,
    as_list,
    as_mapping,
    gpu_count,
    is_count,
    k8s_env,
    k8s_substitute,
    split_words,
    words_of,
)
from recommender.errors import InputError


def read_dynamo(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """NVIDIA Dynamo's DynamoGraphDeployment: each service's extraPodSpec.mainContainer (workers run
    `python3 -m dynamo.vllm` with vLLM's engine flags); `resources.limits.gpu` per pod and `multinode.nodeCount`
    pods per engine."""
    out: list[Found] = []
    for name, service in as_mapping(as_mapping(doc.get("spec")).get("services")).items():
        pod = as_mapping(as_mapping(service).get("extraPodSpec"))
        main = as_mapping(pod.get("mainContainer"))
        if not is_container(main):
            continue
        res = as_mapping(as_mapping(service).get("resources"))
        count = as_mapping(res.get("limits")).get("gpu", as_mapping(res.get("requests")).get("gpu"))
        gpus = int(str(count)) if is_count(str(count)) else None
        nodes = as_mapping(as_mapping(service).get("multinode")).get("nodeCount", 1)
        nodes = int(str(nodes)) if is_count(str(nodes)) else 1
        container = {**main, "name": main.get("name") or str(name)}
        if gpus is not None:
            container["resources"] = {"limits": {NVIDIA_GPU: gpus}}
        found = container_found(
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
            has_shm=has_shm(pod, mounts),
            image_tag=image_tag(image) if is_vllm_image(image) else None,
            container="vllm",
            not_evaluable=f"the Model's GPUs are {vendor}, not NVIDIA"
            if vendor != "nvidia"
            else not_evaluable(tuple(argv), env, image),
            env=env,
        )
    ]


_KUBEAI_OTHER = re.compile(r"(^|[-_])(cpu|amd|rocm|tpu|gaudi|habana|neuron|inferentia|trainium|xpu|intel)($|[-_])")


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
    elif profile == "cpu" or _KUBEAI_OTHER.search(profile):
        other = profile  # KubeAI chart values: cpu, nvidia-gpu-*, amd-gpu-mi300x; an install's own names saying so
    # any other name is a profile of the install's KubeAI values (`doks-nvidia`): GPUs of a type not named here
    env = {str(k): str(v) for k, v in (spec.get("env") or {}).items()} if isinstance(spec.get("env"), dict) else {}
    return [
        Found(
            source,
            resource_name(doc, index),
            ("vllm", "serve", model, *args),
            gpu_product=product,
            gpus_per_pod=int(count) if is_count(count) else None,
            has_shm=True,  # KubeAI mounts a memory-backed /dev/shm in every vLLM pod
            container="vllm",
            not_evaluable=f"resourceProfile {profile} is not an NVIDIA GPU" if other else None,
            env=env,
        )
    ]


def read_inference_service(
    doc: dict[str, Any], source: str, index: int, docs: Sequence[Mapping[str, Any]] = ()
) -> list[Found]:
    """KServe InferenceService: a predictor `model` (or the older `huggingface` field) of format huggingface on
    KServe's Hugging Face runtime (kserve_huggingface: the vLLM command it runs), or on a ServingRuntime of the
    same file whose container runs huggingfaceserver; a predictor with its own containers is read like a pod."""
    predictor = as_mapping(as_mapping(doc.get("spec")).get("predictor"))
    model = next((predictor[k] for k in ("model", "huggingface") if isinstance(predictor.get(k), dict)), None)
    if model is None:
        return read_pods(doc, source, index)
    fmt = "huggingface" if "huggingface" in predictor else str(as_mapping(model.get("modelFormat")).get("name", ""))
    runtime = str(model.get("runtime") or "")
    runs_on, own = _runtime_of(doc, runtime, fmt, docs)
    if runs_on is not None and own is None:  # a runtime of the file or of the checked folder running vLLM itself
        return _on_serving_runtime(doc, runs_on, source, index)
    if runtime and not runtime.startswith("kserve-huggingfaceserver") and own is None:
        return []  # a ServingRuntime not at hand: KServe's own runtimes are read below, others are not known
    if fmt.lower() not in ("huggingface", "vllm"):
        return []
    args = words_of(model.get("args"))
    if args is None:
        raise InputError(f"{source} ({resource_name(doc, index)}): predictor.model.args must be a list of strings")
    container = own or {}
    env, _ = k8s_env({"env": [*as_list(container.get("env")), *as_list(model.get("env"))]})
    args = [k8s_substitute(w, env)[0] for w in [*hf_args(container), *args]]
    if not hf.runs_vllm(args):
        return []
    try:
        gpus, _ = gpu_count(model.get("resources") or container.get("resources"))
    except InputError as exc:
        raise InputError(f"{source} ({resource_name(doc, index)}, kserve-container): {exc}") from None
    workers = as_mapping(predictor.get("workerSpec"))
    multinode = runtime.startswith("kserve-huggingfaceserver-multinode") or bool(workers)
    tp, pp = hf.multinode_sizes(workers, env)
    if multinode:
        args = [f"--tensor-parallel-size={tp}", f"--pipeline-parallel-size={pp}", *args]
    seen = visible_devices(env)
    visible = min(gpus, seen) if gpus and seen else gpus
    uri = str(model.get("storageUri", ""))
    argv = hf.vllm_argv(args, uri, None if multinode else visible)
    pod = as_mapping(own.get("_pod")) if own else {}
    return [
        Found(
            source,
            resource_name(doc, index),
            argv,
            gpus_per_pod=None if multinode else gpus,
            gpus_total=int(tp) * int(pp) if multinode and is_count(tp) and is_count(pp) else None,
            not_evaluable=f"the model is {uri}, which KServe copies to /mnt/models: name its hub id or config"
            if argv[2] == "/mnt/models" and uri
            else None,
            has_shm=has_shm(pod, container) if own else True,  # KServe's runtime mounts a memory-backed /dev/shm
            node_labels=node_labels(predictor),
            container="kserve-container",
            env=env,
        )
    ]


def _runtime_of(
    doc: Mapping[str, Any], runtime: str, fmt: str, docs: Sequence[Mapping[str, Any]]
) -> tuple[Mapping[str, Any] | None, dict[str, Any] | None]:
    """The (Cluster)ServingRuntime a predictor `model` runs on, when at hand, and its container when it runs
    huggingfaceserver (the older `huggingface` field: only a runtime named in the same file)."""
    predictor = as_mapping(as_mapping(doc.get("spec")).get("predictor"))
    namespace = str(as_mapping(doc.get("metadata")).get("namespace", ""))
    runs_on = kserve_runtimes.find_runtime(docs, runtime, fmt, namespace) if "model" in predictor else None
    if runs_on is not None:
        return runs_on, _runtime_container([runs_on], kserve_runtimes.name_of(runs_on))
    return None, _runtime_container(docs, runtime) if runtime else None


def _on_serving_runtime(doc: dict[str, Any], runtime: Mapping[str, Any], source: str, index: int) -> list[Found]:
    """The predictor's pod on its ServingRuntime (kserve_runtimes: merged as KServe merges them), read like any
    pod; the model files KServe's storage initializer puts at /mnt/models are the storageUri's."""
    made = kserve_runtimes.predictor_pod(doc, runtime)
    if made is None:
        return []
    pod, container = made
    found = container_found(doc, "predictor", pod, {}, container, source, index)
    model = as_mapping(as_mapping(as_mapping(doc.get("spec")).get("predictor")).get("model"))
    uri = str(model.get("storageUri", ""))
    hub = hf.hf_uri_model(uri)
    mounted = {"/mnt/models", "/mnt/models/"}
    out = []
    for f in found:
        argv = tuple(_mounted_model(w, hub[0]) if hub else w for w in f.argv)
        why = f.not_evaluable
        if _model_of(argv) in mounted and not why:
            storage = as_mapping(model.get("storage"))
            where = uri or f"{storage.get('key', 'a storage')}:{storage.get('path', '')}".rstrip(":")
            why = f"the model is {where}, which KServe copies to /mnt/models: name its hub id or config"
        out.append(replace(f, argv=argv, not_evaluable=why, container=kserve_runtimes.CONTAINER))
    return out


def _mounted_model(word: str, model: str) -> str:
    """`/mnt/models` (or `--model=/mnt/models`) as the hub model KServe's storage initializer puts there."""
    flag, eq, value = word.partition("=")
    if eq and flag == "--model" and value.rstrip("/") == "/mnt/models":
        return f"--model={model}"
    return model if word.rstrip("/") == "/mnt/models" else word


def _model_of(argv: Sequence[str]) -> str:
    """The model a `vllm serve` argv names: its positional, or the value of --model."""
    if len(argv) > 2 and not argv[2].startswith("-"):
        return argv[2]
    for i, w in enumerate(argv):
        if w == "--model" and i + 1 < len(argv):
            return argv[i + 1]
        if w.startswith("--model="):
            return w.split("=", 1)[1]
    return ""


def _runtime_container(docs: Sequence[Mapping[str, Any]], name: str) -> dict[str, Any] | None:
    """The container of a ServingRuntime / ClusterServingRuntime named `name` in the same file when it runs
    huggingfaceserver (its image, or `python -m huggingfaceserver` in its command); its pod spec under `_pod`."""
    for d in docs:
        if d.get("kind") not in ("ServingRuntime", "ClusterServingRuntime"):
            continue
        if as_mapping(d.get("metadata")).get("name") != name:
            continue
        spec = as_mapping(d.get("spec"))
        for c in as_list(spec.get("containers")):
            words = " ".join(words_of(as_mapping(c).get("command")) or [])
            if isinstance(c, dict) and ("huggingfaceserver" in str(c.get("image", "")) or "huggingfaceserver" in words):
                return {**c, "_pod": spec}
    return None


def hf_args(container: Mapping[str, Any]) -> list[str]:
    """A runtime container's arguments to huggingfaceserver: its args, after what follows `huggingfaceserver` in
    its command (`python -m huggingfaceserver --model_dir=...`)."""
    command = words_of(container.get("command")) or []
    after = next((i + 1 for i, w in enumerate(command) if w.rstrip("/").endswith("huggingfaceserver")), len(command))
    return [*command[after:], *(words_of(container.get("args")) or [])]


def read_llm_inference_service(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """KServe LLMInferenceService: `spec.model.uri`, `spec.parallelism`, VLLM_ADDITIONAL_ARGS in the main
    container (KServe's templates run `vllm serve /mnt/models ... $VLLM_ADDITIONAL_ARGS`). A `spec.prefill` workload
    (a WorkloadSpec: replicas, parallelism, template) is a second deployment of the same model, for prompt processing
    (pkg/apis/serving/v1alpha1/llm_inference_service_types.go): its main container is a server too."""
    spec = as_mapping(doc.get("spec"))
    uri = str(as_mapping(spec.get("model")).get("uri", ""))
    model = re.sub(r"^hf://", "", uri) if uri.startswith("hf://") else "/mnt/models"
    found = _llm_workload(doc, spec, model, "", source, index)
    prefill = as_mapping(spec.get("prefill"))
    if prefill:
        found += [
            replace(f, container=f"prefill/{f.container}")
            for f in _llm_workload(doc, prefill, model, "prefill", source, index)
        ]
    return found


def _llm_workload(
    doc: dict[str, Any], spec: Mapping[str, Any], model: str, part: str, source: str, index: int
) -> list[Found]:
    """The vLLM server of one LLMInferenceService workload (the spec itself, or its `prefill`)."""
    template = as_mapping(spec.get("template"))
    main = next((c for c in as_list(template.get("containers")) if isinstance(c, dict) and c.get("name") == "main"), {})
    where = f"{part}.template" if part else "template"
    if "command" in main:  # a command of its own: KServe runs it, with the model's files at /mnt/models
        found = container_found(doc, where, template, {}, main, source, index)
        return [replace(f, argv=tuple(_mounted_model(w, model) for w in f.argv)) for f in found]
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
    if main.get("args"):  # the template's command (below) gets them as its positional parameters
        args = [_mounted_model(w, model) for w in _eval_words(main)]
        return container_found(doc, where, template, {}, {**main, "command": argv, "args": args}, source, index)
    gpus, _ = gpu_count(main.get("resources"))
    server = Found(source, resource_name(doc, index), tuple(argv), gpus_per_pod=gpus, container="main", env=env)
    return [replace(server, node_labels=node_labels(template))]  # the template is the pod's spec (corev1.PodSpec)


def _eval_words(main: Mapping[str, Any]) -> list[str]:
    """The main container's args as vLLM gets them when the container has no command of its own: KServe's
    kserve-config-llm-template runs `/bin/bash -c 'eval "vllm serve /mnt/models ... ${VLLM_ADDITIONAL_ARGS} $@"' --`
    with them as the positional parameters (config/llmisvcconfig/config-llm-template.yaml, since v0.18.0), so they
    are arguments of `vllm serve`, joined by spaces and split again by eval (a backslash-newline joins lines)."""
    return split_words(" ".join(words_of(main.get("args")) or []).replace("\\\n", ""))


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
    """An embedded YAML text (a RayService's serveConfigV2), read with the untrusted-document bounds."""
    from recommender.safe_load import load_yaml

    try:
        return load_yaml(text)
    except ValueError as exc:  # UntrustedDocumentError: malformed, too deep, an alias bomb
        raise InputError(f"not YAML ({exc})") from None


def read_ray_serve_llm(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    """RayService running `ray.serve.llm` apps: each llm_config's model_source and engine_kwargs."""
    from recommender.safe_load import load_yaml

    spec = doc["spec"]
    try:
        serve = load_yaml(str(spec["serveConfigV2"]))
    except ValueError as exc:  # UntrustedDocumentError: malformed, too deep, an alias bomb
        raise InputError(f"{source} ({resource_name(doc, index)}): serveConfigV2 is not YAML ({exc})") from None
    total, pool, _ = group_gpus({"spec": as_mapping(spec.get("rayClusterConfig"))}, "headGroupSpec")
    return [
        replace(found, gpus_total=total, gpus_at_least=pool)
        for found in _serve_apps(as_mapping(serve), source, resource_name(doc, index))
    ]


def is_ray_serve_config(doc: Mapping[str, Any]) -> bool:
    """A Ray Serve config file (`serve run` / `serve deploy`: `applications:` with import paths), or one LLMConfig of
    ray.serve.llm written as YAML (model_loading_config with engine_kwargs or accelerator_type)."""
    apps = doc.get("applications")
    if isinstance(apps, list) and any(isinstance(a, dict) and "import_path" in a for a in apps):
        return True
    return isinstance(doc.get("model_loading_config"), dict) and any(
        k in doc for k in ("engine_kwargs", "accelerator_type", "deployment_config")
    )


def read_ray_serve_config(doc: Mapping[str, Any], source: str) -> list[Found]:
    """The vLLM engines a Ray Serve config file (or one LLMConfig file) starts (none: see ray_config_unread). An
    LLMConfig the config names by its path is read as a file of its own (checking the folder reads it once)."""
    if "applications" not in doc:
        return [llm_config_found(doc, source, "LLMConfig")]
    return _serve_apps(doc, source, "serve config")


def ray_config_unread(doc: Mapping[str, Any]) -> str:
    """Why a Ray Serve config starts no engine check reads: Python code of its own, or LLMConfigs named by file."""
    paths = [p for a in as_list(doc.get("applications")) for p in _llm_config_files(as_mapping(a))]
    if paths:
        return f"its llm_configs are the files {', '.join(paths)}: check those files"
    apps = [str(as_mapping(a).get("import_path", "")) for a in as_list(doc.get("applications"))]
    return f"it runs the Ray Serve application {', '.join(apps)}: Python code of its own, which check does not read"


def _llm_config_files(app: Mapping[str, Any]) -> list[str]:
    return [str(c) for c in as_list(as_mapping(app.get("args")).get("llm_configs")) if isinstance(c, str)]


def _serve_apps(serve: Mapping[str, Any], source: str, resource: str) -> list[Found]:
    """The engines of the ray.serve.llm applications of a Serve config (LLMConfigs written inline)."""
    out = []
    for app in as_list(serve.get("applications")):
        if not str(as_mapping(app).get("import_path", "")).startswith("ray.serve.llm"):
            continue
        configs = as_list(as_mapping(as_mapping(app).get("args")).get("llm_configs"))
        out += [llm_config_found(cfg, source, resource) for cfg in configs if isinstance(cfg, dict)]
    return out


def llm_config_found(cfg: Mapping[str, Any], source: str, resource: str) -> Found:
    """One LLMConfig: vLLM's engine from model_loading_config and engine_kwargs (EngineArgs keywords)."""
    loading = as_mapping(cfg.get("model_loading_config"))
    model_source = loading.get("model_source")
    if isinstance(model_source, dict):  # {bucket_uri: s3://...}: the checkpoint is copied from storage
        model_source = model_source.get("bucket_uri")
    argv = ["vllm", "serve", str(model_source or loading.get("model_id") or "")]
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
    return Found(
        source,
        resource,
        tuple(argv),
        gpu_product=str(cfg["accelerator_type"]) if cfg.get("accelerator_type") else None,
        container=f"llm_config/{loading.get('model_id', '?')}",
        has_shm=True,  # Ray's object store provides the shared memory for its workers
    )
