"""Reports: chart geometry checked by hand, the pages and plots through the CLI, and every page in headless Chromium.

The browser tests fail on any console error or network request and check that the charts drew.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from recommender.catalog import load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import Explanation, explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.perf.load import Load
from recommender.report.figures import (
    BudgetBar,
    BudgetFigure,
    CapacityFigure,
    CapacitySeries,
    CurveFigure,
    CurveSeries,
    Segment,
    budget_bars,
    capacity_series,
    knee,
)
from recommender.report.markdown import item_lines, md
from recommender.report.perf import default_concurrencies
from recommender.report.structure import Cell
from recommender.report.svg import (
    Circle,
    Line,
    Polyline,
    Rect,
    Text,
    budget_chart,
    capacity_chart,
    curve_chart,
    nice_bound,
    nice_step,
)
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

from .browser import Browser, PageResult, chromium_binary, png_size
from .conftest import ROOT, invoke

README_EXAMPLE = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "60"]
CHECK_DATA = ROOT / "tests" / "data" / "check"
HOSTILE = '<script>alert(1)</script>"><img src="http://127.0.0.1:9/x.png">'
SVG = "{http://www.w3.org/2000/svg}"


def _readme_explanation(**flags: Any) -> Explanation:
    model = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    return explain(model, resolve_gpu("rtx4090", load_gpus()), EngineFlags(**flags), VllmVersion.parse("0.33.0"))


# --- figures and geometry, checked by hand ------------------------------------------------------------------------


def test_nice_steps_and_bounds() -> None:
    assert [nice_step(s) for s in (24, 80, 141, 7)] == [5, 20, 50, 2]  # about 6 steps of 1, 2 or 5 x 10^k
    assert nice_bound(61.04, up=True) == 100 and nice_bound(61.04, up=False) == 50
    assert nice_bound(1200, up=True) == 2000 and nice_bound(0.41, up=False) == 0.2


def test_budget_bar_geometry_by_hand() -> None:
    seg = [
        Segment("weights", 12 * GiB, "Model loading took 12.00 GiB memory"),
        Segment("activation", 1 * GiB, "a"),
        Segment("kv_cache", 9 * GiB, "Available KV cache memory: 9.00 GiB"),
        Segment("headroom", 2 * GiB, "h"),
    ]
    bar = BudgetBar("GPU", tuple(seg), 24 * GiB, 22 * GiB, "--gpu-memory-utilization 0.9", True)
    chart = budget_chart(BudgetFigure("t", (bar,)), "b")
    rects = [s for s in chart.shapes if isinstance(s, Rect) and s.role == "segment"]
    # Plot area x from 190 to 736 (546 px) for 0..25 GiB (24 GiB -> step 5 -> axis 25): 21.84 px per GiB.
    assert [(r.x, r.w) for r in rects] == [(190.0, 262.1), (452.1, 21.8), (473.9, 196.6), (670.5, 43.7)]
    assert rects[0].title == "GPU · weights: 12.00 GiB\nModel loading took 12.00 GiB memory"
    budget = next(s for s in chart.shapes if isinstance(s, Line) and s.role == "budget")
    assert budget.x1 == 670.5  # 22 GiB
    assert [t.text for t in chart.shapes if isinstance(t, Text) and t.fill == "#666666"][:6] == [
        "0",
        "5",
        "10",
        "15",
        "20",
        "25",
    ]


def test_weights_far_past_the_device_are_cut_so_other_bars_stay_readable() -> None:
    small = BudgetBar("a", (Segment("weights", 10 * GiB, ""),), 24 * GiB, None, "", True)
    huge = BudgetBar("b", (Segment("weights", 130 * GiB, ""),), 24 * GiB, None, "", False)
    chart = budget_chart(BudgetFigure("t", (small, huge)), "b")
    widths = [s.w for s in chart.shapes if isinstance(s, Rect) and s.role == "segment"]
    # Axis: min(1.3 x 24, 130) = 31.2 GiB -> step 10 (31.2 / 6 = 5.2) -> 40 GiB over 546 px: 10 GiB = 136.5 px;
    # the 130 GiB bar is cut at the axis end.
    assert widths == [136.5, 546.0]
    assert any(isinstance(s, Text) and s.text == "130.0 GiB →" for s in chart.shapes)


def test_budget_segments_are_vllms_figures_and_fill_the_device() -> None:
    e = _readme_explanation(max_model_len=4096, kv_cache_dtype="fp8")
    (bar,) = budget_bars(e)
    st = e.stage
    assert st is not None
    sizes = {s.kind: s.size for s in bar.segments}
    assert sizes["weights"] == st.weights and sizes["kv_cache"] == st.available_kv
    assert sum(sizes.values()) == e.gpu_total_bytes
    kv = next(s for s in bar.segments if s.kind == "kv_cache")
    assert f"GPU KV cache size: {e.kv_cache_tokens:,} tokens" in kv.detail
    assert "Maximum concurrency for 4,096 tokens per request" in kv.detail


def test_one_bar_per_pipeline_stage() -> None:
    e = _readme_explanation(max_model_len=8192, pipeline_parallel_size=2)
    bars = budget_bars(e)
    assert [b.label for b in bars] == ["stage 0", "stage 1"]
    assert sum(b.segments[0].size for b in bars) > 0 and bars[0].segments[0].detail.endswith("(14 layers)")


def test_capacity_curve_ends_at_vllms_maximum_concurrency() -> None:
    e = _readme_explanation(max_model_len=4096, kv_cache_dtype="fp8")
    s = capacity_series(e, "plan", replicas=2, chosen=True)
    assert s is not None
    assert s.points[-1][0] == 4096
    assert s.points[-1][1] == pytest.approx(2 * e.max_concurrency)
    ys = [y for _, y in s.points]
    assert ys == sorted(ys, reverse=True)  # longer requests: fewer held


def test_capacity_chart_marks_the_target_on_log_axes() -> None:
    series = CapacitySeries("p", ((1024, 100.0), (4096, 25.0)), True, 60, "end")
    chart = capacity_chart(CapacityFigure("t", (series,), 60, 4096), "c")
    targets = [s for s in chart.shapes if getattr(s, "role", "") == "target"]
    assert len(targets) == 3  # N line, S line, the (S, N) point
    # x: 1k..4k (log2) over 662 px from 70. y: 20 (1-2-5 bound below 25) .. 200 (above 100 x 1.05), log10,
    # over 270 px from 48: y(100) = 318 - 270 log10(5) = 129.3, y(25) = 318 - 270 log10(1.25) = 291.8.
    line = next(s for s in chart.shapes if isinstance(s, Polyline) and s.role == "series")
    assert line.points == "70.0,129.3 732.0,291.8"


def test_knee_is_where_throughput_reaches_nine_tenths_of_the_best() -> None:
    points = ((1, 60.0), (2, 115.0), (4, 210.0), (8, 360.0), (16, 520.0), (32, 610.0), (64, 640.0))
    assert knee(points) == 32  # 0.9 x 640 = 576: 520 at 16 is below, 610 at 32 reaches it
    assert knee(()) is None and knee(((1, 0.0),)) is None


def test_curve_chart_geometry_targets_and_knee() -> None:
    series = CurveSeries("p", ((1, 10.0), (4, 40.0)), True, knee=4)
    chart = curve_chart(CurveFigure("t", "TPOT ms", (series,), ((50.0, "TPOT target 50 ms"),)), "c")
    # x: 1..4 (log2) over 662 px from 70; y: 0..60 (50 x 1.05 = 52.5 -> step 20 -> 60) over 230 px from 48.
    line = next(s for s in chart.shapes if isinstance(s, Polyline) and s.role == "series")
    assert line.points == "70.0,239.7 732.0,124.7"
    target = next(s for s in chart.shapes if isinstance(s, Line) and s.role == "target")
    assert (target.y1, target.title) == (86.3, "TPOT target 50 ms")
    ring = next(s for s in chart.shapes if isinstance(s, Circle) and s.role == "knee")
    assert (ring.cx, ring.cy) == (732.0, 124.7) and ring.title.startswith("knee of p: 4 requests")


def test_markdown_cells_are_inert() -> None:
    assert md("a|b\n<x> [l](u) *e* `c`") == r"a\|b \<x\> \[l\](u) \*e\* \`c\`"


# --- through the CLI -----------------------------------------------------------------------------------------------


def _server_dir(tmp_path: Path) -> Path:
    """Three servers: two from the check fixtures, one with hostile names (untrusted input)."""
    folder = tmp_path / "deploy"
    folder.mkdir()
    for name in ("fits.yaml", "kv_too_small.yaml"):
        (folder / name).write_text((CHECK_DATA / name).read_text())
    hostile = (CHECK_DATA / "fits.yaml").read_text().replace("name: qwen", f"name: '{HOSTILE}'", 1)
    assert HOSTILE in hostile
    (folder / "hostile.yaml").write_text(hostile)
    return folder


PERF = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "2000", "--output-len", "256", "--num-prompts", "200"]
LATENCY = ["--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "2000", "--output-len", "256"]
PAGES: dict[str, tuple[list[str], int]] = {  # each report once, for the content tests and the browser test
    "explain": (["explain", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "-pp", "2", "--max-model-len", "8k"], 0),
    "recommend": (["recommend", *README_EXAMPLE], 0),
    "check": (["check", "{servers}"], 1),
    "perf": ([*PERF, "--max-concurrency", "16"], 0),
    "latency": (["recommend", *LATENCY, "--concurrency", "32", "--tpot-ms", "50", "--ttft-ms", "2000"], 0),
}


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every report as HTML (NAME.html) with its --plot (NAME.svg), written through the CLI."""
    out = tmp_path_factory.mktemp("pages")
    servers = _server_dir(out)
    for name, (args, code) in PAGES.items():
        argv = [a.replace("{servers}", str(servers)) for a in args]
        result = invoke(
            [*argv, "--format", "html", "-o", str(out / f"{name}.html"), "--plot", str(out / f"{name}.svg")], code
        )
        assert result.stdout == ""
    return {name: out / f"{name}.html" for name in PAGES} | {"servers": servers}


