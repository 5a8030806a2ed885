"""`check --format markdown`: a GitHub job summary ($GITHUB_STEP_SUMMARY) of every server checked (no I/O)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from recommender.check.evaluate import CheckResult
from recommender.report.check import summary

# What can make Markdown or HTML out of text: links/images ([ ]), emphasis (*), code (`), tags (< >), cells (|).
_SPECIAL = re.compile(r"([\\`*\[\]<>|])")


def md(text: str) -> str:
    """One line of inert Markdown: newlines folded, Markdown and HTML punctuation escaped (values are untrusted)."""
    one_line = " ".join(text.split())
    return _SPECIAL.sub(r"\\\1", one_line).replace("&", "&amp;")


def check_markdown(results: Sequence[CheckResult]) -> str:
    """A heading with the count, a table with one row per server, then failures with their fixes."""
    ok = all(r.passed for r in results)
    lines = [
        f"### {'✅' if ok else '❌'} vllm-plan check: {summary(results)}",
        "",
        "| verdict | file | resource | model | GPU | KV tokens | concurrency | max len |",
        "|---|---|---|---|---|--:|--:|--:|",
    ]
    for r in results:
        e = r.explanation
        cells = [
            "✅ pass" if r.passed else "❌ fail",
            md(r.found.source),
            md(r.found.resource),
            md(r.model),
            md(r.gpu or "-"),
            f"{e.kv_cache_tokens:,}" if e else "-",
            f"{e.max_concurrency:.2f}" if e else "-",
            f"{e.max_model_len:,}" if e else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    failing = [r for r in results if r.failures or r.warnings]
    if failing:
        lines += ["", "#### Failures and fixes", ""]
    for r in failing:
        lines.append(f"- **{md(r.found.source)}** {md(r.found.resource)}")
        lines += [f"  - ❌ {md(m)}" for m in r.failures]
        if r.suggestions:
            lines.append(f"  - fix: {md(', '.join(r.suggestions))}")
        lines += [f"  - ⚠️ {md(m)}" for m in r.warnings]
    return "\n".join(lines) + "\n"
