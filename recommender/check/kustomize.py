"""The ConfigMaps a kustomization gives the manifests it lists (I/O edge: reads the kustomization beside a manifest
and the files it names; the ConfigMaps, as objects, go to the pure readers with the manifest's own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from recommender.check.load import MAX_BYTES

_KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomize_config_maps(path: Path) -> list[dict[str, Any]]:
    """The ConfigMaps a kustomization beside `path` gives it when it lists `path` in its `resources`:
    - those it generates (`configMapGenerator`: `files` as `key=file` or `file` (its name is the key), `literals` as
      `KEY=value`): kustomize rewrites the resources' references to the generated name (kubectl.docs.kubernetes.io,
      configMapGenerator), so a Deployment's `configMap: {name: vllm-config}` mounts those files;
    - the ConfigMaps of the other files of its `resources`: kustomize builds them into the same output as `path`'s
      objects (kubectl.docs.kubernetes.io, kustomization resources), a namePrefix or nameSuffix renaming an object
      and the references to it alike, so a container's `envFrom: configMapRef` or `configMapKeyRef` reads them by the
      name written.
    Files outside the kustomization's folder (which kustomize refuses by default), folders and remote resources (other
    kustomizations), and files not readable here are left out."""
    from recommender.safe_load import UntrustedDocumentError, load_yaml_all

    folder = path.parent
    kustomization = next((folder / n for n in _KUSTOMIZATIONS if (folder / n).is_file()), None)
    if kustomization is None or kustomization.stat().st_size > MAX_BYTES:
        return []
    try:
        docs = load_yaml_all(kustomization.read_text(encoding="utf-8", errors="replace"))
    except (UntrustedDocumentError, yaml.YAMLError, ValueError, OSError):
        return []
    spec = docs[0] if docs and isinstance(docs[0], dict) else {}
    listed = [(folder / r).resolve() for r in spec.get("resources") or [] if isinstance(r, str)]
    if path.resolve() not in listed:
        return []
    return [*_generated(spec, folder), *_listed_config_maps(listed, path, folder)]


def _generated(spec: dict[str, Any], folder: Path) -> list[dict[str, Any]]:
    """The ConfigMaps of a kustomization's `configMapGenerator`, as objects."""
    out: list[dict[str, Any]] = []
    for gen in spec.get("configMapGenerator") or []:
        if not isinstance(gen, dict) or not gen.get("name"):
            continue
        data: dict[str, str] = {}
        for item in gen.get("files") or []:
            key, _, rel = str(item).rpartition("=")
            file = (folder / rel).resolve()
            if _readable_inside(file, folder):
                data[key or file.name] = file.read_text(encoding="utf-8", errors="replace")
        for item in gen.get("literals") or []:
            key, sep, value = str(item).partition("=")
            if sep:
                data[key] = value
        out.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": str(gen["name"])}, "data": data})
    return out


def _listed_config_maps(listed: list[Path], path: Path, folder: Path) -> list[dict[str, Any]]:
    """The ConfigMaps written in the kustomization's other resource files."""
    from recommender.safe_load import UntrustedDocumentError, load_yaml_all

    out: list[dict[str, Any]] = []
    for file in listed:
        if file == path.resolve() or not _readable_inside(file, folder):
            continue
        try:
            objects = load_yaml_all(file.read_text(encoding="utf-8", errors="replace"))
        except (UntrustedDocumentError, yaml.YAMLError, ValueError, OSError):
            continue  # a malformed resource is reported where it is read, not here
        out += [
            o for o in objects if isinstance(o, dict) and o.get("kind") == "ConfigMap" and o.get("apiVersion") == "v1"
        ]
    return out


def _readable_inside(file: Path, folder: Path) -> bool:
    return file.is_relative_to(folder.resolve()) and file.is_file() and file.stat().st_size <= MAX_BYTES
