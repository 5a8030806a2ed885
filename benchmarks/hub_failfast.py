"""How long `vllm-plan` takes to say the hub is unreachable, with the default timeouts a user has.

    python benchmarks/hub_failfast.py [--baseline]

Times `vllm-plan explain some/model --gpu l4` in fresh processes against: a refused port, a port that accepts and
never answers, a host name that does not resolve (`.invalid`), and HF_HUB_OFFLINE=1 with an empty cache. Prints
the wall time, exit code and how many lines went to stderr. `--baseline` also times huggingface_hub's own
`hf_hub_download` on the refused port (its retries: about 25 s), for comparison.

A server that accepts and never answers costs vllm-plan's 1.5 s probe plus, once a day unless
HF_HUB_DISABLE_TELEMETRY=1, the 3 s huggingface_hub (>= 2.x) spends fetching its agent registry for the User-Agent.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

from recommender.console import run_script


def _refused() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _silent() -> tuple[str, socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(sock.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{sock.getsockname()[1]}", sock


def _time(cmd: list[str], env: dict[str, str]) -> tuple[float, int, int]:
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    return time.perf_counter() - start, r.returncode, len(r.stderr.splitlines())


def main(baseline: bool) -> int:
    silent_url, silent_sock = _silent()
    cases = {
        "refused port": {"HF_ENDPOINT": _refused()},
        "silent server": {"HF_ENDPOINT": silent_url},
        "unresolvable host": {"HF_ENDPOINT": "https://hub.invalid"},
        "HF_HUB_OFFLINE=1, empty cache": {"HF_HUB_OFFLINE": "1"},
    }
    cli = [sys.executable, "-m", "recommender", "explain", "someorg/not-cached", "--gpu", "l4"]
    with tempfile.TemporaryDirectory() as home:
        base = {k: v for k, v in os.environ.items() if not k.startswith("HF_")} | {"HF_HOME": home}
        for name, extra in cases.items():
            seconds, code, lines = _time(cli, base | extra)
            print(f"vllm-plan, {name:32} {seconds:6.2f} s   exit {code}   {lines} stderr line(s)")
        if baseline:
            code = "from huggingface_hub import hf_hub_download as d; d('someorg/not-cached', 'config.json')"
            seconds, rc, lines = _time([sys.executable, "-c", code], base | cases["refused port"])
            print(f"hf_hub_download alone, refused port   {seconds:6.2f} s   exit {rc}   {lines} stderr line(s)")
    silent_sock.close()
    return 0


if __name__ == "__main__":
    run_script(lambda: main("--baseline" in sys.argv[1:]))
