"""One input's text read into Found records, whatever its kind: Kubernetes objects, Helm values, GitOps releases,
compose files, systemd units, Dockerfiles, scripts, README blocks, plans, a `vllm serve` command.

A document that cannot be read raises InputError naming the source; what walks files and folders is check/inputs.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from recommender.check import (
    ansible_playbooks,
    commands,
    compose_files,
    compose_project,
    gitops,
    helm_values,
    jobs,
    kserve_runtimes,
    kubernetes_objects,
    makefiles,
    plan_documents,
    python_apps,
    ray_python_apps,
    serving_resources,
    shell,
    systemd_units,
)
from recommender.check.dockerfile import looks_like_dockerfile, read_dockerfile
from recommender.check.found import Found
from recommender.check.images import is_vllm_image
from recommender.check.markdown import read_markdown
from recommender.errors import InputError
from recommender.safe_load import UntrustedDocumentError, load_yaml_all

SUFFIXES = {".yaml", ".yml", ".json", ".service", ".sh", ".bash", ".zsh", ".txt", ".cmd", ".md", ".slurm", ".sbatch"}
MAX_BYTES = 8 << 20  # a deployment file larger than 8 MiB is refused, not parsed
MAX_DEPTH = 64  # deeper than any manifest (a Kubernetes object nests ~15 levels)
_SYSTEMD = re.compile(r"^\[Service\]\s*$", re.M)
_EXEC_START = re.compile(r"^ExecStart=", re.M)
DOCKERFILE_NAME = re.compile(r"(^|[./_-])(dockerfile|containerfile)([./_-]|$)", re.I)
_SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".txt", ".cmd", ".slurm", ".sbatch", ".job")
# Go template actions of a Helm chart's templates/ (KServe's `{{.Name}}` inside a value is not one)
_HELM_TEMPLATE = re.compile(
    r"\{\{-?\s*(if|else|end|range|with|include|template|define|toYaml|\.Values|\.Release|\.Chart)\b"
)
# a YAML line that is only a comment (blanked before looking for template actions, keeping the line count)
_YAML_COMMENT_LINE = re.compile(r"(?m)^[ \t]*#.*$")
# vLLM's server named in a text: `vllm serve`, "vllm", "serve" (a Python list), its entrypoint modules
MENTIONS_VLLM = re.compile(r"""\bvllm\b["',\s]+serve\b|vllm\.entrypoints\.""")
# a line that is only a `{name}` placeholder (Python str.format / SkyPilot-style templates filled by a program)
_FORMAT_PLACEHOLDER_LINE = re.compile(r"^\s*\{[A-Za-z_][A-Za-z0-9_]*\}\s*$", re.M)
_TEMPLATE_SUFFIXES = (".tpl", ".tmpl", ".j2", ".jinja", ".jinja2")
# a template of other syntax than envsubst's `${NAME}`: Go/Jinja `{{ }}` / `{% %}`, Python's str.format `{name}`
_OTHER_PLACEHOLDERS = re.compile(r"\{\{|\{%|(?<!\$)\{[A-Za-z_]\w*\}")
_LONE_PLACEHOLDER = re.compile(r"^[ \t]*\$\{[A-Za-z_]\w*\}[ \t]*$", re.M)
_SCRIPT_START = re.compile(r"^(vllm|exec|#!|python|docker|podman|CUDA_VISIBLE|export|srun|sudo|nohup|uv )")


# renders a GitOps release whose chart is in the repository at hand (check/inputs.py): its servers, or None
ReleaseRenderer = Callable[[gitops.HelmRelease, str], "list[Found] | None"]


class NotADeployment(InputError):
    """A file of some other kind (a CI workflow, a hook list): skipped in a directory, an error when named."""


def yaml_docs(text: str, source: str, problems: list[str]) -> list[Any]:
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


def _read_yaml_block(text: str, source: str) -> list[Found]:
    """A YAML text inside another file (a README block, a here-document fed to kubectl)."""
    return read_text(text, source, ".yaml")


def is_dockerfile(name: str, suffix: str, text: str) -> bool:
    """A Dockerfile / Containerfile, by its name (`Dockerfile.pod`, `app.dockerfile`) or, unnamed, by its content."""
    return bool(DOCKERFILE_NAME.search(name)) or (suffix in ("", ".txt") and looks_like_dockerfile(text))


