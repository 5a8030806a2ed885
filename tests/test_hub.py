"""Hub access through the real huggingface_hub client against a local server.

Most tests run in-process: `hub_at` points huggingface_hub's endpoint, cache and token paths at the local server and
a temporary home, as HF_ENDPOINT and HF_HOME would at import (the library itself runs unchanged). A few run the
CLI in a real process with the environment a user sets, for the wiring: HF_ENDPOINT/HF_HOME read at start-up,
the cache reused offline, the default timeouts."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from huggingface_hub import constants

from .conftest import invoke
from .hub_server import (
    COMMIT,
    GPTQ_CONFIG,
    TINY_CONFIG,
    HubServer,
    SilentServer,
    gptq_checkpoint,
    llama_tensors,
    refused_url,
)


@pytest.fixture
def hub() -> Iterator[HubServer]:
    with HubServer(delay=4.0) as server:
        yield server


HubAt = Callable[..., None]


@pytest.fixture
def hub_at(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> HubAt:
    """Point huggingface_hub at `url` with its home (cache, token, agent registry) under tmp_path/`home`."""

    def point(url: str, home: str = "home", *, offline: bool = False, token: str | None = None) -> None:
        root = tmp_path / home
        values = {
            "ENDPOINT": url,
            "HUGGINGFACE_CO_URL_TEMPLATE": url + "/{repo_id}/resolve/{revision}/{filename}",
            "HF_HOME": str(root),
            "HF_HUB_CACHE": str(root / "hub"),
            "HF_TOKEN_PATH": str(root / "token"),
            "HF_STORED_TOKENS_PATH": str(root / "stored_tokens"),
            "AGENT_HARNESSES_PATH": str(root / ".agent_harnesses.json"),
            "HF_HUB_OFFLINE": offline,
            "HF_HUB_DISABLE_TELEMETRY": True,
        }
        for name, value in values.items():
            monkeypatch.setattr(constants, name, value)
        for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_ETAG_TIMEOUT"):
            monkeypatch.delenv(name, raising=False)
        if token:
            monkeypatch.setenv("HF_TOKEN", token)

    return point


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


def _one_line(stderr: str) -> bool:
    return stderr.count("\n") == 1 and "Traceback" not in stderr and "Retry" not in stderr


def test_revision_is_passed(hub: HubServer, hub_at: HubAt) -> None:
    hub_at(hub.url)
    invoke(["show", "acme/tiny", "--revision", COMMIT])
    assert any(f"/resolve/{COMMIT}/config.json" in path for _, path, _ in hub.requests)
    r = invoke(["show", "acme/tiny", "--revision", "nope"], 2)
    assert "no revision 'nope'" in r.stderr and _one_line(r.stderr)


def test_gated_model_needs_token(hub: HubServer, hub_at: HubAt) -> None:
    hub_at(hub.url)
    r = invoke(["show", "acme/gated"], 4)
    assert "gated" in r.stderr and "HF_TOKEN" in r.stderr and _one_line(r.stderr)
    hub_at(hub.url, "other", token="good-token")
    d = json.loads(invoke(["show", "acme/gated", "--format", "json"]).stdout)
    # This repository has no safetensors files: the weights fall back to the architecture formula, and say so.
    assert "checkpoint" not in d and "no safetensors files on the hub" in d["notes"]
    assert ("GET", "/acme/gated/resolve/main/config.json", "Bearer good-token") in hub.requests


@pytest.mark.parametrize("repo", ["acme/missing", "acme/deleted"])  # 401 anonymous, 404 authenticated
def test_missing_model(hub: HubServer, hub_at: HubAt, repo: str) -> None:
    hub_at(hub.url)
    r = invoke(["show", repo], 2)
    assert "not found on the hub" in r.stderr and _one_line(r.stderr)


def test_offline_without_cache(hub: HubServer, hub_at: HubAt) -> None:
    hub_at(hub.url, offline=True)
    r = invoke(["show", "acme/tiny"], 4)
    assert "not in the local cache" in r.stderr and _one_line(r.stderr) and hub.requests == []


def _safetensors_gets(hub: HubServer, repo: str) -> list[tuple[str, str | None]]:
    return [
        (path.rsplit("/", 1)[1], rng)
        for method, path, rng in hub.ranges
        if method == "GET" and path.startswith(f"/{repo}/") and path.endswith(".safetensors")
    ]


def test_weights_come_from_the_hub_headers_by_range_requests(hub: HubServer, hub_at: HubAt) -> None:
    hub_at(hub.url)
    d = json.loads(invoke(["show", "acme/tiny", "--format", "json"]).stdout)
    e = json.loads(invoke(["show", "acme/sharded", "--format", "json"]).stdout)
    shapes = llama_tensors(TINY_CONFIG)
    stored = 2 * sum(math.prod(dims) for dims in shapes.values())  # BF16
    assert d["checkpoint"] == {"bytes": stored, "BF16_bytes": stored, "tensors": len(shapes)}
    # The headers hold exactly what the architecture formula counts: no warning; the weights come from the headers.
    assert d["parameters"]["total"] == stored // 2 and "approximate" not in d
    assert d["notes"] == f"weights counted from the checkpoint's {len(shapes)} tensors (safetensors headers)"
    # Only the header was asked for, by range; the weights were never requested whole.
    gets = _safetensors_gets(hub, "acme/tiny") + _safetensors_gets(hub, "acme/sharded")
    assert len(gets) == 3 and all(rng is not None and rng.startswith("bytes=0-") for _, rng in gets)
    assert {f for f, _ in _safetensors_gets(hub, "acme/sharded")} == {
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
    }
    # Sharded: embedding and lm_head padded to 1,100 rows, 2 x 100 x 256 = 51,200 more than the config's vocab.
    assert e["checkpoint"]["tensors"] == len(shapes)
    assert e["approximate_because"] == [
        "the safetensors headers hold 2,793,728 parameters, the architecture formula 2,742,528 (-1.8%)"
    ]
    # Offline afterwards, the same headers come from the cache kept for that commit: no request at all.
    seen = len(hub.requests)
    hub_at(hub.url, offline=True)
    assert json.loads(invoke(["show", "acme/sharded", "--format", "json"]).stdout)["checkpoint"] == e["checkpoint"]
    assert len(hub.requests) == seen


def test_quantized_weights_from_the_hub_headers(hub: HubServer, hub_at: HubAt, tmp_path: Path) -> None:
    """A GPTQ checkpoint on the hub: its weights come from its headers (read by range requests), tensor by
    tensor, equal to what the same headers give from a local directory; offline, from the cache."""
    from recommender.memory.weights import Parallel, weight_bytes_per_gpu
    from recommender.sources.resolve import resolve_model

    hub_at(hub.url)
    out = invoke(["explain", "acme/tiny-gptq", "--gpu", "l4", "--max-model-len", "1024"]).stdout
    assert "note: weights counted from the checkpoint's 123 tensors (safetensors headers)" in out
    assert _safetensors_gets(hub, "acme/tiny-gptq")
    local = tmp_path / "local"
    local.mkdir()
    (local / "config.json").write_text(json.dumps(GPTQ_CONFIG))
    (local / "model.safetensors").write_bytes(gptq_checkpoint(TINY_CONFIG).head)  # headers only
    # Hand-checked (gptq_marlin keeps qweight and scales; a symmetric checkpoint's qzeros and g_idx are emptied):
    # per layer 4-bit values of q, o [256, 256], k, v [64, 256], gate, up [512, 256], down [256, 512]; float16
    # scales of 2 groups x 256 out (q, o), 2 x 64 (k, v), 2 x 512 (gate, up), 4 x 256 (down); two norms; plus the
    # embedding and lm_head [1000 -> padded 1024, 256], the final norm and the rotary cache [4096, 32].
    packed = (2 * 256 * 256 + 2 * 64 * 256 + 3 * 512 * 256) // 2
    scales = (2 * 256 * 2 + 2 * 64 * 2 + 2 * 512 * 2 + 4 * 256) * 2
    expected = 4 * (packed + scales + 2 * 256 * 2) + 2 * 1024 * 256 * 2 + 256 * 2 + 4096 * 32 * 2
    for ref in ("acme/tiny-gptq", str(local)):
        spec = resolve_model(ref)
        assert weight_bytes_per_gpu(spec, Parallel(), dtype_bytes=2, quant=spec.quant) == expected
    hub_at(hub.url, offline=True)
    seen = len(hub.requests)
    spec = resolve_model("acme/tiny-gptq")
    assert weight_bytes_per_gpu(spec, Parallel(), dtype_bytes=2, quant=spec.quant) == expected
    assert len(hub.requests) == seen


@pytest.mark.parametrize("kind", ["refused", "silent", "slow", "503"])
def test_an_unreachable_hub_fails_fast_in_one_line(hub: HubServer, hub_at: HubAt, kind: str) -> None:
    """Refused, silent (accepts, never answers), slow and failing (503) hubs with the default timeouts: one line,
    exit 4, and one request or connection: huggingface_hub's retries (23 s of back-off, benchmarks/hub_failfast.py
    prints the real figures) would show as more."""
    repo = {"slow": "acme/slow", "503": "acme/broken"}.get(kind, "acme/tiny")
    with SilentServer() as silent:
        hub_at({"refused": refused_url(), "silent": silent.url}.get(kind, hub.url))
        r = invoke(["explain", repo, "--gpu", "l4"], 4)
        held = len(silent.held)
    assert _one_line(r.stderr) and f"cannot fetch {repo}" in r.stderr
    assert ("HTTP 503" if kind == "503" else "not in the local cache") in r.stderr
    expected = {
        "refused": "is unreachable (ConnectError",
        "silent": "did not answer within 1.5 s",
        "slow": "did not answer within 1.5 s",
        "503": "try again later",
    }[kind]
    assert expected in r.stderr, r.stderr
    if kind == "silent":
        assert held == 1
    elif kind != "refused":
        assert [path for _, path, _ in hub.requests] == [f"/{repo}/resolve/main/config.json"]


def test_a_silent_hub_fails_fast_in_a_real_process(tmp_path: Path) -> None:
    # The wiring of the same: HF_ENDPOINT read at start-up, no HF_HUB_ETAG_TIMEOUT (a user's defaults).
    with SilentServer() as silent:
        r = run(["explain", "acme/tiny", "--gpu", "l4"], silent.url, tmp_path, short_timeouts=False)
        held = len(silent.held)
    assert r.returncode == 4 and _one_line(r.stderr) and "did not answer within 1.5 s" in r.stderr, r.stderr
    assert held == 1


def test_a_fetched_model_through_the_fetcher_interface() -> None:
    """resolve_model's side of the hub, with a fake ModelFetcher: the source names the revision, a config without
    torch_dtype takes the checkpoint's dtype (as vLLM's auto would), and the fetcher's notes reach the spec."""
    from recommender.model.spec import CheckpointTensor
    from recommender.sources.hub import RemoteModel
    from recommender.sources.resolve import resolve_model
    from recommender.sources.safetensors import CheckpointSummary

    shapes = llama_tensors(TINY_CONFIG)
    tensors = tuple(CheckpointTensor(name, "F16", shape) for name, shape in shapes.items())
    stored = 2 * sum(math.prod(shape) for shape in shapes.values())
    config = {k: v for k, v in TINY_CONFIG.items() if k != "torch_dtype"}
    asked: list[tuple[str, str | None]] = []

    class FakeFetcher:
        def fetch(self, repo_id: str, revision: str | None) -> RemoteModel:
            asked.append((repo_id, revision))
            summary = CheckpointSummary(1, tensors, stored, {"F16": stored})
            return RemoteModel(repo_id, revision, config, None, summary, ("a note from the fetcher",))

    spec = resolve_model("acme/untyped", revision="v1", fetcher=FakeFetcher())
    assert asked == [("acme/untyped", "v1")]
    assert spec.source == "hub: acme/untyped@v1" and spec.dtype == "float16"
    assert spec.checkpoint_bytes == stored and spec.notes[-2:] == (
        "a note from the fetcher",
        f"weights counted from the checkpoint's {len(shapes)} tensors (safetensors headers)",
    )


