"""Hub access through the real huggingface_hub client against a local server (HF_ENDPOINT), in a subprocess."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .hub_server import COMMIT, TINY_CONFIG, HubServer, SilentServer, llama_tensors, refused_url


@pytest.fixture
def hub() -> Iterator[HubServer]:
    with HubServer(delay=4.0) as server:
        yield server


def _environ(hub: HubServer | str, home: Path, short_timeouts: bool, env: dict[str, str]) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    timeouts = {"HF_HUB_ETAG_TIMEOUT": "1", "HF_HUB_DOWNLOAD_TIMEOUT": "1"} if short_timeouts else {}
    environ.update(
        {
            "HF_ENDPOINT": hub if isinstance(hub, str) else hub.url,
            "HF_HOME": str(home),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            **timeouts,
            **env,
        }
    )
    return environ


def run(
    args: list[str], hub: HubServer | str, home: Path, *, short_timeouts: bool = True, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recommender", *args],
        capture_output=True,
        text=True,
        env=_environ(hub, home, short_timeouts, env),
        timeout=60,
        check=False,
    )


def run_together(
    jobs: list[tuple[list[str], HubServer | str, Path]],
    *,
    short_timeouts: bool = True,
    env: dict[str, dict[str, str]] | None = None,
) -> list[tuple[subprocess.CompletedProcess[str], float]]:
    """Several CLI runs at once (the suite stays fast); each result with its own wall time. `env` adds variables
    to the runs whose HF_HOME folder has that name."""
    started = [
        (
            subprocess.Popen(
                [sys.executable, "-m", "recommender", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=_environ(hub, home, short_timeouts, (env or {}).get(home.name, {})),
            ),
            time.perf_counter(),
        )
        for args, hub, home in jobs
    ]

    def finish(job: tuple[subprocess.Popen[str], float]) -> tuple[subprocess.CompletedProcess[str], float]:
        proc, start = job
        out, err = proc.communicate(timeout=60)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), time.perf_counter() - start

    with ThreadPoolExecutor(len(started)) as pool:  # each run's time ends when that run ends
        return list(pool.map(finish, started))


def test_public_model_is_fetched_then_cached_for_offline_use(hub: HubServer, tmp_path: Path) -> None:
    r = run(["show", "acme/tiny", "--format", "json"], hub, tmp_path)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["layers"] == 4 and d["kv_heads"] == 2 and d["source"] == "hub: acme/tiny"
    assert any(path.startswith("/acme/tiny/resolve/main/config.json") for _, path, _ in hub.requests)
    # Offline afterwards: served from the hub cache, no request reaches the server.
    seen = len(hub.requests)
    r = run(["show", "acme/tiny"], hub, tmp_path, HF_HUB_OFFLINE="1")
    assert r.returncode == 0, r.stderr
    assert len(hub.requests) == seen
    # A hub that went away (refused, default timeouts): the cached model and its headers still resolve, quietly.
    r = run(["show", "acme/tiny", "--format", "json"], refused_url(), tmp_path, short_timeouts=False)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert json.loads(r.stdout)["checkpoint"] == d["checkpoint"]


def test_revision_is_passed(hub: HubServer, tmp_path: Path) -> None:
    assert run(["show", "acme/tiny", "--revision", COMMIT], hub, tmp_path).returncode == 0
    assert any(f"/resolve/{COMMIT}/config.json" in path for _, path, _ in hub.requests)
    r = run(["show", "acme/tiny", "--revision", "nope"], hub, tmp_path)
    assert r.returncode == 2 and "no revision 'nope'" in r.stderr


def test_gated_model_needs_token(hub: HubServer, tmp_path: Path) -> None:
    r = run(["show", "acme/gated"], hub, tmp_path)
    assert r.returncode == 4 and "gated" in r.stderr and "HF_TOKEN" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    r = run(["show", "acme/gated", "--format", "json"], hub, tmp_path / "other", HF_TOKEN="good-token")
    assert r.returncode == 0, r.stderr
    # This repository has no safetensors files: the weights fall back to the architecture formula, and say so.
    d = json.loads(r.stdout)
    assert "checkpoint" not in d and "no safetensors files on the hub" in d["notes"]
    assert ("GET", "/acme/gated/resolve/main/config.json", "Bearer good-token") in hub.requests


@pytest.mark.parametrize("repo", ["acme/missing", "acme/deleted"])  # 401 anonymous, 404 authenticated
def test_missing_model(hub: HubServer, tmp_path: Path, repo: str) -> None:
    r = run(["show", repo], hub, tmp_path)
    assert r.returncode == 2 and "not found on the hub" in r.stderr


def test_timeout_and_offline_without_cache(hub: HubServer, tmp_path: Path) -> None:
    r = run(["show", "acme/slow"], hub, tmp_path)
    assert r.returncode == 4 and "cannot fetch acme/slow" in r.stderr and "Traceback" not in r.stderr
    r = run(["show", "acme/tiny"], hub, tmp_path / "empty", HF_HUB_OFFLINE="1")
    assert r.returncode == 4 and "not in the local cache" in r.stderr


def _safetensors_gets(hub: HubServer, repo: str) -> list[tuple[str, str | None]]:
    return [
        (path.rsplit("/", 1)[1], rng)
        for method, path, rng in hub.ranges
        if method == "GET" and path.startswith(f"/{repo}/") and path.endswith(".safetensors")
    ]


def test_weights_come_from_the_hub_headers_by_range_requests(hub: HubServer, tmp_path: Path) -> None:
    (tiny, _), (sharded, _) = run_together(
        [(["show", repo, "--format", "json"], hub, tmp_path) for repo in ("acme/tiny", "acme/sharded")]
    )
    assert tiny.returncode == 0 and sharded.returncode == 0, tiny.stderr + sharded.stderr
    d, e = json.loads(tiny.stdout), json.loads(sharded.stdout)
    shapes = llama_tensors(TINY_CONFIG)
    stored = 2 * sum(math.prod(dims) for dims in shapes.values())  # BF16
    assert d["checkpoint"] == {"bytes": stored, "BF16_bytes": stored, "tensors": len(shapes)}
    # The headers hold exactly what the architecture formula counts: no note.
    assert d["parameters"]["total"] == stored // 2 and "notes" not in d
    # Only the header was asked for, by range; the weights were never requested whole.
    gets = _safetensors_gets(hub, "acme/tiny") + _safetensors_gets(hub, "acme/sharded")
    assert len(gets) == 3 and all(rng is not None and rng.startswith("bytes=0-") for _, rng in gets)
    assert {f for f, _ in _safetensors_gets(hub, "acme/sharded")} == {
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    }
    # Sharded: embedding and lm_head padded to 1,100 rows, 2 x 100 x 256 = 51,200 more than the config's vocab.
    assert e["checkpoint"]["tensors"] == len(shapes)
    assert e["notes"] == "the safetensors headers hold 2,793,728 parameters, the architecture formula 2,742,528 (-1.8%)"
    # Offline afterwards, the same headers come from the cache kept for that commit: no request at all.
    seen = len(hub.requests)
    r = run(["show", "acme/sharded", "--format", "json"], hub, tmp_path, HF_HUB_OFFLINE="1")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["checkpoint"] == e["checkpoint"] and len(hub.requests) == seen


def test_an_unreachable_hub_fails_fast_in_one_line(hub: HubServer, tmp_path: Path) -> None:
    """Refused, silent (accepts, never answers), slow and failing (503) hubs, with the default timeouts a user
    has: one line, exit 4, no retries. Each run is timed against a run that makes no request at all (offline,
    started at the same moment), so machine load cancels out; huggingface_hub's retries alone sleep 23 s
    (benchmarks/hub_failfast.py prints the real figures)."""
    with SilentServer() as silent:
        kinds = {
            "offline": (hub.url, "acme/tiny"),
            "refused": (refused_url(), "acme/tiny"),
            "silent": (silent.url, "acme/tiny"),
            "slow": (hub.url, "acme/slow"),
            "503": (hub.url, "acme/broken"),
        }
        results = run_together(
            [(["explain", repo, "--gpu", "l4"], url, tmp_path / kind) for kind, (url, repo) in kinds.items()],
            short_timeouts=False,
            env={"offline": {"HF_HUB_OFFLINE": "1"}},
        )
    baseline = results[0][1]
    for (kind, (_, repo)), (r, elapsed) in zip(kinds.items(), results, strict=True):
        assert r.returncode == 4, (kind, r.stderr)
        assert r.stderr.count("\n") == 1 and "Retry" not in r.stderr and "Traceback" not in r.stderr, kind
        assert f"cannot fetch {repo}" in r.stderr, kind
        assert ("HTTP 503" if kind == "503" else "not in the local cache") in r.stderr, kind
        assert elapsed - baseline < 8, f"{kind}: {elapsed:.1f} s, offline {baseline:.1f} s"


def test_the_parameter_note_needs_more_than_one_percent_and_an_unquantized_checkpoint() -> None:
    from recommender.model.spec import CheckpointTensor
    from recommender.sources.resolve import resolve_model, with_checkpoint
    from recommender.sources.safetensors import CheckpointSummary

    def summary(params: int) -> CheckpointSummary:
        return CheckpointSummary(1, (CheckpointTensor("w", "BF16", (params,)),), 2 * params, {"BF16": 2 * params})

    spec = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    assert spec.params is not None and spec.quant is None
    total = spec.params.total
    assert with_checkpoint(spec, summary(int(total * 1.009))).notes == spec.notes  # 0.9% apart: no note
    noted = with_checkpoint(spec, summary(int(total * 1.02))).notes
    assert len(noted) == len(spec.notes) + 1 and noted[-1].endswith("(-2.0%)")
    quantized = resolve_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert quantized.quant is not None  # packed int4: element counts are not parameter counts
    assert with_checkpoint(quantized, summary(total // 3)).notes == quantized.notes
    assert with_checkpoint(spec, summary(total)).checkpoint_tensors == (CheckpointTensor("w", "BF16", (total,)),)
