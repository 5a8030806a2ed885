"""Hostile and broken input against every command: nothing crashes, nothing hangs, one line and a documented exit.

    python benchmarks/fuzz.py [--seed 1] [--count 5000] [--processes 40] [--kinds config,flags,...] [--show 2]

Generates seeded cases of six kinds and runs each through the CLI in-process (click's CliRunner, a per-case
timeout), plus `--processes` of them as real `python -m recommender` processes:

- config:   a real config.json (the catalog's) with hostile values per key (huge, negative, NaN, inf, strings,
            wrong types, nested keys), or broken as a file (binary, truncated, deeply nested, UTF-16, empty);
- flags:    every command's options with hostile values (nan, inf, 2^63, infk, negative, zero, strings);
- plan:     the examples' plan documents with a field replaced, deleted or added, or broken as a file;
- manifest: Kubernetes, compose, Helm values, systemd units and scripts (the examples and the real deployment
            corpus) mutated the same way;
- project:  vllm-plan.yaml and VLLM_PLAN_* settings with hostile values;
- usage:    unknown options, missing and extra arguments;
- serve:    `vllm serve` command lines (explain -- ..., check "...", a launch script) with hostile vLLM flags,
            before and after the model, for several target releases;
- results:  real `vllm bench serve --save-result` files, mutated, for `perf --compare` and `calibrate`;
- calibration: the local calibration file `perf` reads (VLLM_PLAN_PERF_LOCAL), mutated or broken;
- reading:  repositories whose scripts run each other (themselves, in a ring, a wide tree) and Makefiles whose
            variables and $(call)s name each other, for `check` (benchmarks/fuzz_reading.py).

A case fails on: exit 70 or an exit code outside the documented ones, a traceback, a hang (over --timeout s),
an error of more than one line on stderr, or a partial file (a failed `-o DIR` write leaves DIR empty).
Prints the counts per kind and exit code, and each distinct problem with a command that reproduces it.
Hub ids are never generated: models are catalog ids or local directories, and the run is offline.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fuzz_reading import hostile_reading
from recommender.console import run_script

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
CORPUS = ROOT / "tests" / "data" / "deployments"
BENCH_RESULTS = ROOT / "tests" / "data" / "bench_results"
DOCUMENTED_EXITS = frozenset({0, 1, 2, 3, 4})
KINDS = ("config", "flags", "plan", "manifest", "project", "usage", "serve", "results", "calibration", "reading")
WORK = "@/"  # an argument starting with this names a file in the case's own directory

# --- hostile values ---------------------------------------------------------------------------------------------

NUMBER_TEXTS = (
    *("nan", "-nan", "NaN", "inf", "-inf", "Infinity", "1e309", "-1e309", "1e-330"),
    *("-1", "0", "-0", "0.0", "-0.5", "0.5", "1.5", "60.7", "1e3", "1e30", "1e300"),
    *(str(2**31), str(2**63), str(2**64), "9" * 40, "0x10", "1_000", "\u0663", "\uff11\uff12"),
    *("", " ", " 7 ", "abc", "infk", "nank", "1e400k", "1.5k", "-5k", "99999T", "32k", "32K", "auto", "true"),
    *("--", "-", "1;2", "65536", "100000000"),
)
STRING_TEXTS = (
    *("", " ", "x", "a b", "$(touch pwned)", "`touch pwned`", "; touch pwned", "a\nb", "a\rb", "\x00", "\x1b[2J"),
    *("\u2028", "%n%s%x", "{{7*7}}", "${HOME}", "'\"\\", "-h", "--help", "../../etc/passwd", "/dev/zero"),
    *("A" * 5000, "\u00e9\u6f22\u5b57", "null", "~", "*", "[a, b]", "{a: 1}", "!!python/object/apply:os.system [id]"),
)
DATA_VALUES: tuple[Any, ...] = (
    *(None, True, False, 0, -1, -3, 1, 3, 10**8, 10**9, 10**30, 2**63, -(2**63), 1.5, 60.7, 1e308, -1e308),
    *(math.nan, math.inf, -math.inf, "", "x", "12", "1e30", "nan", "a\nb", "$(touch pwned)", "\u2028", "A" * 3000),
    *([], [1], [None], {}, {"a": 1}, {"": None}),
)
ENUM_TEXTS = ("", "bogus", "JSON", "json ", "all,all", "k8s,,", "none", "\x00")

MODELS = ("Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen3-30B-A3B", "Qwen/Qwen2.5-7B-Instruct")
GPUS = ("h100", "rtx4090", "l4", "a100")
_REPO_ID = re.compile(r"^[^/\s]+/[^/\s]+$")


def _safe_text(text: str) -> str:
    """No generated value may look like a hub id that the catalog lacks (the run must not reach the hub)."""
    return text.replace("/", "|") if _REPO_ID.match(text.strip()) else text


# --- cases --------------------------------------------------------------------------------------------------------


@dataclass
class Case:
    """One CLI invocation: argv after `vllm-plan`, the files it reads, its environment and the output directory
    that must stay empty when it fails."""

    kind: str
    label: str
    args: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    out_dir: str | None = None

    def argv(self, work: Path) -> list[str]:
        return [_in(work, a) for a in self.args]

    def environ(self, work: Path) -> dict[str, str]:
        return {k: _in(work, v) for k, v in self.env.items()}

    def reproduce(self) -> str:
        files = ", ".join(f"{name} ({len(data):,} bytes)" for name, data in self.files.items())
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        return (env + " " if env else "") + "vllm-plan " + shlex.join(self.args) + (f"   [{files}]" if files else "")


def _in(work: Path, text: str) -> str:
    return str(work / text[len(WORK) :]) if text.startswith(WORK) else text


def _pick(rng: random.Random, seq: Any) -> Any:
    return seq[rng.randrange(len(seq))]


# -- config.json


@dataclass(frozen=True)
class Material:
    """The real inputs the cases start from (read once)."""

    configs: tuple[dict[str, Any], ...]
    results: tuple[tuple[str, Any], ...]  # real `vllm bench serve --save-result` files: (name, data)
    plans: tuple[tuple[str, str, Any], ...]  # (name, text, data)
    manifests: tuple[tuple[str, bytes, list[Any]], ...]  # (file name, content, its YAML documents or [])


def load_material() -> Material:
    import yaml

    from recommender.catalog import load_model, model_files

    configs = []
    for key in sorted(model_files())[::7]:
        entry = load_model(key)
        if entry is not None:
            configs.append(dict(entry.config))
    plans = []
    for p in sorted(EXAMPLES.glob("*/plan.yaml")):
        text = p.read_text(encoding="utf-8")
        plans.append((p.parent.name, text, yaml.safe_load(text)))
    files = [p for p in sorted(EXAMPLES.glob("*/*")) if p.name not in ("plan.yaml", "command.txt") and p.is_file()]
    expected = yaml.safe_load((CORPUS / "expected.yaml").read_text(encoding="utf-8"))
    for rel, what in sorted(expected.items()):
        models = [s.get("model") for s in what.get("servers", [])]
        if all(m is None or not _REPO_ID.match(m) or _in_catalog(m) for m in models):
            files.append(CORPUS / rel)
    manifests = [(p.name, p.read_bytes(), _documents(p)) for p in files]
    results = tuple((p.name, json.loads(p.read_text(encoding="utf-8"))) for p in sorted(BENCH_RESULTS.glob("*.json")))
    return Material(tuple(configs), results, tuple(plans), tuple(manifests))


def _documents(path: Path) -> list[Any]:
    import yaml

    if path.suffix not in (".yaml", ".yml"):
        return []
    try:
        return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    except yaml.YAMLError:
        return []


def _in_catalog(model: str) -> bool:
    from recommender.catalog import find_model

    return find_model(model) is not None


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside nested dicts and lists."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _safe_value(value: Any) -> Any:
    return _safe_text(value) if isinstance(value, str) else value


def mutate_data(data: Any, rng: random.Random, changes: int = 1) -> tuple[Any, str]:
    """A deep copy of `data` with values replaced by hostile ones, keys deleted or added; and what changed."""
    data = json.loads(json.dumps(data, allow_nan=True))
    done = []
    for _ in range(changes):
        paths = list(_paths(data))
        if not paths:
            return _safe_value(_pick(rng, DATA_VALUES)), "the whole document replaced"
        path = _pick(rng, paths)
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        op = rng.random()
        where = ".".join(map(str, path))
        if op < 0.7:
            value = _safe_value(_pick(rng, DATA_VALUES))
            parent[path[-1]] = value
            done.append(f"{where} = {str(value)[:40]!r}")
        elif op < 0.85:
            del parent[path[-1]]
            done.append(f"{where} deleted")
        elif isinstance(parent, dict):
            parent[_pick(rng, ("bogus_key", "", "x" * 300, "num_hidden_layers"))] = _pick(rng, DATA_VALUES)
            done.append(f"key added beside {where}")
        else:
            parent.append(_pick(rng, DATA_VALUES))
            done.append(f"item appended to {'.'.join(map(str, path[:-1]))}")
    return data, "; ".join(done)


def alias_bomb_inside(data: Any, rng: random.Random) -> tuple[Any, str]:
    """`data` with a value that YAML writes as nine levels of nine aliases (387 million values once expanded)
    at a random place: a reader that walks the document must not walk the expansion."""
    bomb: list[Any] = ["x"] * 9
    for _ in range(8):
        bomb = [bomb] * 9
    holders = [p for p in _paths(data) if isinstance(_at(data, p), dict)] or [()]
    path = _pick(rng, holders)
    _at(data, path)["bomb"] = bomb
    return data, f"YAML alias bomb at {'.'.join(map(str, path)) or 'the top'}"


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def break_text(text: bytes, rng: random.Random) -> tuple[bytes, str]:
    """A file broken as a file: binary, truncated, not UTF-8, nested beyond reason, an alias bomb, empty."""
    choices: list[tuple[str, Callable[[], bytes]]] = [
        ("truncated", lambda: text[: rng.randrange(max(1, len(text)))]),
        ("binary", lambda: rng.randbytes(rng.randrange(1, 4000))),
        ("latin-1 byte inside", lambda: _splice(text, rng, b"\xff\xe9\xfe")),
        ("NUL bytes inside", lambda: _splice(text, rng, b"\x00\x00")),
        ("UTF-16", lambda: text.decode("utf-8", "replace").encode("utf-16")),
        ("UTF-8 BOM", lambda: b"\xef\xbb\xbf" + text),
        ("empty", lambda: b""),
        ("nested [ 100,000 deep", lambda: b"[" * 100_000),
        ("nested { 3,000 deep", lambda: b'{"a":' * 3000 + b"1" + b"}" * 3000),
        ("YAML alias bomb", lambda: _alias_bomb()),
        ("YAML python tag", lambda: b"!!python/object/apply:os.system ['touch pwned']\n"),
        ("a line deleted", lambda: _drop_line(text, rng)),
        ("a line duplicated", lambda: _dup_line(text, rng)),
        ("tab indentation", lambda: text.replace(b"  ", b"\t", 3)),
        ("CRLF", lambda: text.replace(b"\n", b"\r\n")),
        ("lone surrogate escape", lambda: text + b"\n# \xed\xa0\x80\n"),
    ]
    name, make = _pick(rng, choices)
    return make(), name


def _splice(text: bytes, rng: random.Random, insert: bytes) -> bytes:
    at = rng.randrange(len(text) + 1)
    return text[:at] + insert + text[at:]


def _drop_line(text: bytes, rng: random.Random) -> bytes:
    lines = text.splitlines(keepends=True)
    if lines:
        del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def _dup_line(text: bytes, rng: random.Random) -> bytes:
    lines = text.splitlines(keepends=True)
    if lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    return b"".join(lines)


def _alias_bomb() -> bytes:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    return ("\n".join(lines) + "\n").encode()


CONFIG_KEYS = (
    *("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size"),
    *("vocab_size", "max_position_embeddings", "head_dim", "num_local_experts", "num_experts", "n_routed_experts"),
    *("num_experts_per_tok", "moe_intermediate_size", "sliding_window", "rope_scaling", "quantization_config"),
    *("torch_dtype", "architectures", "model_type", "tie_word_embeddings", "kv_lora_rank", "q_lora_rank"),
    *("qk_rope_head_dim", "layer_types", "text_config", "vision_config", "first_k_dense_replace", "rope_theta"),
)


def config_case(rng: random.Random, m: Material) -> Case:
    base = dict(_pick(rng, m.configs))
    if rng.random() < 0.25:
        content, label = break_text(json.dumps(base, indent=2).encode(), rng)
    else:
        if rng.random() < 0.6:
            key = _pick(rng, CONFIG_KEYS)
            value = _safe_value(_pick(rng, DATA_VALUES))
            if key == "vision_config" and isinstance(value, int):
                value = {"depth": value, "hidden_size": 1152}
            base[key] = value
            data, label = base, f"{key} = {str(value)[:40]!r}"
        else:
            data, label = mutate_data(base, rng, changes=rng.randint(1, 3))
        content = json.dumps(data, indent=2, allow_nan=True).encode()
    command = rng.random()
    if command < 0.5:
        args = ["explain", f"{WORK}model", "--gpu", _pick(rng, GPUS), "--format", _pick(rng, ("table", "json"))]
    elif command < 0.75:
        args = ["show", f"{WORK}model", "--format", _pick(rng, ("table", "json", "yaml"))]
    elif command < 0.9:
        args = ["recommend", "--model", f"{WORK}model", "--gpu", "h100", "--gpus-per-node", "1", "--concurrency", "4"]
    else:
        args = ["perf", f"{WORK}model", "--gpu", "h100", "--input-len", "64", "--output-len", "8", "--num-prompts", "8"]
    return Case("config", f"config.json: {label}", args, files={"model/config.json": content})


# -- flags


NUMERIC_OPTIONS = {
    "explain": (
        *("--gpu-memory-gib", "--free-memory-gib", "-tp", "-pp", "-dp", "--gpu-memory-utilization"),
        *("--kv-cache-memory-bytes", "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens"),
        *("--block-size", "--cpu-offload-gb", "--vllm-version"),
    ),
    "recommend": (
        *("--gpus-per-node", "--nodes", "--gpu-memory-gib", "--free-memory-gib", "--concurrency", "--context"),
        *("--min-context", "--vllm-version", "--port", "--replicas", "--storage-gib"),
    ),
    "recommend-latency": (
        *("--input-len", "--output-len", "--ttft-ms", "--tpot-ms", "--itl-ms", "--request-rate", "--gpu-hour-cost"),
        *("--concurrency", "--gpus-per-node"),
    ),
    "perf": (
        *("--input-len", "--output-len", "--max-concurrency", "--request-rate", "--burstiness", "--num-prompts"),
        *("--seed", "--sweep", "-tp", "--max-num-seqs", "--max-model-len", "--gpu-memory-utilization"),
    ),
    "render": ("--port", "--replicas", "--storage-gib"),
    "check": ("--concurrency", "--context", "--vllm-version", "--gpu-memory-gib"),
}
STRING_OPTIONS = {
    "explain": ("--gpu", "--kv-cache-dtype", "-q", "--dtype", "--format", "--revision"),
    "recommend": ("--objective", "--quantization", "--format", "--emit", "--name", "--image", "--image-tag"),
    "recommend-latency": ("--slo-percentile", "--objective", "--dataset-name"),
    "perf": ("--dataset-name", "--kv-cache-dtype", "--format", "--gpu"),
    "render": (
        *("--emit", "--name", "--namespace", "--image", "--image-tag", "--storage-class", "--hf-token-secret"),
        *("--runtime-class", "--vllm-bin"),
    ),
    "check": ("--gpu", "--format", "--model-alias"),
}


def _base_args(command: str, rng: random.Random, m: Material) -> tuple[list[str], dict[str, bytes], str | None]:
    model, gpu = _pick(rng, MODELS), _pick(rng, GPUS)
    if command == "explain":
        return ["explain", model, "--gpu", gpu], {}, None
    if command == "recommend":
        return ["recommend", "--model", model, "--gpu", gpu, "--concurrency", "8"], {}, None
    if command == "recommend-latency":
        base = ["recommend", "--model", MODELS[0], "--gpu", "h100", "--gpus-per-node", "1"]
        return [*base, "--input-len", "200", "--output-len", "20", "--concurrency", "4"], {}, None
    if command == "perf":
        return (
            ["perf", model, "--gpu", gpu, "--input-len", "100", "--output-len", "10", "--num-prompts", "10"],
            {},
            None,
        )
    if command == "render":
        _name, text, _data = _pick(rng, m.plans)
        return ["render", f"{WORK}plan.yaml", "-o", f"{WORK}out"], {"plan.yaml": text.encode()}, "out"
    return ["check", "--gpu", gpu, "--", "vllm", "serve", model], {}, None


def flags_case(rng: random.Random, m: Material) -> Case:
    command = _pick(rng, tuple(NUMERIC_OPTIONS))
    args, files, out = _base_args(command, rng, m)
    tail: list[str] = []
    if args[0] == "check":  # `check -- vllm serve MODEL ...`: the options go before `--`, vLLM's flags after it
        cut = args.index("--")
        args, tail = args[:cut], args[cut:]
    changed = []
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.7:
            option, value = _pick(rng, NUMERIC_OPTIONS[command]), _pick(rng, NUMBER_TEXTS)
        else:
            option, value = _pick(rng, STRING_OPTIONS[command]), _pick(rng, STRING_TEXTS + ENUM_TEXTS)
        value = _safe_text(value)
        args += [option, value] if rng.random() < 0.8 else [f"{option}={value}"] if option.startswith("--") else []
        changed.append(f"{option} {value[:30]!r}")
    if tail and rng.random() < 0.5:
        tail += [_pick(rng, ("-tp", "--max-model-len", "--kv-cache-memory-bytes", "--port")), _pick(rng, NUMBER_TEXTS)]
    return Case("flags", f"{command}: {', '.join(changed)}", args + tail, files=files, out_dir=out)


# -- plans, manifests, project files


def plan_case(rng: random.Random, m: Material) -> Case:
    import yaml

    name, text, plan = _pick(rng, m.plans)
    if rng.random() < 0.3:
        content, label = break_text(text.encode(), rng)
    else:
        data, label = mutate_data(plan, rng, changes=rng.randint(1, 2))
        if isinstance(data, dict) and rng.random() < 0.05:
            data, label = alias_bomb_inside(data, rng)
            content = yaml.safe_dump(data, sort_keys=False).encode()
        else:
            dump = json.dumps if rng.random() < 0.2 else lambda d: yaml.safe_dump(d, sort_keys=False)
            content = dump(data).encode()
    command = rng.random()
    if command < 0.5:
        args, out = ["render", f"{WORK}plan.yaml", "--emit", "all", "-o", f"{WORK}out"], "out"
    elif command < 0.7:
        args, out = ["render", f"{WORK}plan.yaml", "--emit", _pick(rng, ("command", "k8s", "systemd"))], None
    else:
        args, out = ["check", f"{WORK}plan.yaml", "--gpu", _pick(rng, GPUS)], None
    return Case("plan", f"plan {name}: {label}", args, files={"plan.yaml": content}, out_dir=out)


def manifest_case(rng: random.Random, m: Material) -> Case:
    import yaml

    name, content, docs = _pick(rng, m.manifests)
    label = "text"
    if docs and rng.random() < 0.6:
        docs = list(docs)
        i = rng.randrange(len(docs))
        docs[i], label = mutate_data(docs[i], rng, changes=rng.randint(1, 3))
        if isinstance(docs[i], dict) and rng.random() < 0.05:
            docs[i], label = alias_bomb_inside(docs[i], rng)
        content = yaml.safe_dump_all(docs, sort_keys=False).encode()
    else:
        content, label = break_text(content, rng)
    args = ["check", f"{WORK}{name}"] + (["--gpu", _pick(rng, GPUS)] if rng.random() < 0.5 else [])
    return Case("manifest", f"{name}: {label}", args, files={name: content})


PROJECT_KEYS = (
    *("model", "gpu", "gpus_per_node", "nodes", "gpu_memory_gib", "free_memory_gib", "concurrency", "context"),
    *("objective", "vllm_version", "quantization", "input_len", "output_len", "request_rate", "ttft_ms"),
    *("slo_percentile", "gpu_hour_cost", "bogus", "gpus-per-node"),
)


def project_case(rng: random.Random, _m: Material) -> Case:
    import yaml

    data: dict[str, Any] = {"model": MODELS[0], "gpu": "h100", "gpus_per_node": 1, "concurrency": 8}
    env: dict[str, str] = {}
    if rng.random() < 0.2:
        content, label = break_text(yaml.safe_dump(data).encode(), rng)
    else:
        changed = []
        for _ in range(rng.randint(1, 2)):
            key, value = _pick(rng, PROJECT_KEYS), _safe_value(_pick(rng, DATA_VALUES))
            if rng.random() < 0.3:
                text = _safe_text(_pick(rng, NUMBER_TEXTS + STRING_TEXTS)).replace("\x00", "")
                env["VLLM_PLAN_" + key.upper().replace("-", "_")] = text
                changed.append(f"env {key}={text[:30]!r}")
            else:
                data[key] = value
                changed.append(f"{key}: {str(value)[:30]!r}")
        content, label = yaml.safe_dump(data, sort_keys=False).encode(), ", ".join(changed)
    args = ["recommend", "--config", f"{WORK}vllm-plan.yaml"]
    return Case("project", f"vllm-plan.yaml: {label}", args, files={"vllm-plan.yaml": content}, env=env)


USAGE_ARGS = (
    ["recommend", "--foo"],
    ["explain", "--gpu"],
    ["explain", MODELS[0], "--gpu", "h100", "extra"],
    ["render"],
    ["render", "a", "b", "--emit"],
    ["check", "--format"],
    ["check", "--format", "xml", "x"],
    ["perf"],
    ["bogus-command"],
    ["--bogus"],
    ["gpus", "--format", "csv"],
    ["models", "x"],
    ["show"],
    ["explain", MODELS[0], "-tp"],
    ["recommend", "--model"],
    ["calibrate"],
    ["calibrate", "--gpu", "h100", "/nonexistent.json"],
    ["perf", MODELS[0], "--gpu", "h100", "--dataset-name", "sonnet"],
)


def usage_case(rng: random.Random, _m: Material) -> Case:
    args = list(_pick(rng, USAGE_ARGS))
    return Case("usage", "usage: " + " ".join(args), args)


# vLLM serve options as a command line writes them (check and explain read them with vLLM's own flag table)
SERVE_FLAGS = (
    *("-tp", "-pp", "-dp", "--tensor-parallel-size", "--max-model-len", "--max_model_len", "--max-num-seqs"),
    *("--max-num-batched-tokens", "--gpu-memory-utilization", "--kv-cache-memory-bytes", "--block-size"),
    *("--cpu-offload-gb", "--dtype", "--kv-cache-dtype", "--quantization", "--port", "--host", "--max-num-seq"),
    *("--swap-space", "--num-scheduler-steps", "--config", "--model", "--enable-expert-parallel", "--no-enforce-eager"),
    *("--served-model-name", "--api-key", "--data-parallel-size", "--max-seq-len-to-capture", "--"),
)


def serve_case(rng: random.Random, _m: Material) -> Case:
    words = ["vllm", "serve", _pick(rng, MODELS)]
    changed = []
    for _ in range(rng.randint(1, 4)):
        flag = _pick(rng, SERVE_FLAGS)
        value = _safe_text(_pick(rng, NUMBER_TEXTS + STRING_TEXTS + ENUM_TEXTS))
        where = rng.randrange(2, len(words) + 1)  # before the model too (vLLM moves --model, not --port)
        form = rng.random()
        added = [flag] if form < 0.15 else [f"{flag}={value}"] if form < 0.3 else [flag, value]
        words[where:where] = added
        changed.append(" ".join(added)[:40])
    gpu, label = _pick(rng, GPUS), f"vllm serve ... {', '.join(changed)}"
    version = ["--vllm-version", _pick(rng, ("0.8.5", "0.10.2", "0.11.0", "0.33.0"))] if rng.random() < 0.4 else []
    choice = rng.random()
    if choice < 0.4:
        return Case("serve", label, ["explain", "--gpu", gpu, *version, "--", *words])
    if choice < 0.7:
        return Case("serve", label, ["check", "--gpu", gpu, *version, "--", *words])
    if choice < 0.85:
        return Case("serve", label, ["check", "--gpu", gpu, *version, shlex.join(words)])
    script = "#!/bin/sh\nexport TP=2\n" + shlex.join(words) + " &\n"
    return Case(
        "serve", label, ["check", "--gpu", gpu, *version, f"{WORK}serve.sh"], files={"serve.sh": script.encode()}
    )


def results_case(rng: random.Random, m: Material) -> Case:
    name, doc = _pick(rng, m.results)
    if rng.random() < 0.25:
        content, label = break_text(json.dumps(doc).encode(), rng)
    else:
        data, label = mutate_data(doc, rng, changes=rng.randint(1, 3))
        lines = rng.random() < 0.2  # --append-result writes one object per line
        content = ((json.dumps(data) + "\n") * 2 if lines else json.dumps(data)).encode()
    gpu = ["--gpu", _pick(rng, ("l40s", "h100", "a100"))]
    model = ["--model", MODELS[0]]  # the files' own models may not be in the catalog
    if rng.random() < 0.9:  # calibrate fits with many predictions: seconds per case
        args = ["perf", *model, *gpu, "--compare", f"{WORK}result.json"]
    else:
        args = ["calibrate", f"{WORK}result.json", *model, *gpu, "--dry-run"]
    return Case("results", f"{name}: {label}", args, files={"result.json": content})


def calibration_case(rng: random.Random, _m: Material) -> Case:
    """A local calibration file (VLLM_PLAN_PERF_LOCAL) that perf reads on every run."""
    import yaml

    doc: dict[str, Any] = {
        "comment": "written by `vllm-plan calibrate`",
        "gpus": {"h100-sxm": {"efficiency": {"bandwidth": 0.9, "compute": 0.8, "overhead": 1.1}}},
    }
    if rng.random() < 0.3:
        content, label = break_text(yaml.safe_dump(doc).encode(), rng)
    else:
        data, label = mutate_data(doc, rng, changes=rng.randint(1, 2))
        content = yaml.safe_dump(data).encode()
    args = ["perf", MODELS[0], "--gpu", "h100", "--input-len", "100", "--output-len", "10", "--num-prompts", "10"]
    env = {"VLLM_PLAN_PERF_LOCAL": f"{WORK}perf-local.yaml"}
    return Case("calibration", f"perf-local.yaml: {label}", args, files={"perf-local.yaml": content}, env=env)


def reading_case(rng: random.Random, _m: Material) -> Case:
    label, entry, files = hostile_reading(rng)
    return Case("reading", label, ["check", f"{WORK}{entry}", "--gpu", _pick(rng, GPUS)], files=files)


GENERATORS: dict[str, Callable[[random.Random, Material], Case]] = {
    "config": config_case,
    "flags": flags_case,
    "plan": plan_case,
    "manifest": manifest_case,
    "project": project_case,
    "usage": usage_case,
    "serve": serve_case,
    "results": results_case,
    "calibration": calibration_case,
    "reading": reading_case,
}


def generate(seed: int, count: int, kinds: tuple[str, ...] = KINDS, material: Material | None = None) -> list[Case]:
    """`count` cases, the same for the same seed: kinds in turn, each case from its own random stream."""
    m = material or load_material()
    return [GENERATORS[kinds[i % len(kinds)]](random.Random(f"{seed}:{i}"), m) for i in range(count)]


# --- running and judging ---------------------------------------------------------------------------------------


@dataclass
class Outcome:
    exit_code: int | None  # None: did not finish in time
    stdout: str
    stderr: str
    seconds: float
    leftover: list[str]  # files in the case's out_dir after a failed run


class _Timeout(BaseException):  # not an Exception: nothing in the tool may swallow it
    pass


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def fire(_signum: int, _frame: Any) -> None:
        raise _Timeout

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _prepare(case: Case, work: Path) -> None:
    for rel, data in case.files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _leftover(case: Case, work: Path, exit_code: int | None) -> list[str]:
    if case.out_dir is None or exit_code == 0:
        return []
    out = work / case.out_dir
    return sorted(str(p.relative_to(out)) for p in out.rglob("*")) if out.is_dir() else []


Runner = Callable[[Case, Path, float], Outcome]


def run_in_process(case: Case, work: Path, timeout: float) -> Outcome:
    """Through click's CliRunner in this process, with a deadline."""
    from click.testing import CliRunner

    from recommender.cli import cli

    _prepare(case, work)
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("VLLM_PLAN_") and k != "VLLM_PLAN_DEBUG"}
    env["VLLM_PLAN_PERF_LOCAL"] = "none"
    start = time.perf_counter()
    try:
        with _deadline(timeout):
            result = CliRunner().invoke(cli, case.argv(work), env={**env, **case.environ(work)})
    except _Timeout:
        return Outcome(None, "", "", time.perf_counter() - start, [])
    seconds = time.perf_counter() - start
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr += "".join(traceback.format_exception(result.exception))
    return Outcome(result.exit_code, result.stdout, stderr, seconds, _leftover(case, work, result.exit_code))


