"""Hub access through the real huggingface_hub client against a local server (HF_ENDPOINT), in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .hub_server import COMMIT, HubServer


@pytest.fixture
def hub() -> Iterator[HubServer]:
    with HubServer(delay=4.0) as server:
        yield server


def run(args: list[str], hub: HubServer, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    environ.update(
        {
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(home),
            "HF_HUB_ETAG_TIMEOUT": "1",
            "HF_HUB_DOWNLOAD_TIMEOUT": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            **env,
        }
    )
    return subprocess.run(
        [sys.executable, "-m", "recommender", *args],
        capture_output=True,
        text=True,
        env=environ,
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


def test_revision_is_passed(hub: HubServer, tmp_path: Path) -> None:
    assert run(["show", "acme/tiny", "--revision", COMMIT], hub, tmp_path).returncode == 0
    assert any(f"/resolve/{COMMIT}/config.json" in path for _, path, _ in hub.requests)
    r = run(["show", "acme/tiny", "--revision", "nope"], hub, tmp_path)
    assert r.returncode == 2 and "no revision 'nope'" in r.stderr


def test_gated_model_needs_token(hub: HubServer, tmp_path: Path) -> None:
    r = run(["show", "acme/gated"], hub, tmp_path)
    assert r.returncode == 4 and "gated" in r.stderr and "HF_TOKEN" in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    r = run(["show", "acme/gated"], hub, tmp_path / "other", HF_TOKEN="good-token")
    assert r.returncode == 0, r.stderr
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
