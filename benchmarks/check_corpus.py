"""How faithfully `check` reads real deployment files: tests/data/deployments against its expected.yaml.

    HF_HUB_OFFLINE=1 python benchmarks/check_corpus.py [--corpus DIR [--files DIR]] [PREFIX ...]

Prints "N of M servers read exactly" (model, TP, PP, max-model-len, utilization, quantization, KV dtype, GPUs),
the files whose server count or GPU type differ, and the verdicts that differ from the expected ones. PREFIX
arguments restrict the run to the files whose path starts with one of them (e.g. `dstack/ skypilot/`). --corpus reads
another folder of the same layout (tests/data/deployments3: the held-out files, read by hand before `check` ran).
--files reads the files from another folder than the corpus's expected.yaml: the later held-out rounds
(benchmarks/data/check-heldout/round*/: expected.yaml and SOURCES, each file named there at its commit) keep the
files themselves outside the project.
A setting `check` reports as unresolved (a variable set elsewhere: $TP, $(nvidia-smi ...), a <placeholder>) is
read as null and marks the server `unresolved`; so is every setting a `--config` file not readable here may hold.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from recommender.console import run_script

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "deployments"
FLAGS = ("unresolved", "not_evaluable")
FIELDS = ("model", "tp", "pp", "max_model_len", "gpu_memory_utilization", "quantization", "kv_cache_dtype", "gpus")


def expected(corpus: Path = CORPUS) -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = yaml.safe_load((corpus / "expected.yaml").read_text(encoding="utf-8"))
    return data


def reading(rel: str, files: Path = CORPUS) -> tuple[list[dict[str, Any]], str | None, list[Any]]:
    """(servers as read, GPU key resolved for the first server, JSON results of `check FILE`)."""
    from click.testing import CliRunner

    from recommender.check.inputs import load_inputs
    from recommender.check.run import config_beside, engine_summary, unresolved_names
    from recommender.cli import cli
    from recommender.cli.check_cmd import _gpu_for, _read_config
    from recommender.errors import UnknownGpuError
    from recommender.serve_args import parse_serve_argv

    path = files / rel
    result = CliRunner().invoke(cli, ["check", str(path), "--format", "json"])
    try:
        results = json.loads(result.stdout)
    except json.JSONDecodeError:
        results = []
    servers = []
    gpu = None
    lookup = _gpu_for(None, None)
    for found in load_inputs((str(path),)).found:
        read_config = config_beside(_read_config, found.source, found.files)  # as `check` reads a --config file
        cmd = parse_serve_argv(list(found.argv), read_config=read_config, serve=found.serve_form)
        s = engine_summary(cmd)
        names = unresolved_names(cmd, found.unresolved)  # what `check` itself reports as unresolved
        read = {
            "model": s["model"],
            "tp": s["tensor_parallel_size"],
            "pp": s["pipeline_parallel_size"],
            "max_model_len": s["max_model_len"],
            "gpu_memory_utilization": s["gpu_memory_utilization"],
            "quantization": s["quantization"],
            "kv_cache_dtype": s["kv_cache_dtype"],
        }
        dests = {"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size"}
        written = {k: cmd.dest(dests.get(k, k)) for k in read if k != "model"} | {"model": cmd.model}
        unknown = {k for k, v in written.items() if v is not None and any(n in str(v) for n in names)}
        if cmd.model is None and names:
            unknown.add("model")  # no model, but unresolved words that may hold it ("$@", $EXTRA_ARGS)
        elif cmd.model is None and not cmd.config_file:  # the default model `check` says vLLM serves, if any
            read["model"] = _checked_model(results, found) or None
        if cmd.config_file:  # a --config file not readable here may set whatever the command line does not
            unknown |= {k for k, v in written.items() if v is None}
        servers.append(
            {
                **{k: None if k in unknown else v for k, v in read.items()},
                "unresolved": bool(unknown),
                "gpus": found.gpus_total if found.gpus_total is not None else found.gpus_per_pod,
                "not_evaluable": bool(found.not_evaluable),
            }
        )
        if gpu is None:
            try:
                hit = lookup(found)
                gpu = hit.key if hit else None
            except UnknownGpuError:  # a GPU name the catalog does not know: compared as None (a bug still raises)
                gpu = None
    return servers, gpu, results


def _checked_model(results: list[Any], found: Any) -> str:
    """The model `check` evaluated the server found as (its JSON result for the same resource and container)."""
    for r in results:
        if isinstance(r, dict) and (r.get("resource"), r.get("container")) == (found.resource, found.container):
            return str(r.get("model") or "")
    return ""


def verdict_of(results: list[Any]) -> str:
    statuses = {r.get("status") for r in results}
    return "fail" if "fail" in statuses else "not-evaluated" if "not-evaluated" in statuses else "pass"


def compare(
    prefixes: tuple[str, ...] = (), corpus: Path = CORPUS, files: Path | None = None
) -> tuple[int, int, list[str], list[str]]:
    """(servers read exactly, servers expected, differences, known misses), over the files starting with one of
    `prefixes`. A known miss is a field expected.yaml records the reader as getting wrong (`known_miss`, with why):
    the server is not counted as read exactly, and any other difference is still a difference."""
    exact = total = 0
    diffs: list[str] = []
    misses: list[str] = []
    for rel, want in expected(corpus).items():
        if prefixes and not rel.startswith(prefixes):
            continue
        got, gpu, results = reading(rel, files or corpus)
        servers = want.get("servers") or []
        total += len(servers)
        if len(got) != len(servers) and want.get("known_miss"):  # a file the reader is known to miss, with why
            misses.append(f"{rel}: {len(got)} server(s) found, {len(servers)} expected: {want['known_miss']}")
            continue
        if len(got) != len(servers):
            diffs.append(f"{rel}: {len(got)} server(s) found, {len(servers)} expected")
        for w, g in zip(servers, got, strict=False):
            wrong = [f for f in FIELDS if w.get(f) != g.get(f)]
            wrong += [flag for flag in FLAGS if bool(w.get(flag)) != g[flag]]
            known = w.get("known_miss") or {}
            misses += [
                f"{rel} ({w['container']}): {f} {g.get(f)!r} != {w.get(f)!r}: {known[f]}" for f in wrong if f in known
            ]
            if known and set(known) - set(wrong):
                diffs.append(f"{rel} ({w['container']}): {', '.join(sorted(set(known) - set(wrong)))} now read right")
            wrong = [f for f in wrong if f not in known]
            if wrong:
                diffs.append(
                    f"{rel} ({w['container']}): "
                    + ", ".join(f"{f} {g.get(f)!r} != {bool(w.get(f)) if f in FLAGS else w.get(f)!r}" for f in wrong)
                )
            elif not known:
                exact += 1
        if "gpu" in want and want["gpu"] != gpu:
            diffs.append(f"{rel}: GPU {gpu!r}, expected {want['gpu']!r}")
        if "verdict" in want and servers and verdict_of(results) != want["verdict"]:
            diffs.append(f"{rel}: verdict {verdict_of(results)}, expected {want['verdict']}")
    return exact, total, diffs, misses


def main() -> int:
    args = sys.argv[1:]
    corpus = CORPUS
    files = None
    if args[:1] == ["--corpus"] and len(args) > 1:
        corpus, args = Path(args[1]).resolve(), args[2:]
    if args[:1] == ["--files"] and len(args) > 1:
        files, args = Path(args[1]).resolve(), args[2:]
    prefixes = tuple(args)
    exact, total, diffs, misses = compare(prefixes, corpus, files)
    read = [f for f in expected(corpus) if not prefixes or f.startswith(prefixes)]
    print(f"{exact} of {total} servers read exactly ({len(read)} files)")
    for d in diffs:
        print("  " + d)
    for m in misses:
        print("  known miss: " + m)
    return 0 if not diffs else 1


if __name__ == "__main__":
    run_script(main)
