"""Shared fixtures: paths to the read-only shared/ material, a CliRunner helper, and a guard against the network."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from recommender.cli import cli

ROOT = Path(__file__).resolve().parent.parent
HF_CONFIGS = ROOT / "tests" / "data" / "hf-configs"  # copied from shared/reference (SOURCES.md there)
CALIBRATION = ROOT / "benchmarks" / "data" / "calibration"


def invoke(args: list[str], exit_code: int = 0, input: str | None = None) -> Result:
    """Run the CLI in-process and assert its exit code, showing output on failure."""
    result = CliRunner().invoke(cli, args, input=input)
    assert result.exit_code == exit_code, (
        f"exit {result.exit_code} != {exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}\n{result.exception!r}"
    )
    return result


class NetworkAccessError(RuntimeError):
    """A test tried to leave the machine: tests may talk to loopback servers only."""


def _loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in ("localhost", "localhost.localdomain", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True, scope="session")
def _no_network() -> Iterator[None]:
    """Fail any in-process connection or name lookup that is not loopback (the hub and cluster fakes listen on
    127.0.0.1; subprocess tests point HF_ENDPOINT and KUBECONFIG there too)."""
    real_connect, real_connect_ex, real_getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family != getattr(socket, "AF_UNIX", None) and not _loopback(address[0]):
            raise NetworkAccessError(f"a test tried to reach {address!r}: tests must not use the network")

    def connect(sock: socket.socket, address: Any) -> None:
        check(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        check(sock, address)
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _loopback(host.decode() if isinstance(host, bytes) else host):
            raise NetworkAccessError(f"a test tried to resolve {host!r}: tests must not use the network")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo


@pytest.fixture(autouse=True, scope="session")
def _no_user_settings() -> Iterator[None]:
    """The suite is the same on a user's machine: `VLLM_PLAN_GPU`/`_MODEL`/... exported in their shell and the
    local calibration `vllm-plan calibrate` wrote would otherwise change what every command plans (tests that
    exercise them set them themselves)."""
    with pytest.MonkeyPatch.context() as mp:
        for name in [n for n in os.environ if n.startswith("VLLM_PLAN_")]:
            mp.delenv(name)
        mp.setenv("VLLM_PLAN_PERF_LOCAL", "none")
        yield
