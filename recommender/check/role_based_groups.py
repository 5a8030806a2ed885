"""A RoleBasedGroup (sgl-project/rbg, workloads.x-k8s.io) as the pods it runs (pure): a role whose pod template is a
reference to one of the group's `roleTemplates` runs that template with the role's patch merged over it; the
templates themselves run nothing.

api/workloads/v1alpha1/rolebasedgroup_types.go: a role's `templateRef: {name}` and `templatePatch`;
api/workloads/v1alpha2/rolebasedgroup_types.go: `standalonePattern` / `leaderWorkerPattern` hold `template` or
`templateRef: {name, patch}` ("Uses strategic merge patch semantics"), the leader-worker pattern's
`leaderTemplatePatch` over it for the leader pod. The strategic merge of a pod template: mappings merge key by key,
the lists Kubernetes merges by key (containers, volumes, env by `name`, volumeMounts by `mountPath`, ports by
`containerPort`) merge item by item, other lists are replaced (k8s.io/api core/v1 patchMergeKey tags).
"""

from __future__ import annotations

import copy
from typing import Any

from recommender.check.manifest_values import as_list, as_mapping

# list fields of a pod template merged item by item by a key (core/v1 types.go patchMergeKey), else replaced
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
}


def is_role_based_group(doc: dict[str, Any]) -> bool:
    return doc.get("kind") == "RoleBasedGroup" and str(doc.get("apiVersion", "")).startswith("workloads.x-k8s.io/")


def with_templates_resolved(doc: dict[str, Any]) -> dict[str, Any]:
    """The group with each role's referenced template merged with its patch in place, `roleTemplates` removed."""
    spec = as_mapping(doc.get("spec"))
    templates = {
        str(t.get("name")): as_mapping(t.get("template"))
        for t in as_list(spec.get("roleTemplates"))
        if isinstance(t, dict)
    }
    roles = [_role(r, templates) if isinstance(r, dict) else r for r in as_list(spec.get("roles"))]
    rest = {k: v for k, v in spec.items() if k != "roleTemplates"}
    return {**doc, "spec": {**rest, "roles": roles}}


def _role(role: dict[str, Any], templates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out = dict(role)
    ref = as_mapping(role.get("templateRef"))
    if ref:  # v1alpha1: templateRef + templatePatch on the role
        out.pop("templateRef", None)
        out["template"] = merge_patch(templates.get(str(ref.get("name")), {}), as_mapping(role.get("templatePatch")))
        out.pop("templatePatch", None)
    for key in ("standalonePattern", "leaderWorkerPattern"):
        pattern = as_mapping(role.get(key))
        if not pattern:
            continue
        pattern = dict(pattern)
        ref = as_mapping(pattern.pop("templateRef", None))
        if ref:
            pattern["template"] = merge_patch(templates.get(str(ref.get("name")), {}), as_mapping(ref.get("patch")))
        if key == "leaderWorkerPattern":  # the leader pod: the template with the leader's patch over it
            leader = as_mapping(pattern.pop("leaderTemplatePatch", None))
            pattern.pop("workerTemplatePatch", None)
            pattern["template"] = merge_patch(as_mapping(pattern.get("template")), leader)
        out[key] = pattern
    return out


def merge_patch(base: Any, patch: Any, field: str = "") -> Any:
    """`patch` merged over `base` as a strategic merge patch of a pod template does (see the module's docstring)."""
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = copy.deepcopy(base)
        for key, value in patch.items():
            merged[key] = merge_patch(base[key], value, str(key)) if key in base else copy.deepcopy(value)
        return merged
    key = _MERGE_KEYS.get(field)
    if key and isinstance(base, list) and isinstance(patch, list):
        merged_items = [copy.deepcopy(item) for item in base]
        for item in patch:
            at = next(
                (i for i, old in enumerate(merged_items) if isinstance(old, dict) and isinstance(item, dict)
                 and key in item and old.get(key) == item.get(key)),
                None,
            )  # fmt: skip
            if at is None:
                merged_items.append(copy.deepcopy(item))
            else:
                merged_items[at] = merge_patch(merged_items[at], item)
        return merged_items
    return copy.deepcopy(patch)