def _plot(pages: dict[str, Path], name: str) -> ET.Element:
    return ET.fromstring(pages[name].with_suffix(".svg").read_text().split("?>", 1)[1])


def test_explain_html_and_svg_plot(pages: dict[str, Path]) -> None:
    page = pages["explain"]
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "vLLM starts" in html and "--pipeline-parallel-size 2" in html
    assert "<script" not in html and not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    root = _plot(pages, "explain")
    segments = [r for r in root.iter(f"{SVG}rect") if r.get("data-role") == "segment"]
    assert len(segments) >= 10 and all(r.find(f"{SVG}title") is not None for r in segments)  # 2 stages x 5-6


def test_recommend_html_to_stdout_and_file(pages: dict[str, Path]) -> None:
    page = pages["recommend"]
    html = page.read_text()
    for part in ("serves 60 concurrent requests", "Plan and alternatives", "Rejected (", "vllm serve Qwen/Qwen2.5"):
        assert part in html
    assert "for vLLM 0.33.0" in html and "Generated by vllm-plan" in html
    assert invoke(["recommend", *README_EXAMPLE, "--format", "html"]).stdout == html


def test_recommend_emit_with_html_writes_the_report_beside_the_artifacts(tmp_path: Path) -> None:
    out = tmp_path / "deploy"
    invoke(["recommend", *README_EXAMPLE, "--emit", "command", "-o", str(out), "--format", "html"])
    assert sorted(p.name for p in out.iterdir()) == ["plan.yaml", "report.html", "serve.sh"]