def test_a_revision_git_refuses_reaches_neither_the_hub_nor_the_cache(
    hub: HubServer, hub_at: HubAt, tmp_path: Path
) -> None:
    # huggingface_hub joins the revision into its cache path (refs/<revision>, read offline and written after a
    # fetch): `../../x` would read and write outside the cache. Refused first, in git's ref-name rules (exit 2).
    hub_at(hub.url)
    for given in (
        ["--revision", "../../../escaped"],
        ["--revision", "a b"],
        ["--revision", "x\ny"],
        ["--revision", ""],
    ):
        r = invoke(["show", "acme/tiny", *given], 2)
        assert r.stderr.startswith("Error: revision ") and "not a branch, tag or commit name" in r.stderr, r.stderr
        assert _one_line(r.stderr)
    for ref in ("acme/tiny@../../escaped", "acme/tiny@.hidden", "https://huggingface.co/acme/tiny/tree/.."):
        assert "not a branch, tag or commit name" in invoke(["show", ref], 2).stderr
    assert hub.requests == [] and not (tmp_path / "escaped").exists()
    invoke(["show", "acme/tiny", "--revision", "v1"])  # a tag, a branch and a commit still reach the hub
    assert any("/resolve/v1/config.json" in path for _, path, _ in hub.requests)


def test_a_sentence_transformers_repository_is_a_pooling_model(hub: HubServer, hub_at: HubAt) -> None:
    """modules.json beside a LlamaForCausalLM config (get_pooling_config): vLLM's --runner auto picks pooling, so the
    planner loads no LM head; the same config without the file stays a generator."""
    from recommender.sources.resolve import resolve_model

    hub_at(hub.url)
    embed, plain = resolve_model("acme/tiny-embed"), resolve_model("acme/tiny")
    assert embed.pooling and not plain.pooling
    assert any("modules.json" in note for note in embed.notes)
    assert any(path.startswith("/acme/tiny/resolve/main/modules.json") for _, path, _ in hub.requests)
