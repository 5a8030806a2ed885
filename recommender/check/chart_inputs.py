"""`check --chart` and the Helm charts a folder holds, read through `helm template` (I/O edge): a chart rendered with
each values file, its own values.yaml, one of its templates, or, when its dependencies are not vendored, the
servers its merged values hold for a chart check knows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from recommender.check import helm_charts
from recommender.check.load import NotADeployment, read_text
from recommender.check.loaded import Loaded, naming
from recommender.check.shared_objects import KSERVE_KINDS, objects_of_kinds
from recommender.errors import InputError, NotEvaluatedError
from recommender.safe_load import path_kind


def load_chart(chart: Path, values: tuple[str, ...]) -> Loaded:
    """`check --chart CHART [VALUES...]`: the chart rendered by helm with each values file (one release each), or
    with its own values.yaml alone."""
    out = Loaded()
    helm = helm_charts.find_helm()
    if not helm_charts.is_chart(chart):
        raise InputError(f"--chart {chart}: not a Helm chart folder (no Chart.yaml and templates/ in it)")
    if helm is None:
        raise NotEvaluatedError(f"--chart {chart}: {NO_HELM}")
    for item in values or ("",):
        try:
            if item and path_kind(Path(item)) != "file":
                raise InputError(f"{item}: no such values file")
            before, problems = len(out.found), len(out.problems)
            render_chart(chart, [Path(item)] if item else [], helm, out, item)
            if len(out.found) == before and len(out.problems) == problems:
                out.problems.append(f"{item or chart}: no vLLM server in what chart {chart} renders with it")
        except InputError as exc:
            out.problems.append(str(exc))
    return out


NO_HELM = "rendering a chart needs helm: install it (or pip install 'vllm-plan[helm]' on Linux x86-64)"


def load_chart_file(path: Path, out: Loaded) -> None:
    """A chart's own values.yaml (the chart rendered with it), a values file kept in its folder (the chart rendered
    with that one too), or one of its templates (that template's output with the chart's own values)."""
    chart = helm_charts.chart_of(path)
    helm = helm_charts.find_helm()
    assert chart is not None and helm is not None
    template = path.relative_to(chart).parts[0] == "templates"
    overlay = not template and path != chart / "values.yaml"
    before, problems = len(out.found), len(out.problems)
    if template:
        inside = path.relative_to(chart).as_posix()
        rendered = [r for r in helm_charts.render(chart, [], helm) if r.template.split("/", 1)[-1] == inside]
        read_rendered(chart, rendered, out, "")
    else:
        render_chart(chart, [path] if overlay else [], helm, out, str(path) if overlay else "")
    if len(out.found) == before and len(out.problems) == problems:
        out.problems.append(f"{path}: no vLLM server in what chart {chart} renders (helm template)")


def load_values_file(chart: Path, path: Path, out: Loaded) -> None:
    """A values file kept outside its chart's folder (helm_charts.values_chart): the chart rendered with it."""
    helm = helm_charts.find_helm()
    assert helm is not None
    before, problems = len(out.found), len(out.problems)
    render_chart(chart, [path], helm, out, str(path))
    if len(out.found) == before and len(out.problems) == problems:
        out.problems.append(f"{path}: no vLLM server in what chart {chart} renders with it (helm template)")


def render_chart(chart: Path, values: list[Path], helm: str, out: Loaded, shown: str) -> None:
    """The chart rendered with these values files; when helm cannot render it for want of dependencies not vendored
    under charts/, the servers its merged values hold for a chart check knows (production-stack's values under its
    `vllm-stack:` key, the vLLM chart's), else a problem naming the dependencies."""
    try:
        rendered = helm_charts.render(chart, values, helm)
    except helm_charts.MissingDependencies as exc:
        _read_values_unrendered(chart, values, exc.names, out, shown)
        return
    read_rendered(chart, rendered, out, shown)


def _read_values_unrendered(chart: Path, values: list[Path], names: tuple[str, ...], out: Loaded, shown: str) -> None:
    deps = ", ".join(names)
    label = f"{chart}{f' -f {shown}' if shown else ''} [values; dependencies {deps} not in charts/]"
    why = "its values hold no vLLM server of a chart check knows"
    try:
        got = read_text(yaml.safe_dump(helm_charts.merged_values(chart, values)), label, ".yaml")
    except NotADeployment:
        got = []
    except InputError as exc:
        got, why = [], str(exc).removeprefix(f"{label}: ")
    if got:
        out.found += got
        out.notes.append(
            f"{chart}: its dependencies {deps} are not vendored under charts/ (helm dependency build): the servers "
            "were read from its values; its own templates were not rendered"
        )
        return
    out.problems.append(
        f"{label}: helm cannot render it: its dependencies are missing in charts/ directory: {deps} (helm "
        f"dependency build fetches them; check does not), and {why}: not evaluated"
    )


def read_rendered(chart: Path, rendered: list[helm_charts.Rendered], out: Loaded, values: str) -> None:
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
            out.problems.append(naming(label, exc))
    if len(out.found) == before:
        out.notes.append(f"skipped {chart}{with_values}: no vLLM server in what its templates render")


def _rendered_shared(rendered: list[helm_charts.Rendered]) -> list[tuple[str, dict[str, Any]]]:
    """The ConfigMaps and KServe objects a chart renders, with the template of each."""
    kinds = ("ConfigMap", *KSERVE_KINDS)
    return [(r.template, d) for r in rendered for d in objects_of_kinds(r.text, r.template, kinds)]
