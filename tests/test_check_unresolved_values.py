"""A value `check` cannot know (a variable set outside the file) in an option the memory model reads - the multimodal
limits, the drafter, the runner, not only the memory and parallelism options - leaves the server not evaluated: vLLM
never sees the text `$MM`, so it is not judged as if it did (check-heldout round 24's qwen35-ray script gave
`--limit-mm-per-prompt "$LIMIT_MM_JSON"`, refused as "expected a JSON object" before its value was read). A certain
refusal elsewhere on the line still fails it. Hand-written minimal command lines."""

from __future__ import annotations

import json

import pytest

from .conftest import invoke


@pytest.mark.parametrize(
    "option",
    [
        ["--limit-mm-per-prompt", "$MM"],
        ["--speculative-config", "$SPEC"],
        ["--mm-encoder-tp-mode", "${MODE}"],
        ["--runner", "$RUNNER"],
    ],
)
def test_an_unknown_value_of_an_option_the_memory_model_reads_is_unresolved(option: list[str]) -> None:
    out = invoke(
        ["check", "--gpu", "l4", "--format", "json", "--", "vllm", "serve", "Qwen/Qwen3-8B", *option], exit_code=4
    ).stdout
    (result,) = json.loads(out)
    assert result["status"] == "not-evaluated" and not result["failures"]
    assert result["not_evaluated_because"] == [f"unresolved {option[1]}"]


def test_a_certain_refusal_still_fails_the_line() -> None:
    out = invoke(
        ["check", "--gpu", "l4", "--format", "json", "--", "vllm", "serve", "m", "--limit-mm-per-prompt", "$MM",
         "--no-such-option", "x"],
        exit_code=1,
    ).stdout  # fmt: skip
    (result,) = json.loads(out)
    assert result["status"] == "fail" and any("--no-such-option" in f for f in result["failures"])
    assert not any("JSON" in f for f in result["failures"])
