"""The suite cannot reach the network: the guard in conftest refuses anything but loopback."""

from __future__ import annotations

import socket

import pytest

from .conftest import NetworkAccessError


def test_connecting_off_the_machine_is_refused() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(NetworkAccessError):
        sock.connect(("203.0.113.7", 443))  # TEST-NET-3: never routable


def test_name_lookups_are_refused() -> None:
    with pytest.raises(NetworkAccessError):
        socket.getaddrinfo("huggingface.co", 443)


def test_loopback_is_allowed() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
            client.connect(server.getsockname())
