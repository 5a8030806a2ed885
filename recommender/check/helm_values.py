"""Find vLLM servers in Helm values files: production-stack, the vLLM chart, the nm-vllm chart and any values
holding containers (pure: values in, Found out)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from recommender.check.commands import (
    find_in_words,
    not_evaluable,
)
from recommender.check.found import Found
from recommender.check.images import image_tag, is_vllm_image
from recommender.check.manifest_values import as_list, as_mapping, gpu_count, is_count, k8s_env, words_of
from recommender.check.serving_resources import read_kubeai
from recommender.errors import InputError
from recommender.quoting import quoted


def _helm_gpu_product(spec: dict[str, Any]) -> str | None:
    """The GPU product a production-stack modelSpec selects (nodeSelectorTerms on nvidia.com/gpu.product; the
    last one given wins)."""
    product = None
    for term in as_list(spec.get("nodeSelectorTerms")):
        for expr in as_list(as_mapping(term).get("matchExpressions")):
            labels = as_list(as_mapping(expr).get("values"))
            if as_mapping(expr).get("key") == "nvidia.com/gpu.product" and labels:
                product = str(labels[0])
    return product


def read_helm(values: dict[str, Any], source: str) -> list[Found]:
    """production-stack chart values: servingEngineSpec.modelSpec[], as deployment-vllm-multi.yaml renders it."""
    out = []
    for spec in as_list(as_mapping(values.get("servingEngineSpec")).get("modelSpec")):
        if not isinstance(spec, dict) or spec.get("enabled") is False:
            continue
        cfg = as_mapping(spec.get("vllmConfig"))
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
        if gpus is not None and not is_count(str(gpus)):
            raise InputError(
                f"{source} (modelSpec/{spec.get('name', '?')}): requestGPU {quoted(gpus)} is not a whole number"
            )
        total = None
        if ray:
            head = as_mapping(spec["raySpec"].get("headNode")).get("requestGPU")
            pp = str(cfg.get("pipelineParallelSize") or 1)
            if not is_count(str(head or 0)) or not is_count(pp):
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
    image = as_mapping(values.get("image"))
    words = words_of(image.get("command"))
    if words is None:
        raise InputError(f"{source}: image.command must be a list of strings")
    env, _ = k8s_env(image)
    hits = find_in_words(words, env, (), None)  # image.command replaces the image's entrypoint
    gpus, _ = gpu_count(values.get("resources"))
    models = as_list(values.get("gpuModels"))
    shm = as_mapping(values.get("shm"))
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
            problems=hit.problems,
        )
        for hit in hits
    ]


def read_nm_vllm_chart(values: dict[str, Any], source: str) -> list[Found]:
    """Neural Magic's nm-vllm chart (neuralmagic/helm-charts charts/nm-vllm): its deployment template runs
    `python3 -m vllm.entrypoints.openai.api_server --host H --model modelName --port P apiServer.extraArgs...`."""
    api = as_mapping(values.get("apiServer"))
    extra = words_of(api.get("extraArgs"))
    if extra is None:
        raise InputError(f"{source}: apiServer.extraArgs must be a list of strings")
    argv = ("vllm", "serve", "--model", str(values.get("modelName", "")), *extra)
    gpus, other = gpu_count(values.get("resources"))
    image = as_mapping(values.get("image"))
    labels = {str(k): str(v) for k, v in as_mapping(values.get("nodeSelector")).items()}
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


def is_kubeai_models_values(values: dict[str, Any]) -> bool:
    """The values of KubeAI's models chart (kubeai-project/kubeai charts/models): a `catalog` of Model specs."""
    catalog = values.get("catalog")
    return isinstance(catalog, dict) and any(
        isinstance(m, dict) and "url" in m and "engine" in m for m in catalog.values()
    )


def read_kubeai_models_chart(values: dict[str, Any], source: str) -> list[Found]:
    """KubeAI's models chart renders a Model for each catalog entry with `enabled: true`, or for all of them when
    `all.enabled` is true (charts/models/templates/models.yaml), from the entry's url, engine, args, env and
    resourceProfile; each Model is then read as a KubeAI Model is."""
    every = bool(as_mapping(values.get("all")).get("enabled"))
    out: list[Found] = []
    for index, (name, entry) in enumerate(as_mapping(values.get("catalog")).items(), 1):
        if not isinstance(entry, dict) or not (entry.get("enabled") or every):
            continue
        spec = {k: entry[k] for k in ("url", "engine", "args", "env", "resourceProfile") if k in entry}
        model = {"apiVersion": "kubeai.org/v1", "kind": "Model", "metadata": {"name": str(name)}, "spec": spec}
        out += read_kubeai(model, source, index)
    return out


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
        command, args = words_of(container.get("command")), words_of(container.get("args"))
        if command is None or args is None:
            continue
        env, _ = k8s_env(container)
        hits = find_in_words([*command, *args], env, (), None if command else ref)
        gpus, other = gpu_count(container.get("resources"))
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
                else hit.platform or not_evaluable(hit.argv, hit.env, ref),
                problems=hit.problems,
            )
            for hit in hits
        ]
    return out
