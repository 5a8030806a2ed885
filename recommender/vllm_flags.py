"""vLLM's options per release: the flag table read from profiles/vllm-flags.yaml (spellings, whether an option takes
a value, the releases that accept it, the values each release's parser allows). Pure; loaded once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from recommender.memory.engine import VllmVersion


@dataclass(frozen=True, slots=True)
class FlagSpec:
    """One vLLM option: its spellings, whether it takes a value, and the releases that accept it."""

    name: str
    dest: str
    takes: str  # value | flag | bool
    nargs: str | None = None  # '+', '?' or None (exactly one)
    aliases: tuple[str, ...] = ()
    negated: tuple[str, ...] = ()  # spellings that set a bool to False
    since: VllmVersion | None = None
    removed: VllmVersion | None = None
    # the values vLLM's parser accepts, from each listed release on (None: not restricted, or not known there)
    choices: tuple[tuple[VllmVersion, tuple[int | str, ...] | None], ...] = ()
    # releases [first, until) whose parser reads an optional true/false after this bool (vLLM's StoreBoolean)
    valued_bool: tuple[VllmVersion, VllmVersion] | None = None

    def label(self) -> str:
        """How argparse names the option in its messages ('--tensor-parallel-size/-tp')."""
        inverse = [n for n in self.negated if not n.startswith("--no-")]
        shown = (
            [self.name, *self.aliases, *(inverse or self.negated[:1])]
            if self.takes == "bool"
            else [self.name, *self.aliases]
        )
        return "/".join(shown)

    def accepted_in(self, version: VllmVersion) -> bool:
        return (self.since is None or version >= self.since) and (self.removed is None or version < self.removed)

    def choices_in(self, version: VllmVersion) -> tuple[int | str, ...] | None:
        """The values this release's parser accepts (None when any, or when the table does not know)."""
        steps = [values for first, values in self.choices if first <= version]
        return steps[-1] if steps else None

    def takes_bool_value(self, version: VllmVersion | None) -> bool:
        """Whether this release reads `--flag false` as the setting (else the word after a bool is a stray one)."""
        return (
            version is not None
            and self.valued_bool is not None
            and (self.valued_bool[0] <= version < self.valued_bool[1])
        )


@dataclass(frozen=True, slots=True)
class FlagTable:
    """Every option of the newest release modelled plus the ones older releases had (profiles/vllm-flags.yaml)."""

    specs: tuple[FlagSpec, ...]
    newest: VllmVersion
    options: Mapping[str, tuple[FlagSpec, bool]] = field(default_factory=dict)  # spelling -> (spec, sets True)

    @classmethod
    def from_yaml(cls, data: Mapping[str, Any]) -> FlagTable:
        """Build the table from the parsed profiles/vllm-flags.yaml."""
        newest = VllmVersion.parse(str(data["versions"]["newest"]))
        specs = []
        for name, e in data["flags"].items():
            since, removed, valued = e.get("since"), e.get("removed"), e.get("valued_bool")
            specs.append(
                FlagSpec(
                    str(name),
                    str(e["dest"]),
                    str(e["takes"]),
                    e.get("nargs"),
                    tuple(e.get("aliases") or ()),
                    tuple(e.get("negated") or ()),
                    VllmVersion.parse(str(since)) if since else None,
                    VllmVersion.parse(str(removed)) if removed else None,
                    _choice_steps(e.get("choices"), newest),
                    (VllmVersion.parse(str(valued[0])), VllmVersion.parse(str(valued[1]))) if valued else None,
                )
            )
        options: dict[str, tuple[FlagSpec, bool]] = {}
        for s in specs:
            for spelling in (s.name, *s.aliases):
                options[spelling] = (s, True)
            for spelling in s.negated:
                options[spelling] = (s, False)
        return cls(tuple(specs), newest, options)

    def match(self, option: str) -> tuple[FlagSpec, bool] | list[str] | None:
        """argparse's lookup: the exact spelling, else the only long option it is a prefix of; a list when
        several match (ambiguous), None when none does."""
        if option in self.options:
            return self.options[option]
        if not option.startswith("--") or len(option) < 3:
            return None
        hits = [o for o in self.options if o.startswith(option)]
        if len(hits) == 1:
            return self.options[hits[0]]
        return hits or None


def _choice_steps(choices: Any, newest: VllmVersion) -> tuple[tuple[VllmVersion, tuple[int | str, ...] | None], ...]:
    """A flag's `choices` in profiles/vllm-flags.yaml: a list (the newest release's parser), or a mapping from the
    first release of each list (null: not restricted, or not known from that release on)."""
    if not choices:
        return ()
    steps = choices.items() if isinstance(choices, Mapping) else [(str(newest), choices)]
    return tuple(
        (VllmVersion.parse(str(first)), None if values is None else tuple(values))
        for first, values in sorted(steps, key=lambda kv: VllmVersion.parse(str(kv[0])))
    )


_TABLE: list[FlagTable] = []


def default_flag_table() -> FlagTable:
    """profiles/vllm-flags.yaml, loaded once."""
    if not _TABLE:
        from recommender.catalog import load_flag_table

        _TABLE.append(load_flag_table())
    return _TABLE[0]
