"""The launchers around a command in a script (pure): `exec`, `nohup`, `env A=1`, `timeout`, `sudo`, `srun`,
`uv run`, `conda run`, `apptainer exec`, `ray job submit --`, `docker exec CONTAINER`, ... are stripped so the
command itself (`vllm serve ...`) is what is read, keeping the variables they set for it (`env`, `sudo VAR=value`,
`docker exec -e VAR=value`, and the CUDA_VISIBLE_DEVICES Slurm gives a job step that asks for GPUs)."""

from __future__ import annotations

import re

from recommender.check.slurm_options import gpu_request

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)

_SRUN_VALUE_OPTIONS = frozenset({
    "-N", "-n", "-w", "-c", "-p", "-J", "-t", "-o", "-e", "-G", "-A", "-q", "-x", "--nodes", "--ntasks", "--nodelist",
    "--partition", "--job-name", "--time", "--output", "--error", "--gpus", "--account", "--qos", "--exclude",
    "--cpus-per-task", "--mem", "--gres", "--ntasks-per-node", "--gpus-per-node", "--gpus-per-task",
    "--container-image", "--container-mounts", "--export", "--mpi",
})  # fmt: skip
# prefix -> (options that take a value, positional words before the command)
_PREFIXES: dict[str, tuple[frozenset[str], int]] = {
    "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset(), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"}), 0),
    "nice": (frozenset({"-n"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "taskset": (frozenset({"-c"}), 0),
    "numactl": (frozenset({"-C", "-N", "-m", "-p", "-i"}), 0),
    "chrt": (frozenset(), 1),
    "srun": (_SRUN_VALUE_OPTIONS, 0),
    "uv": (frozenset({"--with", "--python", "-p", "--project", "--directory", "--env-file"}), 0),
    "poetry": (frozenset(), 0),
    "pixi": (frozenset({"-e", "--environment"}), 0),
    "conda": (frozenset({"-n", "--name", "-p", "--prefix"}), 0),
    "mamba": (frozenset({"-n", "--name", "-p", "--prefix"}), 0),
    "micromamba": (frozenset({"-n", "--name", "-p", "--prefix"}), 0),
    "apptainer": (frozenset({"-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir"}), 1),
    "singularity": (frozenset({"-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir"}), 1),
    "systemd-run": (frozenset({"-p", "--property", "-u", "--unit", "--slice", "-E", "--setenv"}), 0),
}
_SUBCOMMANDS = {"uv": "run", "poetry": "run", "pixi": "run", "conda": "run", "mamba": "run", "micromamba": "run",
                "apptainer": "exec", "singularity": "exec"}  # fmt: skip


def strip_prefixes(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """`exec nohup env A=1 timeout 5m srun -N 1 vllm ...` -> (['vllm', ...], {'A': '1'})."""
    env: dict[str, str] = {}
    while argv:
        head = argv[0].rsplit("/", 1)[-1]
        if head == "env":
            argv = argv[1:]
            while argv and (argv[0].startswith("-") or _ASSIGN.match(argv[0])):
                m = _ASSIGN.match(argv[0])
                if m:
                    env[m.group(1)] = m.group(2)
                argv = argv[1:]
        elif head == "ray" and argv[1:3] == ["job", "submit"] and "--" in argv:
            argv = argv[argv.index("--") + 1 :]  # `ray job submit [options] -- vllm serve ...`
        elif head in _CONTAINER_ENGINES and argv[1:2] == ["exec"]:
            argv, set_there = _container_exec(argv[2:])
            env |= set_there
        elif head in _PREFIXES and (head not in _SUBCOMMANDS or argv[1:2] == [_SUBCOMMANDS[head]]):
            if head == "srun":
                env |= _srun_visible(argv[1:])
            argv = _skip_options(argv[2:] if head in _SUBCOMMANDS else argv[1:], *_PREFIXES[head])
            while head == "sudo" and argv and _ASSIGN.match(argv[0]):  # `sudo VAR=value cmd` sets it for cmd
                m = _ASSIGN.match(argv[0])
                assert m is not None
                env[m.group(1)] = m.group(2)
                argv = argv[1:]
        else:
            break
    return argv, env


# `docker exec [OPTIONS] CONTAINER COMMAND [ARG...]` runs COMMAND in a running container (docs.docker.com/reference/
# cli/docker/container/exec: -e/--env, --env-file, -u/--user, -w/--workdir, --detach-keys take a value; podman and
# nerdctl take the same form)
_CONTAINER_ENGINES = ("docker", "podman", "nerdctl")
_EXEC_VALUE_OPTIONS = frozenset({"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"})


def _container_exec(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """(COMMAND [ARG...], the variables `-e NAME=value` sets for it) of `docker exec`'s options and arguments."""
    env: dict[str, str] = {}
    while argv and argv[0].startswith("-") and argv[0] != "-":
        name, eq, value = argv[0].partition("=")
        if not eq and name in _EXEC_VALUE_OPTIONS:
            value, argv = (argv[1] if len(argv) > 1 else ""), argv[1:]
        m = _ASSIGN.match(value) if name in ("-e", "--env") else None
        if m:
            env[m.group(1)] = m.group(2)
        argv = argv[1:]
    return argv[1:], env  # the container's name, then the command


def _srun_visible(argv: list[str]) -> dict[str, str]:
    """The CUDA_VISIBLE_DEVICES Slurm sets for a job step whose options ask for GPUs (`srun --gres=gpu:2 cmd`: the
    step's 2 GPUs, numbered from 0 inside its cgroup); nothing when they ask for none."""
    opts: dict[str, str] = {}
    while argv and argv[0].startswith("-") and argv[0] != "--":
        name, eq, value = argv[0].partition("=")
        if not eq and name in _SRUN_VALUE_OPTIONS:
            value, argv = (argv[1] if len(argv) > 1 else ""), argv[1:]
        elif not eq and re.fullmatch(r"-[A-Za-z]\d+", name):  # -n1, -N2
            name, value = name[:2], name[2:]
        opts[name] = value
        argv = argv[1:]
    per_node = gpu_request(opts)[1]
    return {"CUDA_VISIBLE_DEVICES": ",".join(map(str, range(per_node)))} if per_node else {}


def _skip_options(argv: list[str], takes_value: frozenset[str], positional: int) -> list[str]:
    while argv and argv[0].startswith("-") and argv[0] != "-":
        if argv[0] == "--":
            argv = argv[1:]
            break
        argv = argv[2:] if argv[0] in takes_value else argv[1:]
    return argv[positional:]
