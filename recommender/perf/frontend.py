"""The API server's admission of requests, as the replay sees it (pure, deterministic).

vLLM's OpenAI server runs every request's admission on one asyncio event loop: HTTP parsing and validation, the
chat template (rendered on the loop in 0.11: entrypoints/openai/serving_engine.py `_preprocess_chat` calls
`apply_hf_chat_template` synchronously; in a thread pool in 0.24: renderers/hf.py, which still holds the GIL),
tokenization (a worker thread) and `AsyncLLM.add_request` (v1/engine/async_llm.py). Each request's handler is a task
that runs until its next await and then waits at the back of the loop's ready queue behind every task that became
ready meanwhile, so requests that reach the server together advance a slice each per turn of the loop and reach the
engine together, once the whole group's work is done: the loop serves them round robin, not one after another.
That is processor sharing: each request needs `work` seconds of the server and, while n requests are being
admitted, gets 1/n of it. A burst of N requests reaches the engine at about N x work, all at once; a request that
arrives alone (a light Poisson load, one in flight) still takes `work`.

With equal work, processor sharing admits requests in the order they arrived, so one queue and a virtual clock
(the work each present request has received) replay it: O(1) per arrival and per admission.
"""

from __future__ import annotations

from collections import deque

_EPS = 1e-9  # seconds: an admission due at the clock's time counts as done (floating-point slack)


class Frontend:
    """Mutable admission state of one replayed run. Requests arrive in time order (non-decreasing `sent`)."""

    def __init__(self, work: float, latency: float) -> None:
        self.work = max(work, 0.0)  # seconds of the API server per request
        self.latency = latency  # every admitted request waits this long more, in parallel (not on the server)
        self.t = 0.0  # the server's clock: admissions are known up to here
        self.v = 0.0  # virtual time: the work each request present at the server has received
        self.pending: deque[tuple[float, int]] = deque()  # (virtual time at which it is admitted, request)
        self.admitted: deque[tuple[float, int]] = deque()  # (time it reaches the engine, request), in time order

    def arrive(self, sent: float, i: int) -> None:
        """Request i reaches the server at `sent`, no earlier than any request before it."""
        self.advance(sent)
        if not self.pending:
            self.v = 0.0
        self.pending.append((self.v + self.work, i))
        self.advance(sent)  # a request that needs no work is admitted at once

    def advance(self, now: float) -> None:
        """Run the server up to `now`, admitting every request whose work is done by then."""
        if now < self.t:
            return
        while self.pending:
            due, i = self.pending[0]
            done_at = self.t + (due - self.v) * len(self.pending)
            if done_at > now + _EPS:
                self.v += (now - self.t) / len(self.pending)
                break
            self.pending.popleft()
            self.t, self.v = done_at, due
            self.admitted.append((done_at + self.latency, i))
        self.t = max(self.t, now)

    def next_entry(self) -> float | None:
        """When the next request reaches the engine if no other arrives first (None: none on its way)."""
        if self.admitted:
            return self.admitted[0][0]
        if self.pending:
            due = self.pending[0][0]
            return self.t + (due - self.v) * len(self.pending) + self.latency
        return None

    def entered(self, now: float) -> list[int]:
        """The requests that have reached the engine by `now`, in order (each returned once)."""
        self.advance(now - self.latency)
        out: list[int] = []
        while self.admitted and self.admitted[0][0] <= now + _EPS:
            out.append(self.admitted.popleft()[1])
        return out
