"""Read `check` inputs (files, directories, stdin, a command) into Found records (I/O edge).

An input that cannot be read (not UTF-8, malformed YAML, a kind nothing runs vLLM in, a structural error) becomes
a problem naming the file and the reason; the run goes on with the other inputs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recommender.check import (
    commands,
    compose_files,
    gitops,
    helm_charts,
    helm_values,
    jobs,
    kserve_runtimes,
    kubernetes_objects,
    plan_documents,
    serving_resources,
    systemd_units,
)
from recommender.check.dockerfile import looks_like_dockerfile, read_dockerfile
from recommender.check.found import Found
from recommender.check.images import is_vllm_image
from recommender.check.markdown import read_markdown
from recommender.errors import InputError
from recommender.safe_load import UntrustedDocumentError, load_yaml_all, path_kind

SUFFIXES = {".yaml", ".yml", ".json", ".service", ".sh", ".bash", ".zsh", ".txt", ".cmd", ".md", ".slurm", ".sbatch"}
MAX_BYTES = 8 << 20  # a deployment file larger than 8 MiB is refused, not parsed
MAX_DEPTH = 64  # deeper than any manifest (a Kubernetes object nests ~15 levels)
_SYSTEMD = re.compile(r"^\[Service\]\s*$", re.M)
_EXEC_START = re.compile(r"^ExecStart=", re.M)
_DOCKERFILE_NAME = re.compile(r"(^|[./_-])(dockerfile|containerfile)([./_-]|$)", re.I)
_SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".txt", ".cmd", ".slurm", ".sbatch", ".job")
# Go template actions of a Helm chart's templates/ (KServe's `{{.Name}}` inside a value is not one)
_HELM_TEMPLATE = re.compile(
    r"\{\{-?\s*(if|else|end|range|with|include|template|define|toYaml|\.Values|\.Release|\.Chart)\b"
)
# a YAML line that is only a comment (blanked before looking for template actions, keeping the line count)
_YAML_COMMENT_LINE = re.compile(r"(?m)^[ \t]*#.*$")
# vLLM's server named in a text: `vllm serve`, "vllm", "serve" (a Python list), its entrypoint modules
_MENTIONS_VLLM = re.compile(r"""\bvllm\b["',\s]+serve\b|vllm\.entrypoints\.""")
# a line that is only a `{name}` placeholder (Python str.format / SkyPilot-style templates filled by a program)
_FORMAT_PLACEHOLDER_LINE = re.compile(r"^\s*\{[A-Za-z_][A-Za-z0-9_]*\}\s*$", re.M)
_TEMPLATE_SUFFIXES = (".tpl", ".tmpl", ".j2", ".jinja", ".jinja2")
_SCRIPT_START = re.compile(r"^(vllm|exec|#!|python|docker|podman|CUDA_VISIBLE|export|srun|sudo|nohup|uv )")


class NotADeployment(InputError):
    """A file of some other kind (a CI workflow, a hook list): skipped in a directory, an error when named."""


@dataclass
class Loaded:
    """Servers found, inputs that could not be read (with why), and notes about skipped files."""

    found: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _yaml_docs(text: str, source: str, problems: list[str]) -> list[Any]:
    """Every document of a (multi-document) YAML file; a malformed one is a problem, the others are still read.
    Parsing is bounded (recommender/safe_load.py): nesting, and alias bombs that expand to millions of values."""
    docs: list[Any] = []
    offset, before = 0, len(problems)  # `problems` holds the other inputs' too: only this text's are its own
    for chunk in re.split(r"(?m)^---[ \t]*(?:#.*)?$", text):
        try:
            docs += [d for d in load_yaml_all(chunk, max_depth=MAX_DEPTH) if d is not None]
        except UntrustedDocumentError as exc:
            if exc.syntax:
                where = f" at line {offset + exc.line + 1}" if exc.line is not None else ""
                problems.append(f"{source}: malformed YAML{where}")
            else:
                problems.append(f"{source}: YAML refused: {exc}")
        offset += chunk.count("\n") + 1
    if len(problems) > before and not docs:
        raise InputError(problems.pop(before))
    return docs


