"""Find vLLM servers in Kubernetes objects: workloads (Deployment, StatefulSet, Job, LeaderWorkerSet, any custom
resource holding a pod template or a single runner container, as AIBrix's and OME's do), their containers' command
and args with `$(VAR)` substituted as the kubelet does, and read_kubernetes, which hands the serving custom resources
to serving_resources (pure: documents in, Found out)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from recommender.check import role_based_groups
from recommender.check.commands import (
    find_in_words,
    not_evaluable,
    with_image_cmd,
)
from recommender.check.found import Found
from recommender.check.images import cpu_backend, devices_seen, image_tag, is_other_engine_image, is_vllm_image
from recommender.check.manifest_values import (
    as_list,
    as_mapping,
    gpu_count,
    is_count,
    k8s_env,
    k8s_substitute,
    mig_profile,
    unresolved_gpu_count,
    words_of,
)
from recommender.errors import InputError
from recommender.node_gpu import cpu_only_node


def node_labels(pod_spec: Mapping[str, Any]) -> dict[str, str]:
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


def has_shm(pod_spec: Mapping[str, Any], container: Mapping[str, Any]) -> bool:
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
                if key in _SINGLE_CONTAINER and is_container(value):
                    yield "/".join((*path, str(key))), {**node, "containers": [value]}, meta
            inner_meta = as_mapping(node.get("metadata")) or meta
            for key, value in node.items():
                if key not in ("metadata", "status"):
                    yield from walk(value, (*path, str(key)), inner_meta)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from walk(value, (*path, str(i)), meta)

    yield from walk(doc["spec"] if "spec" in doc else _top_level_fields(doc), (), {})


def _top_level_fields(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an object that has no `spec` and keeps them at its top level: KAITO's Workspace (`resource`,
    `inference.template`, the pod template KAITO runs: kaito-project/kaito api/v1beta1/workspace_types.go)."""
    return {k: v for k, v in doc.items() if k not in ("apiVersion", "kind", "metadata", "status")}


_SINGLE_CONTAINER = ("runner", "mainContainer")
# what the LeaderWorkerSet controller sets in every pod of a group (lws.sigs.k8s.io/docs/reference: environment
# variables): a script branching on the worker index runs the leader's command in one pod, the workers' in others
_LWS_VARIABLES = ("LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX")


def is_container(node: Any) -> bool:
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


def group_gpus(doc: Mapping[str, Any], role: str) -> tuple[int | None, bool, int]:
    """(GPUs of the engine's whole group, a pool?, pods per replica) for multi-pod kinds, from the leader's role."""
    pods = list(_pods(doc))
    if "leaderTemplate" in role or "workerTemplate" in role:  # LeaderWorkerSet: leader + (size - 1) workers
        lwt = as_mapping(as_mapping(doc.get("spec")).get("leaderWorkerTemplate"))
        size = int(str(lwt.get("size") or 1)) if is_count(str(lwt.get("size") or 1)) else 1
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


def gpu_pod_labels(doc: Mapping[str, Any]) -> dict[str, str]:
    """The node labels every GPU pod of a document selects (a Ray cluster's GPU worker groups, where its engines'
    workers run): `nvidia.com/gpu.product: NVIDIA-A100-80GB-PCIe` in each of them."""
    labels = [node_labels(p) for _, p, _ in _pods(doc) if _pod_gpus(p)]
    return {k: v for k, v in labels[0].items() if all(other.get(k) == v for other in labels[1:])} if labels else {}


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


