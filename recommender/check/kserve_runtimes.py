"""A KServe InferenceService combined with the ServingRuntime / ClusterServingRuntime it runs on, as KServe's
controller does (pure: documents in, a pod spec out; serving_resources reads the result like any pod).

KServe (kserve/kserve pkg/controller/v1beta1/inferenceservice/utils/utils.go at 2d25317a, MergeRuntimeContainers,
MergePodSpec, GetServingRuntime, ReplacePlaceholders; called from components/predictor.go) takes the runtime's `kserve-container` and applies the predictor's
`model` container spec to it as a strategic merge patch: scalar fields (image, command) replaced, `env` merged by
name, `volumeMounts` by mountPath, `resources` key by key; the `args` are not replaced but concatenated, the
runtime's first. The runtime's pod fields (nodeSelector, affinity, tolerations, volumes, imagePullSecrets) are the
base of the pod, patched by the predictor's own (volumes merged by name). `{{.Name}}`, `{{.Namespace}}`, `{{.Labels.x}}`, `{{.Annotations.x}}`
in the container are the InferenceService's (ReplacePlaceholders). The model files land at /mnt/models.
A predictor that names no runtime gets one whose supportedModelFormats lists its modelFormat with autoSelect.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from recommender.check.manifest_values import as_list, as_mapping

RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")
CONTAINER = "kserve-container"  # constants.InferenceServiceContainerName
_POD_FIELDS = ("nodeSelector", "affinity", "tolerations", "volumes", "imagePullSecrets")
# fields of the predictor's model spec that are not a container's (ModelSpec: the model, not the process)
_MODEL_ONLY = ("modelFormat", "runtime", "storageUri", "storage", "protocolVersion")
_PLACEHOLDER = re.compile(r"\{\{\s*\.(Name|Namespace|Labels|Annotations)(?:\.([\w./-]+))?\s*\}\}")


def name_of(doc: Mapping[str, Any]) -> str:
    return str(as_mapping(doc.get("metadata")).get("name", ""))


def find_runtime(
    docs: Sequence[Mapping[str, Any]], name: str, model_format: str, namespace: str
) -> Mapping[str, Any] | None:
    """The runtime an InferenceService runs on: a ServingRuntime of its namespace named `name` before a
    ClusterServingRuntime of that name (KServe's GetServingRuntime); with no name, the first runtime that lists
    the model format with autoSelect true."""
    runtimes = [d for d in docs if d.get("kind") in RUNTIME_KINDS]
    if name:
        for kind in RUNTIME_KINDS:
            for d in runtimes:
                ns = as_mapping(d.get("metadata")).get("namespace")
                same_ns = kind == "ClusterServingRuntime" or not ns or not namespace or ns == namespace
                if d.get("kind") == kind and name_of(d) == name and same_ns:
                    return d
        return None
    for d in runtimes:
        for fmt in as_list(as_mapping(d.get("spec")).get("supportedModelFormats")):
            f = as_mapping(fmt)
            if str(f.get("name", "")).lower() == model_format.lower() and f.get("autoSelect") is True:
                return d
    return None


def missing_runtimes(docs: Sequence[Mapping[str, Any]]) -> list[str]:
    """'InferenceService/NAME runs ServingRuntime RUNTIME' (or '... a runtime auto-selected for model format F') for
    each InferenceService among `docs` whose predictor.model names a runtime that is not among them: its container,
    and so its vLLM command, is in another file."""
    out = []
    for d in docs:
        if d.get("kind") != "InferenceService" or not str(d.get("apiVersion", "")).startswith("serving.kserve.io/"):
            continue
        model = as_mapping(as_mapping(as_mapping(d.get("spec")).get("predictor")).get("model"))
        if not model:
            continue
        name, fmt = str(model.get("runtime") or ""), str(as_mapping(model.get("modelFormat")).get("name", ""))
        if find_runtime(docs, name, fmt, str(as_mapping(d.get("metadata")).get("namespace", ""))) is not None:
            continue
        runs = f"ServingRuntime {name!r}" if name else f"a runtime auto-selected for model format {fmt!r}"
        out.append(f"InferenceService/{name_of(d)} runs {runs}")
    return out


def used_runtimes(docs: Sequence[Mapping[str, Any]]) -> set[str]:
    """Names of the runtimes the InferenceServices among `docs` run on (by name or by auto-selection)."""
    out: set[str] = set()
    for d in docs:
        if d.get("kind") != "InferenceService" or not str(d.get("apiVersion", "")).startswith("serving.kserve.io/"):
            continue
        model = as_mapping(as_mapping(as_mapping(d.get("spec")).get("predictor")).get("model"))
        fmt = str(as_mapping(model.get("modelFormat")).get("name", ""))
        ns = str(as_mapping(d.get("metadata")).get("namespace", ""))
        runtime = find_runtime(docs, str(model.get("runtime") or ""), fmt, ns) if model else None
        if runtime is not None:
            out.add(name_of(runtime))
    return out


def _merge_by(base: list[Any], patch: list[Any], key: str) -> list[Any]:
    """A strategic merge of two lists of mappings keyed by `key`: the patch's item replaces the base's."""
    patched = {str(as_mapping(p).get(key)): p for p in patch}
    merged = [patched.pop(str(as_mapping(b).get(key)), b) for b in base]
    return [*merged, *patched.values()]


def _placeholders(value: Any, isvc: Mapping[str, Any]) -> Any:
    meta = as_mapping(isvc.get("metadata"))

    def one(m: re.Match[str]) -> str:
        field, key = m.group(1), m.group(2)
        if field in ("Name", "Namespace"):
            return str(meta.get(field.lower(), ""))
        return str(as_mapping(meta.get(field.lower())).get(key or "", ""))

    if isinstance(value, str):
        return _PLACEHOLDER.sub(one, value)
    if isinstance(value, list):
        return [_placeholders(v, isvc) for v in value]
    return value


def merged_container(runtime_container: Mapping[str, Any], model: Mapping[str, Any]) -> dict[str, Any]:
    """MergeRuntimeContainers: the runtime's container patched by the predictor's model spec."""
    patch = {k: v for k, v in model.items() if k not in _MODEL_ONLY}
    out = {**runtime_container, **{k: v for k, v in patch.items() if k not in ("env", "volumeMounts", "resources")}}
    out["env"] = _merge_by(as_list(runtime_container.get("env")), as_list(patch.get("env")), "name")
    mounts = as_list(patch.get("volumeMounts"))
    out["volumeMounts"] = _merge_by(as_list(runtime_container.get("volumeMounts")), mounts, "mountPath")
    res, own = as_mapping(runtime_container.get("resources")), as_mapping(patch.get("resources"))
    out["resources"] = {k: {**as_mapping(res.get(k)), **as_mapping(own.get(k))} for k in ("limits", "requests")}
    out["args"] = [*as_list(runtime_container.get("args")), *as_list(model.get("args"))]
    out["name"] = runtime_container.get("name") or CONTAINER
    return out


def predictor_pod(isvc: Mapping[str, Any], runtime: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The pod KServe makes for the predictor on `runtime`, and its vLLM container (None: the runtime has no
    container to run)."""
    spec = as_mapping(runtime.get("spec"))
    containers = [c for c in as_list(spec.get("containers")) if isinstance(c, dict)]
    base = next((c for c in containers if c.get("name") == CONTAINER), containers[0] if containers else None)
    if base is None:
        return None
    predictor = as_mapping(as_mapping(isvc.get("spec")).get("predictor"))
    model = as_mapping(predictor.get("model"))
    container = merged_container(base, model)
    container = {k: _placeholders(v, isvc) if k in ("args", "command") else v for k, v in container.items()}
    container["env"] = [
        {**e, "value": _placeholders(e["value"], isvc)} if isinstance(e, dict) and "value" in e else e
        for e in container["env"]
    ]
    pod = {k: spec[k] for k in _POD_FIELDS if k in spec}
    pod.update({k: predictor[k] for k in _POD_FIELDS if k in predictor and k != "volumes"})
    pod["volumes"] = _merge_by(as_list(spec.get("volumes")), as_list(predictor.get("volumes")), "name")
    pod["containers"] = [container]
    return pod, container