def read_dotenv(path: Path) -> dict[str, str]:
    """A compose `.env` file: KEY=VALUE lines, `#` comments, optional quotes; `${OTHER}` in an unquoted or
    double-quoted value is interpolated from the lines above, as Compose does (single quotes keep it literal)."""
    from recommender.check.compose_files import compose_interpolate

    env: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = re.match(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$", line)
        if m and not line.lstrip().startswith("#"):
            value = m.group(2)
            quote = value[0] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else ""
            value = value[1:-1] if quote else value
            env[m.group(1)] = value if quote == "'" else str(compose_interpolate(value, env, []))
    return env


def _read_yaml_block(text: str, source: str) -> list[Found]:
    """A YAML text inside another file (a README block, a here-document fed to kubectl)."""
    return read_text(text, source, ".yaml")


def _read_not_yaml(text: str, source: str, suffix: str) -> list[Found] | None:
    """A systemd unit, a Markdown page, a Dockerfile or a shell / Slurm script, by name or content (None: none of
    them, read it as YAML)."""
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    if suffix == ".py":
        raise NotADeployment(
            f"{source}: {_python_kind(text)}: not read (check reads command lines, manifests, compose "
            "files, units and scripts; check the server's command: check -- vllm serve ...)"
        )
    if suffix in _TEMPLATE_SUFFIXES or (suffix in (".yaml", ".yml") and _FORMAT_PLACEHOLDER_LINE.search(text)):
        raise NotADeployment(
            f"{source}: a template ({{placeholders}} a program fills), not a deployment: render it "
            "first, then check the result"
        )
    if suffix == ".service" or (_SYSTEMD.search(text) and _EXEC_START.search(text)):
        return systemd_units.read_systemd(text, source)
    if suffix in (".md", ".markdown"):
        return read_markdown(text, source, _read_yaml_block)
    if _DOCKERFILE_NAME.search(name) or (suffix in ("", ".txt") and looks_like_dockerfile(text)):
        return read_dockerfile(text, source)
    if suffix in _SCRIPT_SUFFIXES or (suffix == "" and (_SCRIPT_START.match(text.lstrip()) or jobs.is_sbatch(text))):
        if jobs.is_sbatch(text):
            return jobs.read_sbatch(text, source, _read_yaml_block)
        return commands.read_command(text, source, read_manifest=_read_yaml_block)
    return None


def _python_kind(text: str) -> str:
    """What a Python file is, for the message that says it is not read."""
    kind = "a Modal app" if re.search(r"^\s*import modal\b|^\s*from modal\b", text, re.M) else "a Python program"
    if re.search(r"\bfrom ray import serve\b|\bray\.serve\b", text):
        kind = "a Ray Serve application"
    return f"{kind} that starts vLLM's server" if _MENTIONS_VLLM.search(text) else kind


def read_text(
    text: str,
    source: str,
    suffix: str = "",
    dotenv: dict[str, str] | None = None,
    problems: list[str] | None = None,
    beside: compose_files.FileReader | None = None,
    origin: Path | None = None,
    shared: Sequence[dict[str, Any]] = (),
) -> list[Found]:
    """Found records in one file's text, whatever its kind (malformed documents of a multi-document file are
    added to `problems` while the others are read; `beside` reads the files a compose service builds from;
    `origin`, the file's folder, finds the charts a GitOps release names by path; `shared`, KServe objects of the
    other files of a checked folder)."""
    not_yaml = _read_not_yaml(text, source, suffix)
    if not_yaml is not None:
        return not_yaml
    template = _HELM_TEMPLATE.search(_YAML_COMMENT_LINE.sub("", text))  # `# ... {{ .Release.Name }}` is a comment
    if template and _values_with_tpl_strings(text):
        template = None  # `args: ["--model={{ .Values.vllm.model }}"]`: values a chart's templates pass to `tpl`
    if template:
        line = text.count("\n", 0, template.start()) + 1
        raise NotADeployment(
            f"{source}: a Helm template ({template.group(0)}... at line {line}), not a manifest: render it first "
            "(helm template RELEASE CHART -f VALUES | vllm-plan check -)"
        )
    docs = _yaml_docs(text, source, problems if problems is not None else [])
    if len(docs) == 1 and isinstance(docs[0], str):
        return commands.read_command(docs[0], source, read_manifest=_read_yaml_block)
    found: list[Found] = []
    k8s: list[dict[str, Any]] = []
    for index, doc in enumerate(docs, 1):
        if not isinstance(doc, dict):
            raise NotADeployment(f"{source}: document {index} is not a mapping (Kubernetes object, values or compose)")
        if gitops.is_gitops_release(doc):
            found += _read_releases(doc, source, index, origin)
        elif "kind" in doc and "apiVersion" in doc and doc.get("kind") != "Plan":
            if not isinstance(doc.get("metadata", {}), dict) or not isinstance(doc.get("spec", {}), (dict, type(None))):
                raise InputError(f"{source}: document {index} ({doc.get('kind')}): metadata and spec must be mappings")
            k8s.append(doc)
        else:
            found += _read_mapping(doc, source, index, dotenv, beside)
    found += kubernetes_objects.read_kubernetes(k8s, source, shared) if k8s else []
    if not found:
        _nothing_read(k8s, shared, source)
    return found


def _nothing_read(k8s: list[dict[str, Any]], shared: Sequence[dict[str, Any]], source: str) -> None:
    """Why Kubernetes objects that mention vLLM gave no server (NotADeployment), if they do."""
    apps = serving_resources.unread_ray_apps(k8s)
    used = kserve_runtimes.used_runtimes([*k8s, *shared]) if shared else set()
    templates = [
        d for d in k8s if d.get("kind") in kserve_runtimes.RUNTIME_KINDS and kserve_runtimes.name_of(d) in used
    ]
    if templates:
        names = ", ".join(f"{d.get('kind')}/{kserve_runtimes.name_of(d)}" for d in templates)
        raise NotADeployment(f"{source}: {names}: read with the InferenceService of another file that runs on it")
    unread = [d for d in k8s if _MENTIONS_VLLM.search(str(d))] if not apps else []
    if unread:
        kinds = ", ".join(f"{d.get('kind')} ({d.get('apiVersion')})" for d in unread)
        raise NotADeployment(
            f"{source}: {kinds} holds a vLLM command outside any pod template (its controller fills it in): "
            "not a workload check reads; check the pods it creates (kubectl get pod NAME -o yaml | vllm-plan check -)"
        )
    if apps:
        raise NotADeployment(
            f"{source}: {'; '.join(apps)}: Python code of its own, which check does not read (it reads "
            "ray.serve.llm applications and containers running vLLM's server)"
        )


def _read_releases(doc: dict[str, Any], source: str, index: int, origin: Path | None) -> list[Found]:
    """The servers of the Helm releases an Argo CD Application/ApplicationSet or Flux HelmRelease declares: its
    chart rendered by helm when the chart is in the repository (Argo CD's `path`), else from its inline values; a
    release of a vLLM chart whose values or templates are not at hand is not evaluated."""
    found: list[Found] = []
    for release in gitops.helm_releases(doc):
        label = f"{source} [{release.where}]"
        rendered = _render_release(release, label, origin)
        if rendered is not None:
            found += rendered
            continue
        known = bool(release.values)
        try:
            got = _read_mapping(release.values, label, index, None) if release.values else []
        except NotADeployment:
            got, known = [], False  # another chart's values (cert-manager, a monitoring stack): no vLLM server
        vllm = bool(got) or "vllm" in release.where.lower() or bool(_unknown_chart_values(release.values))
        if release.values_elsewhere and vllm:
            raise InputError(
                f"{label}: its Helm values also come from {', '.join(release.values_elsewhere)}, not in this file: "
                "render the release and check the result (vllm-plan check --chart CHART_DIR VALUES...)"
            )
        if vllm and not known:
            raise InputError(
                f"{label}: the values of a chart check does not know: its templates, not in this file, make vLLM's "
                "command line; render them (vllm-plan check --chart CHART_DIR VALUES, or check the folder holding "
                "the chart and this file, with helm installed)"
            )
        found += got
    return found


def _render_release(release: gitops.HelmRelease, label: str, origin: Path | None) -> list[Found] | None:
    """The release rendered by helm, when its chart is a folder of the repository at hand; None otherwise."""
    helm = helm_charts.find_helm()
    chart = helm_charts.local_chart(origin, release.chart_path) if origin and release.chart_path else None
    if chart is None or helm is None:
        return None
    files = [(chart / f).resolve() for f in release.values_elsewhere]
    missing = [str(f) for f, p in zip(release.values_elsewhere, files, strict=True) if not p.is_file()]
    if missing:
        raise InputError(f"{label}: value file(s) {', '.join(missing)} not found in chart {chart}")
    out = Loaded()
    _read_rendered(chart, helm_charts.render(chart, files, helm, release.values), out, label)
    if out.problems:
        raise InputError(out.problems[0])
    return out.found


def _read_mapping(
    doc: dict[str, Any],
    source: str,
    index: int,
    dotenv: dict[str, str] | None,
    beside: compose_files.FileReader | None = None,
) -> list[Found]:
    """A YAML document that is not a Kubernetes object: plan, Helm values, compose, dstack, SkyPilot."""
    if doc.get("kind") == "Plan" and str(doc.get("apiVersion", "")).startswith("vllm-plan/"):
        return plan_documents.read_plan(doc, source)
    known = _known_chart_values(doc, source)
    if known is not None:
        return known
    for sub in doc.values():  # an umbrella chart passes a subchart its values under the subchart's name or alias
        known = _known_chart_values(sub, source) if isinstance(sub, dict) else None
        if known is not None:
            return known
    if "services" in doc:
        return compose_files.read_compose(doc, source, dotenv, beside)
    if jobs.is_dstack(doc):
        return jobs.read_dstack(doc, source)
    if jobs.is_skypilot(doc):
        return jobs.read_skypilot(doc, source)
    if jobs.is_beaker(doc):
        return jobs.read_beaker(doc, source)
    if "modelName" in doc and isinstance(doc.get("apiServer"), dict):
        return helm_values.read_nm_vllm_chart(doc, source)
    found = helm_values.read_values_containers(doc, source)
    if found:
        return found
    chart = _unknown_chart_values(doc)
    if chart:  # a vLLM server not evaluated, not a file of another kind: a problem, also in a folder run
        raise InputError(
            f"{source}: the values of a chart check does not know ({chart}): its templates, not in the file, make "
            "vLLM's command line; render them with the chart (vllm-plan check --chart CHART_DIR VALUES, or "
            "helm template RELEASE CHART -f VALUES | vllm-plan check -)"
        )
    raise NotADeployment(
        f"{source}: document {index} is not a Kubernetes object, Helm values (production-stack, the vLLM chart, "
        "nm-vllm, or values holding a container), compose file, dstack or SkyPilot task, Beaker experiment, "
        "systemd unit, Dockerfile, plan or vllm serve command"
    )


def _values_with_tpl_strings(text: str) -> bool:
    """A values file whose strings hold template actions (a chart renders them with `tpl`): it parses as YAML
    mappings, none a Kubernetes object (a template's `{{- if }}` lines do not parse; a manifest has a kind)."""
    try:
        docs = [d for d in load_yaml_all(text, max_depth=MAX_DEPTH) if d is not None]
    except UntrustedDocumentError:
        return False
    return bool(docs) and all(isinstance(d, dict) and not ("kind" in d and "apiVersion" in d) for d in docs)


def _known_chart_values(doc: dict[str, Any], source: str) -> list[Found] | None:
    """The servers of production-stack's or the vLLM chart's values; None when `doc` is neither."""
    if "servingEngineSpec" in doc:
        return helm_values.read_helm(doc, source)
    if isinstance(doc.get("image"), dict) and "command" in doc["image"]:
        found = helm_values.read_vllm_chart(doc, source)
        if found:  # else another chart with an image.command of its own (`bash -c`, args elsewhere)
            return found
    if helm_values.is_kubeai_models_values(doc):
        found = helm_values.read_kubeai_models_chart(doc, source)
        if not found:
            raise NotADeployment(
                f"{source}: the values of KubeAI's models chart enable no catalog entry (`enabled: true`, or "
                "all.enabled): the chart deploys no Model"
            )
        return found
    return None


def _unknown_chart_values(doc: dict[str, Any]) -> str:
    """'image I, model M' when a values document names a vLLM image (an `image` or `repository` anywhere: image,
    image.repository, images.vllm.repository) and a model (model, model.name, model.id, modelName, modelURL, a
    config's `model`, or `--model M` in an args list), as the values of a chart of one's own do; "" otherwise."""
    images: list[str] = []
    models: list[str] = []
    _values_walk(doc, images, models, 0)
    if not (images and models):
        return ""
    return f"image {images[0]}, model {models[0]}"


def _values_walk(node: Any, images: list[str], models: list[str], depth: int) -> None:
    if depth > 8:  # values nest a few levels; deeper is not a chart's image or model
        return
    if isinstance(node, list):
        words = [str(w) for w in node if isinstance(w, (str, int, float))]
        for i, word in enumerate(words):
            if word == "--model" and i + 1 < len(words):
                models.append(words[i + 1])
            elif word.startswith("--model="):
                models.append(word.split("=", 1)[1])
        for item in node:
            _values_walk(item, images, models, depth + 1)
        return
    if not isinstance(node, dict):
        return
    for key in ("image", "repository"):
        ref = node.get(key)
        if isinstance(ref, str) and ref and is_vllm_image(ref):
            images.append(ref)
    models += [str(node[k]) for k in ("model", "modelName", "modelURL", "modelId") if isinstance(node.get(k), str)]
    model = node.get("model")
    if isinstance(model, dict) and isinstance(model.get("name") or model.get("id"), str):
        models.append(str(model.get("name") or model.get("id")))
    for value in node.values():
        _values_walk(value, images, models, depth + 1)


def _read_file(path: Path, label: str) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"{label}: larger than {MAX_BYTES >> 20} MiB, not a deployment file")
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {label}: {exc.strerror}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not UTF-8 text (byte {exc.start})") from None