def _config_maps(docs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """The ConfigMaps the manifest itself holds: name -> data."""
    return {
        str(as_mapping(d.get("metadata")).get("name")): {str(k): str(v) for k, v in as_mapping(d.get("data")).items()}
        for d in docs
        if d.get("kind") == "ConfigMap" and str(d.get("apiVersion", "")) == "v1"
    }


def _volume_files(volume: Mapping[str, Any], data: Mapping[str, str]) -> dict[str, str]:
    """The files of a configMap volume, by path inside it: every key, or the `items` it lists (key -> path)."""
    items = [as_mapping(i) for i in as_list(volume.get("items"))]
    if items:
        return {str(i.get("path")): data[str(i.get("key"))] for i in items if str(i.get("key")) in data}
    return dict(data)


def mounted_files(pod_spec: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, str]:
    """Files the container sees from the manifest's own ConfigMaps (a `--config` file the pod mounts), by absolute
    path: the volume's files under mountPath, or the one `subPath` names at mountPath itself."""
    volumes = {str(v.get("name")): v["_files"] for v in as_list(pod_spec.get("volumes")) if "_files" in as_mapping(v)}
    out: dict[str, str] = {}
    for mount in as_list(container.get("volumeMounts")):
        m = as_mapping(mount)
        files = volumes.get(str(m.get("name")))
        where = str(m.get("mountPath", "")).rstrip("/")
        if not files or not where:
            continue
        sub = str(m.get("subPath") or "")
        if sub:
            out.update({where: files[sub]} if sub in files else {})
        else:
            out.update({f"{where}/{k}": v for k, v in files.items()})
    return out


def _with_config_maps(node: Any, maps: Mapping[str, Mapping[str, str]]) -> Any:
    """`node` with the env values a container takes from a ConfigMap of the same manifest written in: `envFrom:
    configMapRef` as entries before `env` (which wins, as the kubelet has it), `valueFrom: configMapKeyRef` as the
    value. A ConfigMap the file does not hold stays a value set elsewhere (unresolved)."""
    if isinstance(node, list):
        return [_with_config_maps(v, maps) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _with_config_maps(v, maps) for k, v in node.items()}
    volume_of = str(as_mapping(out.get("configMap")).get("name", ""))
    if "name" in out and volume_of in maps:  # a pod volume made from one of the manifest's ConfigMaps: its files
        out["_files"] = _volume_files(as_mapping(out.get("configMap")), maps[volume_of])
    if not is_container(out) or not (isinstance(out.get("env"), list) or isinstance(out.get("envFrom"), list)):
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


def read_kubernetes(docs: list[dict[str, Any]], source: str, shared: Sequence[Mapping[str, Any]] = ()) -> list[Found]:
    """vLLM containers of every object in a (multi-document) manifest (env values from its own ConfigMaps).
    `shared`: KServe objects of the other files of a checked folder (an InferenceService's ServingRuntime may be
    in another file); a ServingRuntime an InferenceService runs on is read through it, not as a server itself."""
    # imported here: serving_resources reads its custom resources' containers with this module's helpers
    from recommender.check import kserve_runtimes, serving_resources

    out: list[Found] = []
    docs = [item for doc in docs for item in _listed(doc, source)]
    maps = _config_maps([*docs, *[d for d in shared if d.get("kind") == "ConfigMap"]])
    docs = [_with_config_maps(d, maps) for d in docs] if maps else docs
    used = kserve_runtimes.used_runtimes([*docs, *shared])
    for index, doc in enumerate(docs, 1):
        kind = str(doc.get("kind"))
        if kind in kserve_runtimes.RUNTIME_KINDS and kserve_runtimes.name_of(doc) in used:
            continue  # a template KServe fills in for an InferenceService, read there
        if kind == "Model" and str(doc.get("apiVersion", "")).startswith("kubeai.org/"):
            out += serving_resources.read_kubeai(doc, source, index)
            continue
        if kind in ("RayService",) and isinstance(as_mapping(doc.get("spec")).get("serveConfigV2"), str):
            out += serving_resources.read_ray_serve_llm(doc, source, index)
        if kind == "InferenceService" and str(doc.get("apiVersion", "")).startswith("inference.llmkube.dev/"):
            out += serving_resources.read_llmkube(doc, docs, source, index)
            continue
        if kind == "InferenceService":
            out += serving_resources.read_inference_service(doc, source, index, [*docs, *shared])
            continue
        if kind == "LLMInferenceService":
            out += serving_resources.read_llm_inference_service(doc, source, index)
            continue
        if kind == "DynamoGraphDeployment":
            out += serving_resources.read_dynamo(doc, source, index)
            continue
        if role_based_groups.is_role_based_group(doc):
            doc = role_based_groups.with_templates_resolved(doc)
        if kind == "Workspace" and str(doc.get("apiVersion", "")).startswith("kaito.sh/"):
            _kaito_template(doc, f"{source} (Workspace/{as_mapping(doc.get('metadata')).get('name') or '?'})")
        out += read_pods(doc, source, index)
    return out


def _listed(doc: dict[str, Any], source: str) -> list[dict[str, Any]]:
    """A list (`kind: List`, as `kubectl get -o yaml` writes, or a typed `DeploymentList`) stands for the objects in
    its `items`, each applied as if given alone (kubernetes.io/docs/reference/using-api/api-concepts/#collections);
    an OpenShift Template for its `objects` as `oc process` makes them, each parameter's default `value` in place of
    `${NAME}` in a string and of a whole `${{NAME}}` field as the JSON value it spells (OpenShift's "Writing template
    parameters"); a parameter with no default (generated, or given with -p) stays as written."""
    kind = str(doc.get("kind", ""))
    items = doc.get("items")
    if kind.endswith("List") and isinstance(items, list):
        _all_mappings(items, f"{source} ({kind}): items")
        return [_typed_item(i, doc, f"{source} ({kind}): items[{n}]") for n, i in enumerate(items)]
    objects = doc.get("objects")
    api = str(doc.get("apiVersion", ""))
    if kind == "Template" and (api == "v1" or api.startswith("template.openshift.io/")) and isinstance(objects, list):
        values = _template_values(
            doc.get("parameters"), f"{source} (Template/{as_mapping(doc.get('metadata')).get('name') or '?'})"
        )
        _all_mappings(objects, f"{source} (Template/{as_mapping(doc.get('metadata')).get('name') or '?'}): objects")
        return [_processed(o, values) for o in objects if isinstance(o, dict) and "kind" in o]
    return [doc]


def _typed_item(item: dict[str, Any], listed: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An item of a list as the API machinery decodes it: one with neither `kind` nor `apiVersion` takes them from
    a typed list (a DeploymentList's item is a Deployment of the list's apiVersion: apimachinery's
    unstructuredJSONScheme.decodeToList); an item still without a kind is refused as kubectl refuses it."""
    if "kind" not in item and "apiVersion" not in item and str(listed.get("kind")) != "List":
        item = {"kind": str(listed.get("kind"))[: -len("List")], "apiVersion": listed.get("apiVersion"), **item}
    if "kind" not in item:
        raise InputError(f"{where}: no `kind` (kubectl refuses an object whose kind is missing)")
    return item


def _all_mappings(objects: list[Any], where: str) -> None:
    """The objects of a list or a Template are Kubernetes objects: the API refuses a number, string or list there."""
    for i, o in enumerate(objects):
        if not isinstance(o, dict):
            raise InputError(f"{where}[{i}] ({type(o).__name__}) is not a Kubernetes object (a mapping)")


def _kaito_template(doc: Mapping[str, Any], where: str) -> None:
    """KAITO's `inference.template` is a pod template (corev1.PodTemplateSpec: kaito-project/kaito
    api/v1beta1/workspace_types.go): a mapping whose `spec.containers` is a list."""
    inference = doc.get("inference")
    template = inference.get("template") if isinstance(inference, dict) else None
    if inference is None or template is None:
        return
    spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict) or not isinstance(spec.get("containers"), list):
        raise InputError(f"{where}: inference.template must be a pod template (a mapping with a spec.containers list)")


_PARAMETER_NAME = re.compile(r"[A-Za-z0-9_]+")  # OpenShift's template validation: ParameterNameRegExp


def _template_values(parameters: Any, where: str) -> dict[str, str]:
    """Each parameter's default `value` by its name; what `oc process` refuses (a parameter that is not a mapping,
    a name not of letters, digits and `_`, a value that is a mapping or a list, not the string the API takes) is
    refused here too."""
    if parameters is None:
        return {}
    if not isinstance(parameters, list):
        raise InputError(f"{where}: `parameters` must be a list of {{name, value}} mappings")
    out = {}
    for i, p in enumerate(parameters):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not _PARAMETER_NAME.fullmatch(p["name"]):
            raise InputError(f"{where}: parameters[{i}] needs a `name` of letters, digits and _")
        value = p.get("value")
        if isinstance(value, (dict, list)):
            raise InputError(f"{where}: parameter {p['name']}: `value` must be a string, not {type(value).__name__}")
        if "value" in p:
            out[p["name"]] = "" if value is None else str(value)
    return out


_TEMPLATE_FIELD = re.compile(r"\$\{\{(\w+)\}\}")
_TEMPLATE_PARAMETER = re.compile(r"\$\{(\w+)\}")


def _processed(node: Any, values: Mapping[str, str]) -> Any:
    if isinstance(node, dict):
        return {k: _processed(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_processed(v, values) for v in node]
    if not isinstance(node, str):
        return node
    whole = _TEMPLATE_FIELD.fullmatch(node)
    if whole and whole.group(1) in values:
        try:
            return json.loads(values[whole.group(1)])
        except ValueError:  # not a JSON value: the string itself
            return values[whole.group(1)]
    return _TEMPLATE_PARAMETER.sub(lambda m: values.get(m.group(1), m.group(0)), node)


def _no_worker_pods(doc: Mapping[str, Any], role: str) -> bool:
    """A LeaderWorkerSet's worker template when the group is the leader alone (`size: 1`): no worker pod runs it
    (without a leaderTemplate the leader itself is made from the worker template)."""
    lwt = as_mapping(as_mapping(doc.get("spec")).get("leaderWorkerTemplate"))
    return "workerTemplate" in role and str(lwt.get("size", 1)) == "1" and "leaderTemplate" in lwt


def read_pods(doc: dict[str, Any], source: str, index: int) -> list[Found]:
    out = []
    for role, pod_spec, pod_meta in _pods(doc):
        if _no_worker_pods(doc, role):
            continue
        for container in as_list(pod_spec.get("containers")):
            if isinstance(container, dict):
                found = container_found(doc, role, pod_spec, pod_meta, container, source, index)
                out += found
    return out


def container_found(
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
    total, pool, size = group_gpus(doc, role)
    meta = as_mapping(doc.get("metadata"))
    annotations = {
        str(k): str(v) for part in (meta, as_mapping(pod_meta)) for k, v in as_mapping(part.get("annotations")).items()
    }
    return [
        Found(
            source,
            resource_name(doc, index),
            hit.argv,
            # no nvidia.com/gpu request (a privileged pod sees the host's GPUs): the ones its process is given
            gpus_per_pod=gpus if gpus is not None or other else devices_seen(hit.env),
            pods_per_replica=size,
            # KubeRay adds a memory-backed /dev/shm to every Ray pod
            has_shm=has_shm(pod_spec, container) or "GroupSpec" in role,
            annotations=annotations,
            image_tag=image_tag(image) if is_vllm_image(image) else None,
            container=str(container.get("name", "")),
            serve_form=hit.serve,
            node_labels=node_labels(pod_spec),
            gpus_total=total,
            gpus_at_least=pool,
            unresolved=tuple(dict.fromkeys([*hit.unresolved, *([gpu_var] if gpu_var else [])])),
            not_evaluable=f"runs on {other}, not NVIDIA GPUs"
            if other and not gpus
            else hit.platform or not_evaluable(hit.argv, hit.env, image) or _cpu_node(pod_spec, gpus, gpu_var),
            env=dict(hit.env),
            files=mounted_files(pod_spec, container),
            mig_profile=mig_profile(container.get("resources")),
            problems=hit.problems,
        )
        for hit in hits
    ]


def _cpu_node(pod_spec: Mapping[str, Any], gpus: int | None, gpu_var: str | None) -> str | None:
    """Why a pod that requests no GPU (none, or 0; not a count left to a template) runs vLLM's CPU backend: it is
    placed on nodes of a type without any (Karpenter's `instance-family: m8g`, Graviton), or None."""
    label = cpu_only_node(node_labels(pod_spec)) if not gpus and gpu_var is None else None
    return cpu_backend(f"no GPU requested, on {label}: a node type without GPUs") if label else None


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
    if is_other_engine_image(image):
        return False
    names = f"{as_mapping(doc.get('metadata')).get('name', '')} {container.get('name', '')}".lower()
    return "vllm" in names and any(a == "--model" or a.startswith("--model=") for a in args)