def run_process(case: Case, work: Path, timeout: float) -> Outcome:
    """As a real `python -m recommender` process, killed after `timeout` seconds."""
    _prepare(case, work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_PLAN_")}
    env.update({"HF_HUB_OFFLINE": "1", "VLLM_PLAN_PERF_LOCAL": "none", **case.environ(work)})
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "recommender", *case.argv(work)],
            capture_output=True,
            timeout=timeout,
            env=env,
            cwd=work,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome(None, "", "", time.perf_counter() - start, [])
    out, err = (s.decode("utf-8", "replace") for s in (proc.stdout, proc.stderr))
    return Outcome(proc.returncode, out, err, time.perf_counter() - start, _leftover(case, work, proc.returncode))


def runnable_as_process(case: Case) -> bool:
    """argv and environment cannot carry NUL bytes."""
    return not any("\x00" in a for a in case.args) and not any("\x00" in v for v in case.env.values())


def judge(outcome: Outcome, timeout: float) -> list[str]:
    """What is wrong with this outcome (empty: nothing)."""
    if outcome.exit_code is None:
        return [f"hang: no answer within {timeout:g} s"]
    problems = []
    code = outcome.exit_code
    if code not in DOCUMENTED_EXITS:
        first = next((ln for ln in outcome.stderr.splitlines() if ln.startswith("Error")), "")
        problems.append(f"exit {code}: {first or outcome.stderr.strip()[-300:]}")
    if "Traceback (most recent call last)" in outcome.stderr + outcome.stdout:
        problems.append("traceback: " + outcome.stderr.strip().splitlines()[-1][:200])
    error_lines = [
        ln for ln in outcome.stderr.splitlines() if ln.strip() and not ln.startswith(("note: ", "warning: "))
    ]
    if len(error_lines) > 1:
        problems.append(f"{len(error_lines)}-line error: " + " | ".join(error_lines[:4])[:300])
    if outcome.leftover:
        problems.append(f"partial write: exit {code} left {', '.join(outcome.leftover[:5])}")
    return problems