def load_file(path: Path, label: str, problems: list[str], shared: Sequence[dict[str, Any]] = ()) -> list[Found]:
    """One file's servers (a `.env` beside a compose file is read for its interpolation; `shared`: KServe objects
    of the other files of the folder being checked)."""
    text = _read_file(path, label)
    dotenv_path = path.parent / ".env"
    dotenv = read_dotenv(dotenv_path) if dotenv_path.is_file() else None
    return read_text(text, label, path.suffix, dotenv, problems, _reader_beside(path), path.parent, shared)


_KSERVE_KINDS = ("InferenceService", "ServingRuntime", "ClusterServingRuntime")


def kserve_objects(files: Sequence[Path]) -> dict[Path, list[dict[str, Any]]]:
    """The KServe InferenceServices and (Cluster)ServingRuntimes of each YAML file of a folder, so that one whose
    runtime is in another file is combined with it as KServe does (unreadable files give none: read later)."""
    out: dict[Path, list[dict[str, Any]]] = {}
    for f in files:
        if f.suffix not in (".yaml", ".yml", ".json") or f.stat().st_size > MAX_BYTES:
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        if not any(k in text for k in _KSERVE_KINDS):
            continue
        try:
            docs = _yaml_docs(text, str(f), [])
        except InputError:
            continue
        got = [
            d
            for d in docs
            if isinstance(d, dict)
            and d.get("kind") in _KSERVE_KINDS
            and str(d.get("apiVersion", "")).startswith("serving.kserve.io/")
        ]
        if got:
            out[f] = got
    return out


