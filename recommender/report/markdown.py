"""`check --format markdown`: a GitHub job summary ($GITHUB_STEP_SUMMARY) of every server checked (no I/O)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from recommender.check.results import FAIL, PASS, ServerResult
from recommender.report.check import details, summary, verdict, where
from recommender.report.structure import Cell

ICONS = {PASS: "✅", FAIL: "❌"}
STYLE_ICONS = {"fail": "❌ ", "warn": "⚠️ "}

# What can make Markdown or HTML out of text: links/images ([ ]), emphasis (*), code (`), tags (< >), cells (|).
_SPECIAL = re.compile(r"([\\`*\[\]<>|])")


def md(text: str) -> str:
    """One line of inert Markdown: newlines folded, Markdown and HTML punctuation escaped (values are untrusted)."""
    one_line = " ".join(text.split())
    return _SPECIAL.sub(r"\\\1", one_line).replace("&", "&amp;")


def item_lines(item: Cell) -> str:
    """One list item; text over several lines (a YAML snippet to add) goes in a fenced block under its first line."""
    first, _, rest = item.text.partition("\n")
    line = f"  - {STYLE_ICONS.get(item.style, '')}{md(first)}"
    if not rest.strip():
        return line
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", rest)), default=0))
    body = "\n".join("    " + x for x in rest.splitlines())
    return f"{line}\n\n    {fence}\n{body}\n    {fence}"


def check_markdown(results: Sequence[ServerResult], problems: Sequence[str] = ()) -> str:
    """A heading with the count, a table with one row per server, then failures with their fixes."""
    failed = any(r.status == FAIL for r in results)
    mark = "❌" if failed else "✅" if not problems and all(r.status == PASS for r in results) else "⚠️"
    lines = [
        f"### {mark} vllm-plan check: {summary(results, problems)}",
        "",
        "| verdict | file | resource | model | GPU | KV tokens | KV holds | max-num-seqs | max len |",
        "|---|---|---|---|---|--:|--:|--:|--:|",
    ]
    for r in results:
        e = r.memory.explanation if r.memory else None
        cells = [
            ICONS.get(r.status, "⚠️") + " " + verdict(r).text,
            md(r.found.source),
            md(where(r)),
            md(r.model or "-"),
            md(r.gpu or "-"),
            f"{e.kv_cache_tokens:,}" if e and not e.no_kv_cache else "-",
            f"{e.max_concurrency:.2f}" if e and not e.no_kv_cache else "-",
            f"{e.max_num_seqs:,}" if e else "-",
            f"{e.max_model_len:,}" if e else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    noted = [(r, details(r)) for r in results]
    if any(lines_ for _, lines_ in noted) or problems:
        lines += ["", "#### Failures, fixes and warnings", ""]
    for r, items in noted:
        if items:
            lines.append(f"- **{md(r.found.source)}** {md(where(r))}")
            lines += [item_lines(i) for i in items]
    lines += [f"- ⚠️ not read: {md(p)}" for p in problems]
    return "\n".join(lines) + "\n"