def _read_not_yaml(
    text: str,
    source: str,
    suffix: str,
    beside: compose_project.FileReader | None = None,
    origin: shell.Origin | None = None,
) -> list[Found] | None:
    """A systemd unit, a Markdown page, a Dockerfile (its build context the folder `beside` reads) or a shell /
    Slurm script, by name or content (None: none of them, read it as YAML); `origin`: a script file, for the files
    it sources."""
    name = source.replace("\\", "/").rsplit("/", 1)[-1]
    if suffix == ".py":
        servers = python_apps.read_python_app(text, source, _read_command_line)
        if servers:
            return servers
        raise NotADeployment(
            f"{source}: {python_kind(text)}: not read (check reads command lines, manifests, compose "
            "files, units and scripts; check the server's command: check -- vllm serve ...)"
        )
    if suffix in _TEMPLATE_SUFFIXES or (suffix in (".yaml", ".yml") and _FORMAT_PLACEHOLDER_LINE.search(text)):
        raise NotADeployment(
            f"{source}: a template ({{placeholders}} a program fills), not a deployment: render it "
            "first, then check the result"
        )
    # a unit by name, or by content unless the file is a shell script (one may write a unit with a here-document)
    script = suffix in (".sh", ".bash", ".zsh") or text.lstrip().startswith("#!")
    if suffix == ".service" or (not script and _SYSTEMD.search(text) and _EXEC_START.search(text)):
        return systemd_units.read_systemd(text, source, origin=origin)
    if suffix in (".md", ".markdown"):
        return read_markdown(text, source, _read_yaml_block)
    if makefiles.is_makefile(name):
        return makefiles.read_makefile(text, source, partial(_read_recipe, origin=origin))
    if is_dockerfile(name, suffix, text):
        return read_dockerfile(text, source, beside)
    if suffix in _SCRIPT_SUFFIXES or (suffix == "" and (_SCRIPT_START.match(text.lstrip()) or jobs.is_sbatch(text))):
        if jobs.is_sbatch(text):
            return jobs.read_sbatch(text, source, _read_yaml_block)
        return commands.read_command(
            text, source, read_manifest=_read_yaml_block, origin=origin, read_unit=systemd_units.read_written_unit
        )
    return None


def _read_recipe(script: str, source: str, env: Mapping[str, str], origin: shell.Origin | None) -> list[Found]:
    """A Makefile's recipe line, as the shell make starts for it runs it."""
    return commands.read_command(
        script, source, env, read_manifest=_read_yaml_block, origin=origin, read_unit=systemd_units.read_written_unit
    )


def _read_command_line(line: str, source: str) -> list[Found]:
    """The command line a Python program runs, read as a script's would be."""
    return commands.read_command(line, source)


def python_kind(text: str) -> str:
    """What a Python file is, for the message that says it is not read."""
    kind = "a Modal app" if re.search(r"^\s*import modal\b|^\s*from modal\b", text, re.M) else "a Python program"
    if re.search(r"\bfrom ray import serve\b|\bray\.serve\b", text):
        kind = "a Ray Serve application"
    return f"{kind} that starts vLLM's server" if MENTIONS_VLLM.search(text) else kind


def read_text(
    text: str,
    source: str,
    suffix: str = "",
    dotenv: dict[str, str] | None = None,
    problems: list[str] | None = None,
    beside: compose_project.FileReader | None = None,
    render_release: ReleaseRenderer | None = None,
    shared: Sequence[dict[str, Any]] = (),
    unread: compose_project.UnreadReason | None = None,
    origin: shell.Origin | None = None,
) -> list[Found]:
    """Found records in one file's text, whatever its kind (malformed documents of a multi-document file are
    added to `problems` while the others are read; `beside` reads the files a compose service builds from;
    `render_release` renders a GitOps release whose chart is at hand (None: not rendered); `shared`, KServe objects of the
    other files of a checked folder; `unread` says why `beside` gave no text for a file a compose file names)."""
    if suffix in (".tpl", ".tmpl") and "${" in text and not _OTHER_PLACEHOLDERS.search(text):
        # a manifest envsubst renders: read as one, its ${NAME}s unresolved; a line that is only a placeholder is a
        # fragment the renderer inserts there (`${MODEL_CACHE_VOLUME_SPEC}` under a volume), not YAML yet: left out
        text, suffix = _LONE_PLACEHOLDER.sub("", text), ".yaml"
    not_yaml = _read_not_yaml(text, source, suffix, beside, origin)
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
    docs = yaml_docs(text, source, problems if problems is not None else [])
    if len(docs) == 1 and not isinstance(docs[0], dict):
        return _read_one_document(docs[0], source)
    found: list[Found] = []
    k8s: list[dict[str, Any]] = []
    for index, doc in enumerate(docs, 1):
        if not isinstance(doc, dict):
            raise NotADeployment(f"{source}: document {index} is not a mapping (Kubernetes object, values or compose)")
        if gitops.is_gitops_release(doc):
            found += _read_releases(doc, source, index, render_release)
        elif "kind" in doc and "apiVersion" in doc and doc.get("kind") != "Plan":
            if not isinstance(doc.get("metadata", {}), dict) or not isinstance(doc.get("spec", {}), (dict, type(None))):
                raise InputError(f"{source}: document {index} ({doc.get('kind')}): metadata and spec must be mappings")
            k8s.append(doc)
        else:
            found += _read_mapping(doc, source, index, dotenv, beside, unread, origin)
    found += kubernetes_objects.read_kubernetes(k8s, source, shared) if k8s else []
    found += ray_python_apps.read_ray_services(k8s, source, origin) if k8s else []
    found += ray_python_apps.read_ray_clusters(k8s, source, origin) if k8s and not found else []
    if not found:
        _nothing_read(k8s, shared, source, origin)
    return found


