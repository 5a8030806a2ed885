"""Helm releases declared by GitOps controllers: Argo CD Applications and ApplicationSets, Flux HelmReleases, and
helmfile's releases (pure).

A GitOps repository rarely holds a Deployment of vLLM: it holds the release, a chart reference and its values,
which the controller renders in the cluster. The values are read as `check` reads a values file (production-stack,
the vLLM chart, KubeAI's models chart); values the release takes from elsewhere (Argo CD's valueFiles, Flux's
valuesFrom ConfigMaps) are named, since the servers cannot be read without them.

Argo CD merges a Helm source's values as valueFiles < values (a YAML string) < valuesObject < parameters (`--set`
paths) (argo-cd docs, user-guide/helm.md, "Helm Value Precedence"); Flux passes spec.values over valuesFrom.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from recommender.errors import InputError
from recommender.quoting import quoted
from recommender.safe_load import UntrustedDocumentError, load_yaml_all

_ARGO_KINDS = ("Application", "ApplicationSet")
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
MAX_DEPTH = 64
MAX_INDEX = 1024  # a `--set` list index above this is refused (Helm would pad the list with nulls)


@dataclass(frozen=True, slots=True)
class HelmRelease:
    """One Helm source of a GitOps object: what it deploys and the values given inline."""

    where: str  # e.g. "Application vllm, chart vllm-stack"
    values: dict[str, Any]
    values_elsewhere: tuple[str, ...] = field(default=())  # valueFiles / valuesFrom it names
    chart_path: str | None = None  # an Argo CD source's `path`: a chart in the repository, relative to its root
    files_from_origin: bool = False  # values_elsewhere are relative to the declaring file's folder (helmfile), not
    # to the chart's (Argo CD's valueFiles)


def is_gitops_release(doc: Mapping[str, Any]) -> bool:
    """An Argo CD Application/ApplicationSet, a Flux HelmRelease, or a helmfile.yaml."""
    api = str(doc.get("apiVersion", ""))
    kind = doc.get("kind")
    return (
        (api.startswith("argoproj.io/") and kind in _ARGO_KINDS)
        or (api.startswith("helm.toolkit.fluxcd.io/") and kind == "HelmRelease")
        or is_helmfile(doc)
    )


def is_helmfile(doc: Mapping[str, Any]) -> bool:
    """A helmfile.yaml: `releases:`, each a chart with its values (helmfile's own format, no kind)."""
    releases = doc.get("releases")
    return (
        "kind" not in doc
        and isinstance(releases, list)
        and bool(releases)
        and all(isinstance(r, Mapping) and "chart" in r for r in releases)
    )


def helmfile_releases(doc: Mapping[str, Any]) -> list[HelmRelease]:
    """helmfile's releases: the chart (a local folder when written as a path), inline values (mappings of the
    `values:` list, merged in order over the value files it names, as helmfile passes them to helm in order)."""
    out = []
    for release in doc.get("releases") or []:
        chart = str(release.get("chart"))
        values: dict[str, Any] = {}
        files = []
        for entry in release.get("values") or []:
            if isinstance(entry, Mapping):
                values = _merge(values, dict(entry))
            elif isinstance(entry, str):
                files.append(entry)
        where = f"helmfile release {release.get('name', '?')}, chart {chart}"
        # `./charts/vllm` or `charts/vllm` is a folder of the repository when one is there (looked up when
        # rendering); `repo/chart` and `oci://...` are downloaded by helmfile: not at hand
        path = None if "://" in chart else chart
        out.append(HelmRelease(where, values, tuple(files), path, files_from_origin=True))
    return out


def helm_releases(doc: Mapping[str, Any]) -> list[HelmRelease]:
    """The Helm sources the object deploys (an Argo CD source with neither chart nor helm values is a plain
    manifest folder: not a Helm release, nothing to read here)."""
    if is_helmfile(doc):
        return helmfile_releases(doc)
    name = _mapping(doc.get("metadata")).get("name", "?")
    spec = _mapping(doc.get("spec"))
    if doc.get("kind") == "HelmRelease":
        return [_flux_release(f"HelmRelease {name}", spec)]
    if doc.get("kind") == "ApplicationSet":
        out = []
        for app in applicationset_apps(doc):
            app_name = _mapping(app.get("metadata")).get("name", name)
            out += _argo_sources(f"ApplicationSet {name} (Application {app_name})", _mapping(app.get("spec")))
        return out
    return _argo_sources(f"{doc.get('kind')} {name}", spec)


def _argo_sources(where: str, spec: Mapping[str, Any]) -> list[HelmRelease]:
    sources = [_mapping(spec.get("source"))] if spec.get("source") else []
    sources += [_mapping(s) for s in spec.get("sources") or [] if isinstance(s, Mapping)]
    return [_argo_release(where, s) for s in sources if s.get("chart") or s.get("helm")]


# Argo CD ApplicationSet parameters: `{{name}}` / `{{values.size}}` (fasttemplate, the default) or, with
# `goTemplate: true`, `{{.name}}` / `{{ .values.size }}` (argo-cd docs, operator-manual/applicationset/Template.md,
# GoTemplate.md); list generator elements are the parameter sets (Generators-List.md)
_FAST_PARAM = re.compile(r"\{\{\s*([\w.-]+)\s*\}\}")
_GO_PARAM = re.compile(r"\{\{-?\s*\.([\w.-]+)\s*-?\}\}")


def applicationset_apps(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The Applications an ApplicationSet's list generators make from its template, one per element, parameters
    substituted (other generators: the template as written, its parameters left as they are)."""
    spec = _mapping(doc.get("spec"))
    template = _mapping(spec.get("template"))
    elements = [
        e
        for g in spec.get("generators") or []
        if isinstance(g, Mapping)
        for e in _mapping(g.get("list")).get("elements") or []
        if isinstance(e, Mapping)
    ]
    go = spec.get("goTemplate") is True
    return [_substituted(template, dict(e), go, 0) for e in elements] or [template]


def _substituted(node: Any, params: dict[str, Any], go: bool, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise InputError("an ApplicationSet template nested deeper than 64 levels")
    if isinstance(node, Mapping):
        return {k: _substituted(v, params, go, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_substituted(v, params, go, depth + 1) for v in node]
    if not isinstance(node, str):
        return node

    def value(m: re.Match[str]) -> str:
        found: Any = params
        for part in m.group(1).split("."):  # `values.size`: a nested key of the element
            if not isinstance(found, Mapping) or part not in found:
                return m.group(0)  # not a parameter of this element: left as written
            found = found[part]
        return m.group(0) if isinstance(found, (Mapping, list)) else str(found)

    return (_GO_PARAM if go else _FAST_PARAM).sub(value, node)


def _argo_release(where: str, source: Mapping[str, Any]) -> HelmRelease:
    helm = _mapping(source.get("helm"))
    chart = source.get("chart") or source.get("path") or source.get("repoURL") or "?"
    values: dict[str, Any] = {}
    text = helm.get("values")
    if isinstance(text, str) and text.strip():
        values = _merge(values, _parse_values(text, f"{where}: spec.source.helm.values"))
    elif isinstance(text, Mapping):  # older Argo CD accepted a mapping here
        values = _merge(values, dict(text))
    if isinstance(helm.get("valuesObject"), Mapping):
        values = _merge(values, dict(helm["valuesObject"]))
    for param in helm.get("parameters") or []:
        if isinstance(param, Mapping) and isinstance(param.get("name"), str):
            value = param.get("value")
            typed = value if param.get("forceString") or not isinstance(value, str) else _set_typed(value)
            _set_path(values, param["name"], typed, where)
    files = tuple(str(f) for f in helm.get("valueFiles") or [])
    path = str(source["path"]) if source.get("path") and not source.get("chart") else None
    return HelmRelease(f"{where}, chart {chart}", values, files, path)


def _flux_release(where: str, spec: Mapping[str, Any]) -> HelmRelease:
    chart_spec = _mapping(_mapping(spec.get("chart")).get("spec"))
    chart = chart_spec.get("chart") or _mapping(spec.get("chartRef")).get("name") or "?"
    values = dict(spec["values"]) if isinstance(spec.get("values"), Mapping) else {}
    elsewhere = tuple(
        f"{_mapping(v).get('kind', '?')} {_mapping(v).get('name', '?')}" for v in spec.get("valuesFrom") or []
    )
    elsewhere += tuple(str(f) for f in chart_spec.get("valuesFiles") or [])
    return HelmRelease(f"{where}, chart {chart}", values, elsewhere)


def _parse_values(text: str, where: str) -> dict[str, Any]:
    try:
        docs = [d for d in load_yaml_all(text, max_depth=MAX_DEPTH) if d is not None]
    except UntrustedDocumentError as exc:
        raise InputError(f"{where}: {exc}") from None
    except Exception as exc:  # yaml.YAMLError and what a malformed string raises
        raise InputError(f"{where}: not YAML ({type(exc).__name__})") from None
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise InputError(f"{where}: not a mapping of Helm values")
    return docs[0]


def _set_typed(value: str) -> Any:
    """A `--set` value as Helm types it (pkg/strvals typedVal): true/false/null, a decimal integer not starting
    with 0, else the string (Argo CD passes parameters with --set, or --set-string when forceString)."""
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if value == "0" or (re.fullmatch(r"[+-]?[1-9][0-9]*", value) and abs(int(value)) < 1 << 63):
        return int(value)
    return value


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Helm's coalescing of values: mappings merge key by key, anything else replaces (lists too)."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        out[key] = _merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
    return out


def _set_path(values: dict[str, Any], path: str, value: Any, where: str) -> None:
    """Helm's `--set a.b[0].c=v` on the values (Argo CD's helm.parameters)."""
    parts: list[str | int] = [
        m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PATH_PART.finditer(path)
    ]
    if not parts or isinstance(parts[0], int) or any(isinstance(p, int) and p > MAX_INDEX for p in parts):
        raise InputError(f"{where}: helm parameter {quoted(path)} is not a values path Helm accepts")
    node: Any = values
    for part, after in zip(parts, [*parts[1:], None], strict=True):
        if isinstance(part, int) != isinstance(node, list):
            raise InputError(f"{where}: helm parameter {quoted(path)} does not match the values' shape")
        if isinstance(part, int):
            node.extend([None] * (part + 1 - len(node)))
        elif part not in node:
            node[part] = None
        if after is None:
            node[part] = value
        elif not isinstance(node[part], (dict, list)):
            node[part] = [] if isinstance(after, int) else {}
        node = node[part]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
