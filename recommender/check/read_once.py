"""A folder's deployment read once (pure): a file that another file of the folder runs - the compose file of a
script's `docker compose up|run`, a script run by a script or a Makefile recipe (`./x.sh`) - is read as it runs it
(with its variables and arguments), not a second time on its own (with `.env` only, or `$1` unset), which would show
one deployment as two servers, the second in a configuration nobody starts.

A compose file's service the script does not start (`docker compose run vllm-a` of a file that has vllm-b too) is
still read on its own; files that run each other in a ring no other file enters keep their own readings (no reading
wins).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recommender.check.found import Found


def read_once(found: Sequence[Found], file_of: Callable[[str], str | None]) -> tuple[list[Found], list[str]]:
    """(the servers, less those of a file another file's servers were read through, notes naming which);
    `file_of(path or source label)` is the resolved path of a file of the folder (None: not one)."""
    runners: dict[str, dict[str, list[Found]]] = {}  # file run -> the file running it -> the servers read so
    for f in found:
        caller = file_of(f.source.split(" [", 1)[0])
        for path in f.through:
            run = file_of(path)
            if caller is not None and run is not None and run != caller:
                runners.setdefault(run, {}).setdefault(caller, []).append(f)
    started = _started_from_outside(runners, {file_of(f.source.split(" [", 1)[0]) for f in found})
    kept: list[Found] = []
    notes: dict[str, str] = {}
    for f in found:
        own = file_of(f.source)
        # the note names a file no other runs first (start.sh, rather than a script of the ring it enters)
        callers = sorted((c for c in runners.get(own or "", {}) if c in started), key=lambda c: c in runners)
        by = [s for c in callers for s in runners[own or ""][c] if _same_server(f, s)]
        if not by:
            kept.append(f)
            continue
        notes.setdefault(f.source, f"{f.source}: read as run by {by[0].source.split(' [', 1)[0]}")
    return kept, list(notes.values())


def _started_from_outside(runners: dict[str, dict[str, list[Found]]], files: set[str | None]) -> set[str]:
    """The files whose own reading stands for how they are started: those no other file runs, and those that such a
    file runs, however far along. A file run only from within a ring of files that run each other (two scripts
    running each other, ten sourcing the next) is started by none of them first: each keeps its own reading."""
    started = {f for f in files if f is not None and f not in runners}
    grew = True
    while grew:
        more = {run for run, callers in runners.items() if run not in started and started.intersection(callers)}
        started |= more
        grew = bool(more)
    return started


def _same_server(own: Found, run: Found) -> bool:
    """Whether the server a file gives on its own is one the file running it reads: a compose service by its name
    (a script may start some of the file's services only); a script's servers all (its commands run)."""
    return not own.resource.startswith("service/") or own.resource == run.resource
