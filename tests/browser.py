"""Headless Chromium over the DevTools protocol (websocket-client, no other dependency): open a page, collect its
console errors and network requests, measure its SVG charts and take a screenshot.

Debian's `chromium` package; `.ci/run` installs it when missing.
"""

from __future__ import annotations

import base64
import json
import shutil
import struct
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1000,1200",
)

# Every chart: its size on the page, how many data marks it has and how many drew with a non-zero box,
# and the hover text of each mark.
MEASURE_CHARTS = """
JSON.stringify(Array.from(document.querySelectorAll('svg.chart')).map(svg => {
  const box = svg.getBoundingClientRect();
  const marks = Array.from(svg.querySelectorAll('[data-role="segment"], [data-role="series"]'));
  const drawn = marks.filter(m => { const b = m.getBBox(); return b.width > 0 && (b.height > 0 || m.tagName === 'polyline'); });
  return {id: svg.id, width: box.width, height: box.height, marks: marks.length, drawn: drawn.length,
          titles: marks.map(m => (m.querySelector('title') || {}).textContent || '')};
}))
"""


def chromium_binary() -> str | None:
    """The Chromium executable, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk; raises on anything that is not a PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@dataclass
class PageResult:
    """What one page did in the browser."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL requested besides the page itself
    charts: list[dict[str, Any]] = field(default_factory=list)
    screenshot: bytes = b""


class Browser:
    """One headless Chromium for several pages (each page in its own target, over one websocket)."""

    def __init__(self, binary: str, profile: Path) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port, path = port_file.read_text().splitlines()[:2]
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=20, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def close(self) -> None:
        """Close the connection and end the browser process this object started."""
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """One DevTools command; events that arrive meanwhile are kept in `events`."""
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self.events.append(reply)

    def _wait_for(self, method: str, session: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(method)
            self.events.append(json.loads(self.ws.recv()))

    def _tab(self) -> str:
        """One tab reused for every page (a new target per page costs more than the page)."""
        if self.session is None:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.send(f"{domain}.enable", session=self.session)
        return self.session

    def open(self, page: Path) -> PageResult:
        """Load a file, let it settle, and report what it did."""
        url = page.resolve().as_uri()
        session = self._tab()
        self.events = []
        self.send("Page.navigate", {"url": url}, session)
        self._wait_for("Page.loadEventFired", session)
        charts = json.loads(self.send("Runtime.evaluate", {"expression": MEASURE_CHARTS}, session)["result"]["value"])
        shot = self.send("Page.captureScreenshot", {"format": "png"}, session)  # the viewport: a full page is slow
        result = PageResult(url, charts=charts, screenshot=base64.b64decode(shot["data"]))
        for e in (e for e in self.events if e.get("sessionId") == session):
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert", "warning"):
                result.console_errors.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif e["method"] == "Runtime.exceptionThrown":
                result.console_errors.append(p["exceptionDetails"].get("text", "exception"))
            elif e["method"] == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                result.console_errors.append(p["entry"]["text"])
            elif e["method"] == "Network.requestWillBeSent" and p["request"]["url"] != url:
                result.requests.append(p["request"]["url"])
        return result