def signature(problem: str) -> str:
    """A problem with its numbers and paths blurred, so one root cause counts once."""
    text = re.sub(r"/tmp/[^\s:'\"]+", "<tmp>", problem)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x..", text)
    text = re.sub(r"\d[\d,._]*", "N", text)
    return text[:120]


# --- main -------------------------------------------------------------------------------------------------------


@dataclass
class Report:
    exits: Counter[tuple[str, int | None]] = field(default_factory=Counter)
    problems: dict[str, list[tuple[Case, str]]] = field(default_factory=dict)
    slowest: list[tuple[float, str]] = field(default_factory=list)
    ran: int = 0

    def add(self, case: Case, outcome: Outcome, timeout: float) -> list[str]:
        self.ran += 1
        self.exits[(case.kind, outcome.exit_code)] += 1
        self.slowest = sorted([*self.slowest, (outcome.seconds, case.reproduce()[:160])], reverse=True)[:5]
        found = judge(outcome, timeout)
        for p in found:
            self.problems.setdefault(signature(p), []).append((case, p))
        return found


def run_all(cases: list[Case], processes: int, timeout: float, rng: random.Random) -> Report:
    report = Report()
    as_process = {id(c) for c in rng.sample(cases, min(processes, len(cases))) if runnable_as_process(c)}
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="vllm-plan-fuzz-") as tmp:
            runner = run_process if id(case) in as_process else run_in_process
            report.add(case, runner(case, Path(tmp), timeout), timeout)
    return report


