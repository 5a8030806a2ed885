"""The GPUs a Slurm allocation (`#SBATCH`) or job step (`srun`) requests, from its options (pure).

`--gpus-per-node=[type:]N`, `--gres=gpu[:type]:N` (per node), `--gpus-per-task=[type:]N` times the tasks per node
(`--ntasks-per-node`, else `--ntasks` over the nodes, else 1), or `--gpus`/`-G [type:]N` spread over the nodes.
`--gres` is a comma-separated list of `name[[:type]:count]` (sbatch(1)): the type is whatever the site's gres.conf
names (`80g`, `a100_80gb`), so it may start with a digit, and a `gpu` entry without a count asks for one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping


def gpu_request(opts: Mapping[str, str]) -> tuple[str | None, int | None, int]:
    """(GPU type, GPUs per node, nodes) the options ask for; the count is None when they name no GPUs."""
    nodes = _int(opts.get("--nodes") or opts.get("-N") or "1") or 1
    kind, per_node = _typed_count(opts.get("--gpus-per-node", ""))
    if per_node is None:
        kind, per_node = _gres_gpus(opts.get("--gres", ""))
    if per_node is None and opts.get("--gpus-per-task"):
        kind, per_task = _typed_count(opts["--gpus-per-task"])
        per_node = per_task * tasks if per_task is not None and (tasks := _tasks_per_node(opts, nodes)) else None
    if per_node is None and (opts.get("--gpus") or opts.get("-G")):
        kind, total = _typed_count(opts.get("--gpus") or opts.get("-G") or "")
        per_node = total // nodes if total and total % nodes == 0 else None
    return kind, per_node, nodes


def _gres_gpus(value: str) -> tuple[str | None, int | None]:
    """The `gpu` entry of a `--gres` list: (type, count); (None, None) when the list names no GPUs."""
    for item in re.sub(r"\([^)]*\)", "", value).split(","):  # `(S:0-1)`: the sockets, not the request
        name, *parts = item.strip().removeprefix("gres/").split(":")
        if name != "gpu":
            continue
        if parts and parts[-1].isdigit():
            return (parts[0] if len(parts) > 1 else None), int(parts[-1])
        return (parts[0] if parts else None), (1 if len(parts) <= 1 else None)
    return None, None


def _tasks_per_node(opts: Mapping[str, str], nodes: int) -> int | None:
    if opts.get("--ntasks-per-node"):
        return _int(opts["--ntasks-per-node"])
    total = _int(opts.get("--ntasks") or opts.get("-n") or "1")
    return total // nodes if total and total % nodes == 0 else None


def _typed_count(value: str) -> tuple[str | None, int | None]:
    m = re.fullmatch(r"(?:([A-Za-z][\w.-]*):)?(\d+)", value.strip())
    return (m.group(1), int(m.group(2))) if m else (None, None)


def _int(text: str) -> int | None:
    m = re.match(r"^(\d+)", text)
    return int(m.group(1)) if m else None
