"""A small HTTP server on 127.0.0.1 that answers the hub routes huggingface_hub calls for downloads and for
safetensors headers (HEAD and GET /{org}/{name}/resolve/{revision}/{filename}, GET with `Range: bytes=a-b`).

Repositories:
  acme/tiny    public: config.json and one model.safetensors whose header lists every tensor of a Llama with
               TINY_CONFIG's shapes (the data region reads as zeros; only the ranges asked for are sent)
  acme/sharded public: the same config, model.safetensors.index.json and two shards whose embedding and lm_head
               are padded to 1,100 rows (a checkpoint that disagrees with the config's vocab_size of 1,000)
  acme/tiny-gptq public: TINY_CONFIG quantized with GPTQ 4-bit g128 (quantization_config in config.json), one
               model.safetensors holding each linear as AutoGPTQ saves it (qweight, qzeros, scales, g_idx)
  acme/tiny-embed public: config.json and a sentence-transformers modules.json (vLLM serves it as a pooling model)
  acme/gated   401 GatedRepo unless the request carries `Authorization: Bearer good-token`
  acme/slow    answers after `delay` seconds (for timeouts)
  acme/deleted 404 RepoNotFound (what the hub answers an authenticated client)
  acme/broken  503 (an overloaded hub or a proxy's error page)
  anything else: 401 RepoNotFound, as the real hub answers for missing repositories
Plus `SilentServer`: a TCP port that accepts connections and never answers (a black hole for timeouts).
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

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


def llama_tensors(config: dict[str, Any], vocab_rows: int | None = None) -> dict[str, tuple[int, ...]]:
    """Every tensor of a Llama checkpoint with these dimensions (names and shapes as transformers saves them)."""
    h, inter, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    head_dim = h // config["num_attention_heads"]
    kv = config["num_key_value_heads"] * head_dim
    vocab = vocab_rows or config["vocab_size"]
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (vocab, h)}
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes |= {
            p + "self_attn.q_proj.weight": (h, h),
            p + "self_attn.k_proj.weight": (kv, h),
            p + "self_attn.v_proj.weight": (kv, h),
            p + "self_attn.o_proj.weight": (h, h),
            p + "mlp.gate_proj.weight": (inter, h),
            p + "mlp.up_proj.weight": (inter, h),
            p + "mlp.down_proj.weight": (h, inter),
            p + "input_layernorm.weight": (h,),
            p + "post_attention_layernorm.weight": (h,),
        }
    return shapes | {"model.norm.weight": (h,), "lm_head.weight": (vocab, h)}


class SafetensorsFile:
    """A safetensors file as the format defines it: an 8-byte little-endian header size, the JSON header (padded
    with spaces to 8 bytes) and the data. The data region is all zeros and never materialised."""

    def __init__(
        self,
        shapes: dict[str, tuple[int, ...]],
        dtype: str = "BF16",
        itemsize: int = 2,
        dtypes: dict[str, tuple[str, int]] | None = None,
    ) -> None:
        """`dtypes`: (dtype, item size) of the tensors stored in another dtype than `dtype`."""
        header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
        offset = 0
        for name, shape in shapes.items():
            kind, size = (dtypes or {}).get(name, (dtype, itemsize))
            for d in shape:
                size *= d
            header[name] = {"dtype": kind, "shape": list(shape), "data_offsets": [offset, offset + size]}
            offset += size
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)
        self.head = struct.pack("<Q", len(raw)) + raw
        self.size = len(self.head) + offset

    def read(self, start: int, end: int) -> bytes:
        """Bytes start..end inclusive (clamped to the file)."""
        end = min(end, self.size - 1)
        head = self.head[start : end + 1]
        return head + b"\0" * (end + 1 - start - len(head))


GPTQ_CONFIG = TINY_CONFIG | {
    "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}
}
_LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def gptq_checkpoint(config: dict[str, Any]) -> SafetensorsFile:
    """The Llama's linears as AutoGPTQ 4-bit g128 stores them: qweight [in/8, out] and qzeros [in/128, out/8] int32,
    scales [in/128, out] float16, g_idx [in] int32; embeddings, norms and lm_head stay float16."""
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, tuple[str, int]] = {}
    for name, shape in llama_tensors(config).items():
        module = name.removesuffix(".weight")
        if module.rsplit(".", 1)[-1] not in _LINEARS:
            shapes[name] = shape
            continue
        rows, cols = shape
        packed = {"qweight": (cols // 8, rows), "qzeros": (cols // 128, rows // 8), "g_idx": (cols,)}
        shapes |= {f"{module}.{k}": v for k, v in packed.items()} | {f"{module}.scales": (cols // 128, rows)}
        dtypes |= {f"{module}.{k}": ("I32", 4) for k in packed}
    return SafetensorsFile(shapes, "F16", 2, dtypes)


def _repos() -> dict[str, dict[str, bytes | SafetensorsFile]]:
    config = json.dumps(TINY_CONFIG).encode()
    shapes = llama_tensors(TINY_CONFIG, vocab_rows=1100)
    names = list(shapes)
    first = {n: shapes[n] for n in names if n.startswith(("model.embed_tokens", "model.layers.0.", "model.layers.1."))}
    second = {n: shapes[n] for n in names if n not in first}
    files = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    shards = [SafetensorsFile(first), SafetensorsFile(second)]
    index = {
        "metadata": {"total_size": sum(s.size - len(s.head) for s in shards)},
        "weight_map": {n: files[0] for n in first} | {n: files[1] for n in second},
    }
    return {
        "acme/tiny": {"config.json": config, "model.safetensors": SafetensorsFile(llama_tensors(TINY_CONFIG))},
        "acme/sharded": {
            "config.json": config,
            "model.safetensors.index.json": json.dumps(index).encode(),
            files[0]: shards[0],
            files[1]: shards[1],
        },
        "acme/tiny-gptq": {
            "config.json": json.dumps(GPTQ_CONFIG).encode(),
            "model.safetensors": gptq_checkpoint(TINY_CONFIG),
        },
        "acme/tiny-embed": {
            "config.json": config,
            "modules.json": b'[{"idx": 0, "name": "0", "path": "", '
            b'"type": "sentence_transformers.models.Transformer"}]',
        },
        "acme/gated": {"config.json": config},
        "acme/slow": {"config.json": config},
    }


REPOS = _repos()
_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


class HubHandler(BaseHTTPRequestHandler):
    """Serves the resolve route."""

    server: HubServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        del format, args

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        headers = dict(headers or {})
        length = headers.pop("Content-Length", str(len(body)))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", length)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self) -> None:
        rng = self.headers.get("Range")
        self.server.requests.append((self.command, self.path, self.headers.get("Authorization")))
        self.server.ranges.append((self.command, self.path, rng))
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
        if repo == "acme/broken":
            self._send(503, b"upstream unavailable")
            return
        if repo == "acme/deleted" or repo not in REPOS:
            status = 404 if repo == "acme/deleted" else 401
            self._send(status, b"missing", {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"})
            return
        if revision not in ("main", "v1", COMMIT):
            self._send(404, b"", {"X-Error-Code": "RevisionNotFound"})
            return
        content = REPOS[repo].get(filename)
        if content is None:
            self._send(404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT})
            return
        self._serve(repo, filename, content, rng)

    def _serve(self, repo: str, filename: str, content: bytes | SafetensorsFile, rng: str | None) -> None:
        size = len(content) if isinstance(content, bytes) else content.size
        etag = f"{repo}-{filename}-{size}".replace("/", "-")
        headers = {"ETag": f'"{etag}"', "X-Repo-Commit": COMMIT}
        m = _RANGE.fullmatch(rng or "")
        if m is None:
            if isinstance(content, SafetensorsFile) and self.command == "GET":
                self._send(400, b"this test server serves safetensors files by range only")  # never the weights
                return
            body = content if isinstance(content, bytes) else b""
            self._send(200, body, headers | {"Content-Length": str(size)})
            return
        start, end = int(m.group(1)), int(m.group(2) or size - 1)
        body = content[start : end + 1] if isinstance(content, bytes) else content.read(start, end)
        self._send(206, body, headers | {"Content-Range": f"bytes {start}-{start + len(body) - 1}/{size}"})

    do_GET = _handle
    do_HEAD = _handle


class HubServer(LocalServer):
    """The server plus a log of the requests it saw."""

    def __init__(self, delay: float = 3.0) -> None:
        super().__init__(HubHandler)
        self.requests: list[tuple[str, str, str | None]] = []
        self.ranges: list[tuple[str, str, str | None]] = []
        self.delay = delay


class SilentServer:
    """A loopback TCP port that accepts connections and never says a word (a hub that hangs)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def refused_url() -> str:
    """A loopback URL whose port nobody listens on (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
