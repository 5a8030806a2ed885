"""A small HTTP server on 127.0.0.1 that answers the hub routes huggingface_hub calls for a file download.

Routes: HEAD/GET /{org}/{name}/resolve/{revision}/{filename}. Repositories:
  acme/tiny    public, serves config.json (and 404 EntryNotFound for other files)
  acme/gated   401 GatedRepo unless the request carries `Authorization: Bearer good-token`
  acme/slow    answers after `delay` seconds (for timeouts)
  acme/deleted 404 RepoNotFound (what the hub answers an authenticated client)
  anything else: 401 RepoNotFound, as the real hub answers for missing repositories
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from .local_server import LocalServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"

TINY_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
}


class HubHandler(BaseHTTPRequestHandler):
    """Serves the resolve route."""

    server: HubServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        del format, args

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self) -> None:
        self.server.requests.append((self.command, self.path, self.headers.get("Authorization")))
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            self._send(404, b"not found", {"X-Error-Code": "RepoNotFound"})
            return
        repo, revision, filename = f"{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:])
        if repo == "acme/slow":
            time.sleep(self.server.delay)
        if repo == "acme/gated" and self.headers.get("Authorization") != "Bearer good-token":
            self._send(401, b"gated", {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to model is restricted"})
            return
        if repo == "acme/deleted":
            self._send(404, b"missing", {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"})
            return
        if repo not in ("acme/tiny", "acme/gated", "acme/slow"):
            self._send(401, b"missing", {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"})
            return
        if revision not in ("main", "v1", COMMIT):
            self._send(404, b"", {"X-Error-Code": "RevisionNotFound"})
            return
        if filename != "config.json":
            self._send(404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT})
            return
        body = json.dumps(TINY_CONFIG).encode()
        self._send(
            200, body, {"ETag": f'"etag-{len(body)}"', "X-Repo-Commit": COMMIT, "Content-Type": "application/json"}
        )

    do_GET = _handle
    do_HEAD = _handle


class HubServer(LocalServer):
    """The server plus a log of the requests it saw."""

    def __init__(self, delay: float = 3.0) -> None:
        super().__init__(HubHandler)
        self.requests: list[tuple[str, str, str | None]] = []
        self.delay = delay
