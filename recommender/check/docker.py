"""`docker run` / `podman run` as the Docker CLI reads it (pure): options, the image, the command that replaces the
image's default one, `--entrypoint`, the GPUs the container gets and whether it has a usable /dev/shm.

The container sees only the variables passed with `-e`/`--env` (a host `export CUDA_VISIBLE_DEVICES=1` does not
reach it). `--gpus N` is a count, `--gpus all` every GPU, `--gpus device=0,1` those devices; `--gpus 0` is a count
of zero, which Docker turns into no device request at all, so the CUDA image's NVIDIA_VISIBLE_DEVICES=all stands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from recommender.check.images import devices_seen

# the options of `docker run` (docs.docker.com/reference/cli/docker/container/run) and of `podman run` (podman-run(1))
# that take a value as the next word: the first word after the options that is not such a value is the image
_VALUE_OPTIONS = frozenset({
    "-v", "--volume", "-p", "--publish", "-e", "--env", "--name", "--gpus", "--ipc", "--shm-size", "--runtime",
    "--network", "--net", "--network-alias", "--pid", "--cap-add", "--cap-drop", "--env-file", "--ulimit",
    "--entrypoint", "-w", "--workdir", "--mount", "--device", "--user", "-u", "--restart", "--add-host", "--label",
    "-l", "--label-file", "--hostname", "-h", "--log-driver", "--log-opt", "--security-opt", "--group-add",
    "--memory", "-m", "--memory-swap", "--memory-reservation", "--cpus", "--cpu-shares", "-c", "--cpuset-cpus",
    "--cpuset-mems", "--platform", "--health-cmd", "--health-interval", "--health-retries", "--health-timeout",
    "--health-start-period", "--tmpfs", "--volumes-from", "--dns", "--dns-option", "--dns-search", "--pull",
    "--stop-signal", "--stop-timeout", "--cidfile", "--cgroup-parent", "--cgroupns", "--ip", "--ip6", "--link",
    "--expose", "--mac-address", "--oom-score-adj", "--pids-limit", "--storage-opt", "--sysctl", "--userns",
    "--uts", "--volume-driver", "--isolation", "--annotation", "--attach", "-a", "--detach-keys", "--domainname",
    "--device-cgroup-rule", "--blkio-weight", "--kernel-memory", "--blkio-weight-device", "--cpu-period",
    "--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "--device-read-bps", "--device-read-iops",
    "--device-write-bps", "--device-write-iops", "--memory-swappiness", "--health-start-interval",
    "--link-local-ip", "--cpu-count", "--cpu-percent", "--io-maxbandwidth", "--io-maxiops",
    # podman-run(1)'s own: `--pod NAME` puts the container in a pod (`podman run -d --pod "$POD" ... IMAGE`)
    "--pod", "--pod-id-file", "--secret", "--arch", "--os", "--variant", "--authfile",
    "--decryption-key", "--cgroup-conf", "--cgroups", "--chrootdirs", "--conmon-pidfile", "--env-merge",
    "--gidmap", "--uidmap", "--subgidname", "--subuidname", "--group-entry", "--passwd-entry", "--hostuser",
    "--init-path", "--image-volume", "--personality", "--pidfile", "--preserve-fds", "--rdt-class", "--requires",
    "--retry", "--retry-delay", "--sdnotify", "--seccomp-policy", "--shm-size-systemd", "--timeout", "--tz",
    "--umask", "--unsetenv", "--health-on-failure", "--health-log-destination", "--health-max-log-count",
    "--health-max-log-size", "--health-startup-cmd", "--health-startup-interval", "--health-startup-retries",
    "--health-startup-success", "--health-startup-timeout",
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class DockerRun:
    """One `docker run`: the image, the words after it, the --entrypoint that replaces the image's, and facts."""

    image: str
    args: tuple[str, ...]
    entrypoint: str | None
    env: dict[str, str]  # what -e / --env passes into the container
    gpus: int | None  # GPUs the container gets (None: every GPU of the host, or not known)
    has_shm: bool  # --ipc=host or --shm-size
    mounts: tuple[tuple[str, str], ...] = ()  # bind mounts `-v HOST_PATH:CONTAINER_PATH[:opts]`, as written


def is_docker_run(words: tuple[str, ...] | list[str]) -> bool:
    """`docker run ...` (podman, nerdctl alike), or `"$ENGINE" run ...` with the engine chosen at run time; not
    `docker compose run SERVICE` (a compose service, compose_run.py)."""
    head = words[0].rsplit("/", 1)[-1] if words else ""
    engine = head in ("docker", "podman", "nvidia-docker", "nerdctl") or re.fullmatch(r"\$\{?\w+\}?", head)
    return bool(engine) and "run" in words[1:3] and "compose" not in words[1:2]


def docker_run(words: list[str], host_env: Mapping[str, str]) -> DockerRun | None:
    """Read `docker run [options] IMAGE [args]`; None when there is no image."""
    i = words.index("run") + 1
    env: dict[str, str] = {}
    opts: dict[str, str] = {}
    mounts: list[tuple[str, str]] = []
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        opt, eq, value = words[i].partition("=")
        if opt in _VALUE_OPTIONS and not eq:
            value = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        if opt in ("-e", "--env"):
            k, has, v = value.partition("=")
            if has:
                env[k] = v
            elif k in host_env:
                env[k] = host_env[k]  # `-e NAME` passes the host's value
        elif opt in ("--gpus", "--ipc", "--shm-size", "--entrypoint", "--runtime"):
            opts[opt] = value.strip("'\"")
        elif opt in ("-v", "--volume"):
            host, _, rest = value.partition(":")
            if "/" in host and rest:  # a path, not a named volume
                mounts.append((host, rest.split(":", 1)[0]))
        i += 1
    if i >= len(words):
        return None
    shm = opts.get("--ipc") == "host" or "--shm-size" in opts
    run = DockerRun(words[i], tuple(words[i + 1 :]), opts.get("--entrypoint"), env, _gpus(opts, env), shm)
    return replace(run, mounts=tuple(mounts))


def _gpus(opts: Mapping[str, str], env: Mapping[str, str]) -> int | None:
    visible = devices_seen(env)
    if visible is not None:
        return visible
    value = opts.get("--gpus", "")
    m = re.search(r"device=([\w,-]+)", value)
    if m:
        return len(m.group(1).split(","))
    m = re.fullmatch(r"(?:count=)?(\d+)(?:,.*)?", value)
    if m and int(m.group(1)) > 0:
        return int(m.group(1))
    return None
