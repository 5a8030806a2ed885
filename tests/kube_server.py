"""A small HTTP server on 127.0.0.1 answering the Kubernetes API call `check --from-cluster` makes (list nodes)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from .local_server import LocalServer


def node(name: str, product: str, gpus: int, *, unschedulable: bool = False) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": product}},
        "spec": {"unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": str(gpus)}},
    }


class _Handler(BaseHTTPRequestHandler):
    server: KubeServer

    def log_message(self, format: str, *args: Any) -> None:
        del format, args

    def do_GET(self) -> None:
        self.server.requests.append((self.path, self.headers.get("Authorization")))
        if self.path.split("?")[0] != "/api/v1/nodes":
            body = json.dumps({"kind": "Status", "status": "Failure", "code": 404}).encode()
            self.send_response(404)
        else:
            body = json.dumps(
                {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": self.server.nodes}
            ).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class KubeServer(LocalServer):
    """Serves a fixed node list; records requests."""

    def __init__(self, nodes: list[dict[str, Any]]) -> None:
        super().__init__(_Handler)
        self.nodes = nodes
        self.requests: list[tuple[str, str | None]] = []

    def kubeconfig(self, path: Path) -> Path:
        """A kubeconfig with context `test` (this server) and `other` (nothing listening)."""
        url = self.url
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "test",
                    "clusters": [
                        {"name": "test", "cluster": {"server": url}},
                        {"name": "other", "cluster": {"server": "http://127.0.0.1:9"}},
                    ],
                    "users": [{"name": "u", "user": {"token": "test-token"}}],
                    "contexts": [
                        {"name": "test", "context": {"cluster": "test", "user": "u"}},
                        {"name": "other", "context": {"cluster": "other", "user": "u"}},
                    ],
                }
            )
        )
        return path