def _reader_beside(path: Path) -> compose_files.FileReader:
    """Reads a file under the folder of `path` (a compose service's Dockerfile), by a path relative to it; None for
    a file outside that folder, missing, too large or not UTF-8 (the reading then goes on without it)."""
    root = path.parent.resolve()

    def read(relative: str) -> str | None:
        try:
            target = (root / relative).resolve()
            if not target.is_relative_to(root) or not target.is_file() or target.stat().st_size > MAX_BYTES:
                return None
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    return read


def _nothing_found(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if _MENTIONS_VLLM.search(text):
        return (
            "no vLLM server found: vLLM's server is named only where nothing runs it (a comment, a grep or pkill "
            "pattern, a message, a program the file starts but does not contain)"
        )
    return "no vLLM server found (no container or command runs `vllm serve`)"


def load_inputs(inputs: tuple[str, ...], stdin_text: str | None = None) -> Loaded:
    """All servers found; what could not be read is a problem for that input only."""
    if not inputs:
        raise InputError("give at least one input: a vllm serve command, a file, a directory, or - for stdin")
    out = Loaded()
    for item in inputs:
        path = Path(item)
        try:
            if item == "-":
                text = stdin_text if stdin_text is not None else sys.stdin.read()
                got = read_text(text, "<stdin>", problems=out.problems)
                if not got:
                    out.problems.append("<stdin>: no vLLM server found")
                out.found += got
            elif path_kind(path) == "dir":  # "missing" too for a command longer than a file name can be
                _load_dir(path, out)
            elif path_kind(path) == "file" and helm_charts.chart_of(path) and helm_charts.find_helm():
                _load_chart_file(path, out)
            elif path_kind(path) == "file":
                got = load_file(path, item, out.problems)
                if not got:
                    out.problems.append(f"{item}: {_nothing_found(path)}")
                out.found += got
            elif re.search(r"\bvllm\b.*\bserve\b|vllm\.entrypoints|^serve\s", item):
                got = commands.read_command(item if not item.startswith("serve ") else "vllm " + item, "<argument>")
                if not got:
                    out.problems.append("<argument>: the command does not run `vllm serve`")
                out.found += got
            else:
                out.problems.append(_unread(item, path))
        except InputError as exc:
            out.problems.append(_naming(item, exc))
    return out


def _naming(where: str, exc: InputError) -> str:
    """The problem as one line that names the input it is in (a reader's message may name only the field)."""
    text = str(exc)
    return text if where in text or (where == "-" and text.startswith("<stdin>")) else f"{where}: {text}"


def _unread(item: str, path: Path) -> str:
    """Why an argument that is neither a file, a folder nor a command was not read."""
    if path_kind(path) == "other":
        return f"{item}: not a regular file (a device, FIFO or socket): not read"
    try:
        link = path.is_symlink()
    except (OSError, ValueError):  # a name too long to look up, a NUL byte
        link = False
    if link:
        return f"{item}: a symbolic link to nothing (or a loop of links): not read"
    return f"{item}: no such file or directory (and not a `vllm serve ...` command)"


def load_chart(chart: Path, values: tuple[str, ...]) -> Loaded:
    """`check --chart CHART [VALUES...]`: the chart rendered by helm with each values file (one release each), or
    with its own values.yaml alone."""
    out = Loaded()
    helm = helm_charts.find_helm()
    if not helm_charts.is_chart(chart):
        raise InputError(f"--chart {chart}: not a Helm chart folder (no Chart.yaml and templates/ in it)")
    if helm is None:
        raise InputError(f"--chart {chart}: {_NO_HELM}")
    for item in values or ("",):
        try:
            if item and path_kind(Path(item)) != "file":
                raise InputError(f"{item}: no such values file")
            before = len(out.found)
            _read_rendered(chart, helm_charts.render(chart, [Path(item)] if item else [], helm), out, item)
            if len(out.found) == before:
                out.problems.append(f"{item or chart}: no vLLM server in what chart {chart} renders with it")
        except InputError as exc:
            out.problems.append(str(exc))
    return out


_NO_HELM = "rendering a chart needs helm: install it (or pip install 'vllm-plan[helm]' on Linux x86-64)"


def _load_chart_file(path: Path, out: Loaded) -> None:
    """A chart's own values.yaml (the chart rendered with it), a values file kept in its folder (the chart rendered
    with that one too), or one of its templates (that template's output with the chart's own values)."""
    chart = helm_charts.chart_of(path)
    helm = helm_charts.find_helm()
    assert chart is not None and helm is not None
    template = path.relative_to(chart).parts[0] == "templates"
    overlay = not template and path != chart / "values.yaml"
    rendered = helm_charts.render(chart, [path] if overlay else [], helm)
    if template:
        inside = path.relative_to(chart).as_posix()
        rendered = [r for r in rendered if r.template.split("/", 1)[-1] == inside]
    before = len(out.found)
    _read_rendered(chart, rendered, out, str(path) if overlay else "")
    if len(out.found) == before:
        out.problems.append(f"{path}: no vLLM server in what chart {chart} renders (helm template)")


def _read_rendered(chart: Path, rendered: list[helm_charts.Rendered], out: Loaded, values: str) -> None:
    """The servers in a chart's rendered templates, each named by chart, template and values file."""
    before = len(out.found)
    with_values = f" -f {values}" if values else ""
    # one release: a template's pod mounts another template's ConfigMap, an InferenceService runs on another
    # template's ServingRuntime
    shared = _rendered_shared(rendered)
    for r in rendered:
        label = f"{chart}{with_values} [helm template: {r.template}]"
        others = [d for template, d in shared if template != r.template]
        try:
            out.found += read_text(r.text, label, ".yaml", problems=out.problems, shared=others)
        except NotADeployment:
            continue
        except InputError as exc:
            out.problems.append(_naming(label, exc))
    if len(out.found) == before:
        out.notes.append(f"skipped {chart}{with_values}: no vLLM server in what its templates render")


def _rendered_shared(rendered: list[helm_charts.Rendered]) -> list[tuple[str, dict[str, Any]]]:
    """The ConfigMaps and KServe objects a chart renders, with the template of each (malformed output is reported
    where it is read)."""
    kinds = ("ConfigMap", *_KSERVE_KINDS)
    out: list[tuple[str, dict[str, Any]]] = []
    for r in rendered:
        if not any(k in r.text for k in kinds):
            continue
        try:
            docs = _yaml_docs(r.text, r.template, [])
        except InputError:
            continue
        out += [(r.template, d) for d in docs if isinstance(d, dict) and d.get("kind") in kinds]
    return out


def _load_dir(path: Path, out: Loaded) -> None:
    helm = helm_charts.find_helm()
    charts = helm_charts.chart_roots(path)
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and (p.suffix in SUFFIXES or _DOCKERFILE_NAME.search(p.name))
        and not (helm and any(p.is_relative_to(c) for c in charts))
    )
    notes, before = len(out.notes), len(out.found)
    for chart in charts if helm else ():  # each chart with its own values, then each values file in its folder
        for values in [None, *helm_charts.overlays(chart)]:
            assert helm is not None
            try:
                rendered = helm_charts.render(chart, [values] if values else [], helm)
                _read_rendered(chart, rendered, out, str(values or ""))
            except InputError as exc:
                out.problems.append(str(exc))
    out.notes += [f"skipped {chart}: a Helm chart, not read: {_NO_HELM}" for chart in (charts if not helm else ())]
    for f in sorted(path.rglob("*.py")):  # a Python program that starts vLLM is named as not read, not skipped silently
        text = f.read_text(encoding="utf-8", errors="replace") if f.is_file() and f.stat().st_size <= MAX_BYTES else ""
        if _MENTIONS_VLLM.search(text):
            out.notes.append(f"skipped {f}: {_python_kind(text)}: not read")
    kserve = kserve_objects(files)
    for f in files:
        shared = [d for other, docs in kserve.items() if other != f for d in docs]
        try:
            got = load_file(f, str(f), out.problems, shared)
        except InputError as exc:
            if f.suffix in (".yaml", ".yml", ".json", ".service") and not isinstance(exc, NotADeployment):
                out.problems.append(_naming(str(f), exc))
            else:
                out.notes.append(f"skipped {f}: {exc}")
            continue
        if got:
            out.found += got
        else:
            out.notes.append(f"skipped {f}: no vLLM server in it")
    if len(out.found) == before:
        unread = [n.removeprefix("skipped ") for n in out.notes[notes:] if "not read" in n][:3]
        more = f" ({'; '.join(unread)})" if unread else ""
        charts_too = f" and {len(charts)} chart(s)" if charts and helm else ""
        out.problems.append(f"{path}: no vLLM server found in {len(files)} file(s){charts_too}{more}")