def print_report(report: Report, seconds: float, show: int) -> None:
    print(f"{report.ran:,} cases in {seconds:.1f} s")
    kinds = sorted({k for k, _ in report.exits})
    codes = sorted({c for _, c in report.exits}, key=lambda c: -1 if c is None else c)
    print("exit codes per kind (None = hang):")
    print("  " + f"{'kind':<10}" + "".join(f"{c!s:>7}" for c in codes))
    for k in kinds:
        print("  " + f"{k:<10}" + "".join(f"{report.exits.get((k, c), 0):>7}" for c in codes))
    print("slowest:")
    for s, what in report.slowest:
        print(f"  {s:6.2f} s  {what}")
    total = sum(len(v) for v in report.problems.values())
    print(f"problems: {total} in {len(report.problems)} distinct kinds")
    for sig, hits in sorted(report.problems.items(), key=lambda kv: -len(kv[1])):
        print(f"- {len(hits)} x {sig}")
        for case, problem in hits[:show]:
            print(f"    {case.label[:150]}")
            print(f"      {case.reproduce()[:300]}")
            print(f"      -> {problem[:300]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--processes", type=int, default=40, help="how many of the cases run as real processes")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    parser.add_argument("--show", type=int, default=2, help="examples printed per distinct problem")
    args = parser.parse_args(argv)
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; choose from {', '.join(KINDS)}")
    os.environ["HF_HUB_OFFLINE"] = "1"  # before huggingface_hub is imported: a stray hub id never leaves
    start = time.perf_counter()
    cases = generate(args.seed, args.count, kinds)
    report = run_all(cases, args.processes, args.timeout, random.Random(args.seed))
    print_report(report, time.perf_counter() - start, args.show)
    return 1 if report.problems else 0


if __name__ == "__main__":
    run_script(main)
