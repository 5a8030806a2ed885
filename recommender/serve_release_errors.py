"""What one vLLM release's parser says about a parsed `vllm serve` command (pure): the options the release does not
have, argparse's "invalid choice" under the release's choices, and "unrecognized arguments" (serve_args.py parses;
profiles/vllm-flags.yaml dates each option and its choices)."""

from __future__ import annotations

from collections.abc import Mapping

from recommender.memory.engine import VllmVersion
from recommender.quoting import clipped, quoted
from recommender.serve_args import GivenFlag, ServeCommand
from recommender.vllm_flags import default_flag_table


def not_accepted(cmd: ServeCommand, version: VllmVersion) -> list[GivenFlag]:
    """The options given that this release does not have (introduced later or removed by then)."""
    return [g for g in cmd.given if not g.spec.accepted_in(version)]


def strict_errors(cmd: ServeCommand, version: VllmVersion | None = None) -> list[str]:
    """What vLLM's parser (of `version`, default the newest in the table) prints for this command, unrecognized
    arguments included."""
    version = version or default_flag_table().newest
    out = [*cmd.errors, *choice_errors(cmd, version)]
    stray: list[str] = []
    for g in not_accepted(cmd, version):
        stray.append(g.written)
        if isinstance(g.value, str):
            stray.append(g.value)
        elif isinstance(g.value, tuple):
            stray += g.value
    stray += cmd.extras
    if stray:
        out.append(f"unrecognized arguments: {clipped(' '.join(stray))}")
    return out


def choice_errors(cmd: ServeCommand, version: VllmVersion) -> list[str]:
    """argparse's "invalid choice" for each value outside what this release's parser accepts (Python's wording)."""
    out = []
    for g in cmd.given:
        allowed = g.spec.choices_in(version)
        if allowed is None or not isinstance(g.value, str):
            continue
        numeric = all(isinstance(c, int) for c in allowed)
        value: int | str = g.value
        if numeric:
            try:
                value = int(g.value)
            except ValueError:
                continue  # the int conversion's own error is reported by the parse
        if value == "" and "None" in allowed:  # vLLM's optional_type reads '' as None too
            continue
        if value not in allowed and str(value) not in allowed:
            shown = ", ".join(repr(c) for c in allowed)
            out.append(f"argument {g.spec.label()}: invalid choice: {quoted(value)} (choose from {shown})")
    return out


def value_choice_errors(values: Mapping[str, object], version: VllmVersion) -> list[str]:
    """choice_errors for values given by argparse destination (`{"block_size": 7}`, as explain's options give them)
    rather than in a command line."""
    table = default_flag_table()
    by_dest = {spec.dest: spec for spec in table.specs}
    out = []
    for dest, value in values.items():
        spec = by_dest.get(dest)
        allowed = spec.choices_in(version) if spec is not None and isinstance(value, int | str) else None
        if spec is None or allowed is None or isinstance(value, bool):
            continue
        if value not in allowed and str(value) not in allowed:
            shown = ", ".join(repr(c) for c in allowed)
            out.append(f"argument {spec.label()}: invalid choice: {quoted(value)} (choose from {shown})")
    return out
