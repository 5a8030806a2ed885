"""The API server's admission of requests (recommender/perf/frontend.py): processor sharing of the event loop.
Numbers are derived by hand in the comments."""

from __future__ import annotations

import pytest

from recommender.perf.frontend import Frontend


def _admit(front: Frontend, until: float) -> list[tuple[float, int]]:
    """Every (entry time, request) up to `until`, in order."""
    out = []
    while (t := front.next_entry()) is not None and t <= until:
        out += [(t, i) for i in front.entered(t)]
    return out


def test_a_burst_reaches_the_engine_together_after_all_its_work() -> None:
    # 5 requests at t=0 needing 2 ms each share the loop: each has its 2 ms at 5 x 2 = 10 ms, then the fixed 40 ms
    # latency; served one after another they would have entered at 42, 44, ..., 50 ms
    front = Frontend(0.002, 0.040)
    for i in range(5):
        front.arrive(0.0, i)
    assert front.next_entry() == pytest.approx(0.050)
    assert front.entered(0.0499) == []
    assert front.entered(0.050) == [0, 1, 2, 3, 4]
    assert front.next_entry() is None


def test_overlapping_requests_share_the_server() -> None:
    # work 2 s, arrivals at 0 and 1: alone, A has 1 s done at t=1; then each gets half the server, so A's last second
    # takes 2 s (done at 3) while B gets 1 s; B's last second runs alone (done at 4) = the 4 s of work in all
    front = Frontend(2.0, 0.0)
    front.arrive(0.0, 0)
    front.arrive(1.0, 1)
    assert _admit(front, 10.0) == [(pytest.approx(3.0), 0), (pytest.approx(4.0), 1)]


def test_a_request_alone_takes_its_own_work() -> None:
    front = Frontend(2.0, 0.5)
    front.arrive(0.0, 0)
    front.arrive(10.0, 1)  # the server has been idle since t=2
    assert _admit(front, 20.0) == [(pytest.approx(2.5), 0), (pytest.approx(12.5), 1)]


def test_the_next_entry_is_recomputed_when_a_request_arrives() -> None:
    # two at t=0 needing 1 s each would be done at 2; a third at t=1 (each of the two has 0.5 s done) slows them:
    # 0.5 s more each at a third of the server = 1.5 s, so done at 2.5; the third has 0.5 s done by then and its
    # last 0.5 s alone ends at 3.0 = the 3 s of work in all
    front = Frontend(1.0, 0.0)
    front.arrive(0.0, 0)
    front.arrive(0.0, 1)
    assert front.next_entry() == pytest.approx(2.0)
    front.arrive(1.0, 2)
    assert front.next_entry() == pytest.approx(2.5)
    assert _admit(front, 10.0) == [(pytest.approx(2.5), 0), (pytest.approx(2.5), 1), (pytest.approx(3.0), 2)]


def test_no_work_admits_at_arrival() -> None:
    front = Frontend(0.0, 0.01)
    front.arrive(0.0, 0)
    front.arrive(0.0, 1)
    front.arrive(3.0, 2)
    assert _admit(front, 10.0) == [(pytest.approx(0.01), 0), (pytest.approx(0.01), 1), (pytest.approx(3.01), 2)]