def _read_one_document(doc: Any, source: str) -> list[Found]:
    """A file of one YAML document that is not a mapping: a command line (a string), an Ansible playbook."""
    if isinstance(doc, str):
        return commands.read_command(doc, source, read_manifest=_read_yaml_block)
    if ansible_playbooks.is_playbook(doc):
        found = ansible_playbooks.read_playbook(doc, source, _read_command_line)
        if not found:
            raise NotADeployment(f"{source}: an Ansible playbook whose tasks start no vLLM server")
        return found
    raise NotADeployment(f"{source}: document 1 is not a mapping (Kubernetes object, values or compose)")


def _nothing_read(
    k8s: list[dict[str, Any]], shared: Sequence[dict[str, Any]], source: str, origin: shell.Origin | None
) -> None:
    """Why Kubernetes objects that mention vLLM gave no server (NotADeployment), if they do."""
    apps = serving_resources.unread_ray_apps(k8s)
    used = kserve_runtimes.used_runtimes([*k8s, *shared]) if shared else set()
    templates = [
        d for d in k8s if d.get("kind") in kserve_runtimes.RUNTIME_KINDS and kserve_runtimes.name_of(d) in used
    ]
    if templates:
        names = ", ".join(f"{d.get('kind')}/{kserve_runtimes.name_of(d)}" for d in templates)
        raise NotADeployment(f"{source}: {names}: read with the InferenceService of another file that runs on it")
    unread = [d for d in k8s if MENTIONS_VLLM.search(str(d))] if not apps else []
    if unread:
        kinds = ", ".join(f"{d.get('kind')} ({d.get('apiVersion')})" for d in unread)
        raise NotADeployment(
            f"{source}: {kinds} holds a vLLM command outside any pod template (its controller fills it in): "
            "not a workload check reads; check the pods it creates (kubectl get pod NAME -o yaml | vllm-plan check -)"
        )
    if apps:
        raise NotADeployment(
            f"{source}: {'; '.join(apps)}: Python code of its own, not read: "
            f"{ray_python_apps.ray_services_unread(k8s, origin)}"
        )


def _read_releases(doc: dict[str, Any], source: str, index: int, render_release: ReleaseRenderer | None) -> list[Found]:
    """The servers of the Helm releases an Argo CD Application/ApplicationSet or Flux HelmRelease declares: its
    chart rendered by helm when the chart is in the repository (Argo CD's `path`), else from its inline values; a
    release of a vLLM chart whose values or templates are not at hand is not evaluated."""
    found: list[Found] = []
    for release in gitops.helm_releases(doc):
        label = f"{source} [{release.where}]"
        rendered = render_release(release, label) if render_release else None
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


def _read_mapping(
    doc: dict[str, Any],
    source: str,
    index: int,
    dotenv: dict[str, str] | None,
    beside: compose_project.FileReader | None = None,
    unread: compose_project.UnreadReason | None = None,
    origin: shell.Origin | None = None,
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
    if "services" in doc or compose_project.is_compose_include(doc.get("include")):
        return compose_files.read_compose(doc, source, dotenv, beside, unread)
    task = _read_task(doc, source, origin)
    if task is not None:
        return task
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
        "nm-vllm, or values holding a container), compose file, dstack or SkyPilot task, Beaker experiment, Ray Serve "
        "config, spark-vllm-docker recipe, systemd unit, Dockerfile, plan or vllm serve command"
    )


def _read_task(doc: dict[str, Any], source: str, origin: shell.Origin | None = None) -> list[Found] | None:
    """A job or serving-framework file (dstack, SkyPilot, Beaker, Ray Serve, a spark-vllm-docker recipe), or None
    when it is none of them."""
    if serving_resources.is_ray_serve_config(doc):
        found = serving_resources.read_ray_serve_config(doc, source)
        found += ray_python_apps.read_own_apps(doc, source, "serve config", origin) if "applications" in doc else []
        if not found:
            own = ray_python_apps.unread_reason(doc, origin)
            why = f"its own Python, not read: {own}" if own else serving_resources.ray_config_unread(doc)
            raise NotADeployment(f"{source}: a Ray Serve config: {why}")
        return found
    if jobs.is_dstack(doc):
        return jobs.read_dstack(doc, source)
    if jobs.is_skypilot(doc):
        return jobs.read_skypilot(doc, source)
    if jobs.is_beaker(doc):
        return jobs.read_beaker(doc, source)
    if jobs.is_spark_recipe(doc):
        return jobs.read_spark_recipe(doc, source)
    return None


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
