"""How much of what people deploy with vLLM the bundled catalog answers offline (issue #11).

    python benchmarks/catalog_coverage.py [--list benchmarks/data/deployed_models.txt] [--quiet]

Reads the list benchmarks/deployed_models_list.py writes (one `ID  SOURCE` per line, an id once per repository
naming it) and resolves every id as `vllm-plan` would with no network: the catalog, its aliases and renames,
nothing from the hub (a fetcher that refuses stands in for it, so a hub cache on this machine changes nothing).
Prints how many ids resolve, how many of those are approximate (a reconstructed config.json, an architecture the
model does not fully cover), and the ids that do not resolve, most-named first.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from recommender.console import run_script
from recommender.errors import FetchError, PlanError
from recommender.sources.hub import RemoteModel
from recommender.sources.resolve import resolve_model

LIST = Path(__file__).parent / "data" / "deployed_models.txt"


class NoHub:
    """A fetcher that never reaches the hub: coverage is what the bundled catalog answers."""

    def fetch(self, repo_id: str, revision: str | None = None) -> RemoteModel:
        raise FetchError(f"{repo_id}@{revision or 'main'}: not in the catalog (the hub is not asked)")


def read_list(path: Path) -> Counter[str]:
    """id -> how many repositories name it."""
    named: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            named[line.split()[0]] += 1
    return named


def coverage(named: Counter[str]) -> tuple[list[str], list[str], list[str]]:
    """(resolved exactly, resolved approximate, not resolved) ids."""
    exact: list[str] = []
    approximate: list[str] = []
    missing: list[str] = []
    for model_id in named:
        try:
            spec = resolve_model(model_id, fetcher=NoHub())
        except PlanError:
            missing.append(model_id)
            continue
        (approximate if spec.approximate else exact).append(model_id)
    return exact, approximate, missing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", type=Path, default=LIST)
    ap.add_argument("--quiet", action="store_true", help="the summary only")
    args = ap.parse_args()
    named = read_list(args.list)
    exact, approximate, missing = coverage(named)
    total, resolved = len(named), len(exact) + len(approximate)
    weight = sum(named.values())
    resolved_weight = weight - sum(named[m] for m in missing)
    print(f"{resolved} of {total} ids resolve offline ({resolved / total:.1%}); {len(approximate)} of them approximate")
    print(f"weighted by repositories naming them: {resolved_weight} of {weight} ({resolved_weight / weight:.1%})")
    if not args.quiet:
        print(f"\nnot resolved ({len(missing)}), most-named first:")
        for model_id in sorted(missing, key=lambda m: (-named[m], m.lower())):
            print(f"  {named[model_id]}  {model_id}")


if __name__ == "__main__":
    run_script(main)