def test_png_plot_size_and_dimensions(tmp_path: Path) -> None:
    pytest.importorskip("resvg_py")
    plot = tmp_path / "check.png"
    invoke(["check", str(CHECK_DATA / "fits.yaml"), "--plot", str(plot)])
    svg = tmp_path / "check.svg"
    invoke(["check", str(CHECK_DATA / "fits.yaml"), "--plot", str(svg)])
    data = plot.read_bytes()
    height = int(ET.fromstring(svg.read_text().split("?>", 1)[1]).get("height", "0"))
    assert png_size(data) == (2 * 760, 2 * height)  # the SVG's size at 2x
    assert len(data) > 20_000  # drawn, not blank


def test_check_folder_html_one_row_per_server_and_markdown(pages: dict[str, Path]) -> None:
    folder = pages["servers"]
    results = json.loads(invoke(["check", str(folder), "--format", "json"], exit_code=1).stdout)
    html = pages["check"].read_text()
    table = html.split('<section id="servers">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td class=\"(pass|fail)\">", table)
    assert rows == [r["verdict"] for r in results] and len(rows) == 3
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "fix: lower --max-model-len to" in html
    summary = invoke(["check", str(folder), "--format", "markdown"], exit_code=1).stdout
    assert summary.startswith("### ❌ vllm-plan check: 2 of 3 servers pass")
    assert len([line for line in summary.splitlines() if line.startswith("| ✅") or line.startswith("| ❌")]) == 3
    assert "<script>" not in summary and "- fix: lower --max-model-len to" in summary


def test_check_not_evaluated_servers_and_multiline_fixes(tmp_path: Path) -> None:
    inputs = [str(CHECK_DATA / "no_gpu.yaml"), str(CHECK_DATA / "fits.yaml")]
    page = tmp_path / "r.html"
    invoke(["check", *inputs, "--format", "html", "-o", str(page)], exit_code=4)
    html = page.read_text()
    assert "not every server could be evaluated" in html and '<td class="warn">not evaluated</td>' in html
    assert "not evaluated: no GPU type" in html
    summary = invoke(["check", *inputs, "--format", "markdown"], exit_code=4).stdout
    assert summary.startswith("### ⚠️ vllm-plan check: 1 of 2 servers pass, 1 not evaluated")
    # A fix spanning lines (the /dev/shm volume to add) is a fenced block under its item, longer than any
    # backtick run inside it so the text cannot close it.
    shm = invoke(["check", str(CHECK_DATA / "tp_mismatch.yaml"), "--format", "markdown"], exit_code=1).stdout
    assert (
        "  - fix: mount a memory-backed volume at /dev/shm:\n\n    ```\n" in shm
        and "mountPath: /dev/shm\n    ```" in shm
    )
    hostile = item_lines(Cell("fix: add\n```\n<b>x</b>", ""))
    assert hostile.count("````") == 2 and "\n    ```\n" in hostile


def test_default_report_sweep_covers_the_requested_load() -> None:
    assert default_concurrencies(Load(2000, 256, max_concurrency=48)) == (1, 2, 4, 8, 16, 32, 48, 64, 128, 256)
    assert default_concurrencies(Load(2000, 256, max_concurrency=300))[-2:] == (300, 512)
    assert default_concurrencies(Load(2000, 256, num_prompts=1000))[-1] == 512  # a burst of 1,000: capped


def test_perf_html_shows_the_point_the_curves_and_the_knee(pages: dict[str, Path]) -> None:
    page = pages["perf"]
    html = page.read_text()
    assert "Predicted benchmark" in html and "output tokens/s" in html and "requested: 16 in flight" in html
    root = _plot(pages, "perf")
    charts = [c.get("id") for c in root if c.tag == f"{SVG}svg"]
    assert charts == ["throughput", "ttft", "tpot", "budget"]
    knees = [c for c in root.iter(f"{SVG}circle") if c.get("data-role") == "knee"]
    assert len(knees) == 5  # throughput; mean and p99 of TTFT and of TPOT
    # The text and JSON forms are unchanged by the report options.
    assert "TTFT" in invoke([*PERF, "--max-concurrency", "16"]).stdout


def test_latency_plan_report_draws_targets_knees_and_every_option(pages: dict[str, Path]) -> None:
    page = pages["latency"]
    doc = json.loads(invoke([*PAGES["latency"][0], "--format", "json"]).stdout)
    html = page.read_text()
    assert "TPOT p90" in html and "against the 50 ms target: met" in html and "tok/s per GPU" in html
    root = _plot(pages, "latency")
    charts = {c.get("id"): c for c in root if c.tag == f"{SVG}svg"}
    assert list(charts) == ["throughput", "ttft", "tpot", "budget"]
    options = 1 + len(doc["alternatives"])
    for name in ("throughput", "ttft", "tpot"):
        lines = [p for p in charts[name].iter(f"{SVG}polyline") if p.get("data-role") == "series"]
        assert len(lines) == options
    targets = {
        t.findtext(f"{SVG}title")
        for c in charts.values()
        for t in c.iter(f"{SVG}line")
        if t.get("data-role") == "target"
    }
    assert targets == {"TTFT target 2000 ms (p90)", "TPOT target 50 ms (p90)"}
    # The curve passes through the plan's own prediction at the target load (the same replay).
    tput = next(
        p for p in charts["throughput"].iter(f"{SVG}circle") if "32 requests" in (p.findtext(f"{SVG}title") or "")
    )
    assert f"{doc['performance']['output_throughput_per_gpu']:,.0f}" in (tput.findtext(f"{SVG}title") or "")


def test_bad_report_options_are_one_line_errors(tmp_path: Path) -> None:
    base = ["explain", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090"]
    err = invoke([*base, "--plot", str(tmp_path / "x.gif")], exit_code=2).stderr
    assert err == f"Error: --plot {tmp_path / 'x.gif'}: the file name must end in .svg or .png\n"
    err = invoke([*base, "--format", "html", "-o", str(tmp_path / "missing" / "r.html")], exit_code=2).stderr
    assert err.startswith("Error: cannot write") and err.count("\n") == 1
    assert not (tmp_path / "missing").exists()
    invoke(["explain", "--format", "markdown", *base[1:]], exit_code=2)  # markdown is check's only


def test_png_without_the_plot_extra_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "resvg_py", None)  # as if `vllm-plan[plot]` were not installed
    plot = tmp_path / "p.png"
    err = invoke(["explain", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--plot", str(plot)], exit_code=2).stderr
    assert "pip install 'vllm-plan[plot]'" in err and not plot.exists()


# --- in headless Chromium ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = chromium_binary()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    b = Browser(binary, tmp_path_factory.mktemp("chromium") / "profile")
    yield b
    b.close()


def _assert_clean(page: PageResult, charts: dict[str, int], shots: Path) -> None:
    (shots / (Path(page.url).stem + ".png")).write_bytes(page.screenshot)
    assert page.console_errors == [] and page.requests == []
    drawn = {c["id"]: c for c in page.charts}
    assert sorted(drawn) == sorted(charts)
    for chart_id, at_least in charts.items():
        c = drawn[chart_id]
        assert c["width"] > 300 and c["height"] > 100, c
        assert c["drawn"] == c["marks"] >= at_least, c
        assert all(t.strip() for t in c["titles"]), "every mark has a hover text"
    width, height = png_size(page.screenshot)
    assert width == 1000 and height > 800  # the window


@pytest.mark.slow
def test_reports_open_in_chromium_without_errors_or_requests(
    browser: Browser, pages: dict[str, Path], tmp_path: Path
) -> None:
    curves = {"ttft": 2, "tpot": 2, "budget": 5}
    expected = {
        "explain": {"budget": 10, "capacity": 1},
        "recommend": {"budget": 5, "capacity": 2},
        "check": {"budget": 3 * 5},
        "perf": {"throughput": 1, **curves},
        "latency": {"throughput": 2, **curves},
    }
    for name, charts in expected.items():
        _assert_clean(browser.open(pages[name]), charts, tmp_path)


@pytest.mark.slow
def test_the_browser_harness_catches_errors_and_requests(browser: Browser, tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><svg class="chart" id="c" width="10" height="10"></svg>'
        '<img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>'
    )
    page = browser.open(bad)
    assert "boom" in page.console_errors and page.requests == ["http://127.0.0.1:9/x.png"]
    assert page.charts[0]["width"] == 10


@pytest.mark.slow
def test_ci_example_writes_the_job_summary_and_the_html_artifact(tmp_path: Path) -> None:
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yaml").read_text())
    steps = {s.get("name"): s for s in workflow["jobs"]["check"]["steps"]}
    (tmp_path / "deploy").mkdir()
    for name in ("fits.yaml", "kv_too_small.yaml", "no_gpu.yaml"):  # exits 1: the summary steps still succeed
        shutil.copy(CHECK_DATA / name, tmp_path / "deploy" / name)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    run = steps["Job summary and HTML report"]["run"]
    done = subprocess.run(["bash", "-ec", run], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        (tmp_path / "summary.md").read_text().startswith("### ❌ vllm-plan check: 1 of 3 servers pass, 1 not evaluated")
    )
    assert "vllm-plan-report.html" in steps["Upload the report"]["with"]["path"]
    assert 'id="servers"' in (tmp_path / "vllm-plan-report.html").read_text()


def test_the_report_title_counts_the_gpus_the_plan_uses() -> None:
    """As the text headline does: one H100 of the eight given, not 'on 8 x' for a plan that leaves seven idle."""
    args = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--gpus-per-node", "8"]
    page = invoke([*args, "--concurrency", "10", "--format", "html"]).stdout
    assert "<h1>Qwen/Qwen2.5-7B-Instruct on 1 x NVIDIA H100 80GB HBM3 (of 8)</h1>" in page
