"""Find vLLM servers in command lines, scripts and container commands (pure): `vllm serve`, `python -m
vllm.entrypoints.openai.api_server`, `sh -c SCRIPT`, `docker run` of a vLLM image (with its --entrypoint), and
Kubernetes manifests a script feeds to `kubectl apply -f -` through a here-document.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from recommender.check import compose_run, shell
from recommender.check.docker import DockerRun, docker_run, is_docker_run
from recommender.check.found import Found
from recommender.check.images import (
    calls_a_server,
    cpu_backend,
    devices_seen,
    env_platform,
    has_vllms_entrypoint,
    image_cmd_placeholder,
    image_tag,
    is_vllm_image,
    other_platform,
)
from recommender.check.launchers import strip_prefixes
from recommender.check.script_units import is_started_unit
from recommender.check.shell_exec import runs_in_a_shell

_API_SERVERS = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")
# programs that run a vLLM engine from vLLM's own engine flags (`--model M --tensor-parallel-size 2 ...`) plus some of
# their own: NVIDIA Dynamo's vLLM worker
_ENGINE_WRAPPERS = ("dynamo.vllm",)
_PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")
# `python -c "from vllm.scripts import main; import sys; sys.exit(main())" serve ...`: vLLM's CLI entry point called
# from Python code (vllm.scripts re-exports vllm.entrypoints.cli.main.main); the words after the code are its argv
_CLI_MAIN_CODE = re.compile(r"from\s+vllm\.(?:scripts|entrypoints\.cli\.main)\s+import\s+main\b.*\bmain\(\)", re.S)
_SHELLS = ("sh", "bash", "dash", "ash", "zsh")
# programs a container's command runs that are not arguments of vLLM's server: an image only named after vLLM (not
# vllm/vllm-openai, whose ENTRYPOINT is known) with `command: ray start --block` (a Ray worker of a vLLM cluster on
# eugr/spark-vllm-docker's `vllm-node`) runs Ray, as `vllm serve ...` there runs vLLM: its entrypoint execs the command
_OTHER_PROGRAMS = frozenset({
    "ray", "sleep", "tail", "jupyter", "jupyter-lab", "uvicorn", "gunicorn", "torchrun", "accelerate", "deepspeed",
    "huggingface-cli", "hf", "nvidia-smi", "echo", "cat", "true", "env", "printenv", "pip", "pip3", "uv",
})  # fmt: skip
# `--device hpu` (older vLLM releases): a device vLLM's CUDA memory model does not describe
_OTHER_DEVICES = ("cpu", "hpu", "xpu", "tpu", "neuron", "openvino")

# Docker appends a container's command (CMD, Compose `command`, `docker run IMAGE ARGS`) to its ENTRYPOINT, and
# Kubernetes its `args` to its `command` (or the image's ENTRYPOINT): what runs is the two joined (Dockerfile
# reference, "Understand how CMD and ENTRYPOINT interact"; Kubernetes, "Define a Command and Arguments for a Container")
_REPEATED_VLLM = (
    "the entrypoint `vllm` and a command starting `vllm serve` run `vllm vllm serve ...`, which vLLM's CLI refuses "
    "(invalid choice: 'vllm'); fix: drop the leading `vllm` from the command"
)
_REPEATED_SERVE = (
    "vLLM's image already runs its server as its ENTRYPOINT, so a command starting `vllm serve` runs `vllm serve "
    "vllm serve ...` (the api_server module with `vllm serve ...` in older tags), which vLLM refuses (unrecognized "
    "arguments); fix: drop `vllm serve` from the command (args), keeping the model and flags"
)

ManifestReader = Callable[[str, str], list[Found]]  # (YAML text, source) -> servers, for kubectl here-documents
# (unit text, source, the unit's path, the files the script wrote) -> servers, for a systemd unit a script starts
UnitReader = Callable[[str, str, str, Mapping[str, str]], list[Found]]


@dataclass(frozen=True, slots=True)
class Hit:
    """A vLLM server found in some words: its `vllm serve` argv, whether it is the serve form (else the
    api_server form, whose --model is not moved), the environment it runs with, what stayed unresolved."""

    argv: tuple[str, ...]
    serve: bool
    env: Mapping[str, str] = field(default_factory=dict)
    unresolved: tuple[str, ...] = ()
    docker: DockerRun | None = None
    platform: str | None = None  # why the script runs it on no NVIDIA GPU (a vLLM-Metal venv it activated)
    problems: tuple[str, ...] = ()  # why vLLM refuses the command line whatever its flags (`vllm vllm serve ...`)
    through: tuple[str, ...] = ()  # the script files run on the way to it (shell.Command.through)


def vllm_argv(words: list[str] | tuple[str, ...]) -> tuple[list[str], bool] | None:
    """(`vllm serve ...` argv, serve form?) when these words run vLLM's OpenAI server, else None: not with
    `--help` / `-h` / `--help=GROUP`, which prints the options and exits (argparse; vLLM's FlexibleArgumentParser),
    as an image's default `CMD ["serve", "--help"]` does."""
    found = _vllm_argv(words)
    if found is not None and any(w in ("--help", "-h") or w.startswith("--help=") for w in found[0][2:]):
        return None
    return found


def _vllm_argv(words: list[str] | tuple[str, ...]) -> tuple[list[str], bool] | None:
    words = list(words)
    if not words:
        return None
    head = words[0].rsplit("/", 1)[-1]
    if head == "vllm" and words[1:2] == ["serve"]:
        return ["vllm", "serve", *words[2:]], True
    # a Python interpreter, or one named by a variable set elsewhere (`$PY -m vllm.entrypoints.openai.api_server`)
    if _PYTHON.match(head) or (words[0].startswith("$") and words[1:2] == ["-m"]):
        for i in range(1, len(words) - 1):
            if words[i] == "-m" and words[i + 1] in _API_SERVERS:
                return ["vllm", "serve", *words[i + 2 :]], False
            if words[i] == "-m" and words[i + 1] in _ENGINE_WRAPPERS:
                return ["vllm", "serve", *engine_flags(words[i + 2 :])], False
            cli = (words[i] == "-m" and words[i + 1] == "vllm.entrypoints.cli.main") or (
                words[i] == "-c" and bool(_CLI_MAIN_CODE.search(words[i + 1]))
            )
            if cli and words[i + 2 : i + 3] == ["serve"]:
                return ["vllm", "serve", *words[i + 3 :]], True
        script = _script_operand(words)
        if (
            script is not None
            and words[script].rsplit("/", 1)[-1] == "vllm"
            and words[script + 1 : script + 2] == ["serve"]
        ):
            return ["vllm", "serve", *words[script + 2 :]], True
    return None


def starts_a_command(words: Sequence[str]) -> bool:
    """Words that begin a command line a server is started with, as users paste one: `vllm ...`, a Python
    interpreter (`python3 -m vllm.entrypoints.openai.api_server ...`), `docker run ...` (podman, nerdctl alike),
    each perhaps behind `sudo`; not a model id, a file or a flag."""
    words = list(words)
    if words[:1] == ["sudo"]:
        words = words[1:]
    head = words[0].rsplit("/", 1)[-1] if words else ""
    return head == "vllm" or bool(_PYTHON.match(head)) or (is_docker_run(words) and not head.startswith("$"))


def _script_operand(words: list[str]) -> int | None:
    """Where the script an interpreter runs sits in `python [options] SCRIPT [args]` (python(1): options come before
    the script; -c/-m end them, -W/-X take a value), or None. `/venv/bin/python3 /venv/bin/vllm serve ...` runs the
    `vllm` console script (vLLM's pyproject.toml: vllm = "vllm.entrypoints.cli.main:main"): vLLM's CLI."""
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("-c", "-m") or word == "-":
            return None
        if word in ("-W", "-X"):
            i += 2
            continue
        if word.startswith("-") and len(word) > 1:
            i += 1
            continue
        return i
    return None


def engine_flags(words: list[str]) -> list[str]:
    """A wrapper's command line without its own options (those vLLM does not have, with the words after them):
    `--model M --is-prefill-worker --connector nixl -tp 2` -> `--model M -tp 2`."""
    from recommender.vllm_flags import default_flag_table

    options = default_flag_table().options
    out: list[str] = []
    own = False
    for word in words:
        if word.startswith("-") and len(word) > 1 and not word[1:2].isdigit():
            own = word.split("=", 1)[0] not in options
        if not own:
            out.append(word)
    return out


def find_in_words(
    words: list[str] | tuple[str, ...],
    env: Mapping[str, str],
    unresolved: tuple[str, ...],
    image: str | None,
    *,
    vllm_entrypoint: bool | None = None,
    platform: tuple[str, ...] = (),
) -> list[Hit]:
    """Servers in a container's argv: directly, through `sh -c SCRIPT`, or the image's own entrypoint (`image` is
    given only when the words are arguments to the image's entrypoint, i.e. no command replaces it; that
    entrypoint runs vLLM when the image is a vLLM one, or when the caller knows it does). `platform` names the
    variables the platform sets in the pod at run time (LeaderWorkerSet's LWS_WORKER_INDEX): a branch on one of
    them is read as one of the pod's roles."""
    if image is not None and vllm_entrypoint is not False and has_vllms_entrypoint(image):
        if [w.rsplit("/", 1)[-1] for w in words[:1]] == ["vllm"] and words[1:2] == ["serve"]:
            # the image's ENTRYPOINT already runs vLLM's server (`vllm serve`, or the api_server module in older
            # tags) and Docker / the kubelet append these words to it: `vllm serve vllm serve ...`, refused either way
            return [Hit(("vllm", "serve", *words[2:]), True, dict(env), unresolved, problems=(_REPEATED_SERVE,))]
        if vllm_entrypoint is None:
            # arguments of vLLM's own image's entrypoint, whatever they hold: `command: /bin/sh -c "..."` on it is
            # `vllm serve /bin/sh -c ...`, which vLLM refuses
            return [Hit(("vllm", "serve", *words), True, dict(env), unresolved)]
    words, more = strip_prefixes(list(words))
    env = {**env, **more}
    if [w.rsplit("/", 1)[-1] for w in words[:2]] == ["vllm", "vllm"] and words[2:3] == ["serve"]:
        # an entrypoint `vllm` (ENTRYPOINT ["vllm"], `entrypoint: vllm`, `command: ["vllm"]`) followed by a command
        # or args that start with `vllm serve`: Docker and the kubelet append them, and vLLM's CLI has no `vllm`
        # subcommand
        return [Hit(("vllm", "serve", *words[3:]), True, dict(env), unresolved, problems=(_REPEATED_VLLM,))]
    hit = vllm_argv(words)
    if hit:
        return [Hit(tuple(hit[0]), hit[1], dict(env), unresolved)]
    head = words[0].rsplit("/", 1)[-1] if words else ""
    if head in _SHELLS and len(words) >= 2:
        script_index = next((i for i, w in enumerate(words[1:], 1) if not w.startswith("-")), None)
        flags = "".join(w.lstrip("-") for w in words[1 : script_index or len(words)])
        if "c" in flags and script_index is not None:  # `sh -c SCRIPT [NAME [ARG...]]`: $0, then "$@"
            args = words[script_index + 1 :] or [words[0]]
            hits = find_in_script(words[script_index], env, args, platform)
            return [h for h in hits if isinstance(h, Hit)]
    if image is not None and (vllm_entrypoint if vllm_entrypoint is not None else is_vllm_image(image)):
        if vllm_entrypoint is None and (_PYTHON.match(head) or head in _OTHER_PROGRAMS):
            return []  # an image only named after vLLM, its command another program (`ray start --block`)
        if not words and image_cmd_placeholder(image) and calls_a_server(env):
            return []  # an image named after vLLM, run as it is, configured with a server to call: a client of one
        args = words[1:] if head == "serve" else words
        return [Hit(("vllm", "serve", *args), True, dict(env), unresolved)]
    return []


def find_in_script(
    script: str,
    env: Mapping[str, str],
    args: list[str] | None = None,
    platform: tuple[str, ...] = (),
    origin: shell.Origin | None = None,
) -> list[Hit | shell.Command]:
    """Servers a script starts (and the `kubectl apply -f -` commands that read a here-document, for the caller);
    `args` are its $0 $1 ... when known; `platform` as in find_in_words; `origin` as in shell.run_script."""
    out: list[Hit | shell.Command] = []
    metal: str | None = None
    kept: list[tuple[tuple[tuple[int, int], ...], Hit]] = []
    for cmd in shell.run_script(script, env, args, platform, origin):
        metal = metal or metal_venv(cmd.words, cmd.env)
        hits: list[Hit] = []
        hit = vllm_argv(cmd.words)
        if hit:
            hits = [Hit(tuple(hit[0]), hit[1], dict(cmd.env), cmd.unresolved, platform=metal)]
        elif is_docker_run(cmd.words):
            hits = _docker_hits(cmd, origin)
        elif (cmd.stdin is not None and _is_kubectl_apply(cmd.words)) or compose_run.is_compose_run(cmd.words):
            out.append(cmd)  # read by the caller: a manifest it applies, a compose service it runs
        elif is_started_unit(cmd.words, cmd.stdin):
            out.append(cmd)  # read by the caller: a systemd unit it wrote and starts
        elif cmd.words and cmd.words[0].rsplit("/", 1)[-1] in _SHELLS:  # `apptainer exec IMG bash -lc "..."`
            hits = find_in_words(cmd.words, cmd.env, cmd.unresolved, None, platform=platform)
        hits = [h for h in hits if not _found_in_another_branch(h, cmd.alternative, kept)]
        kept += [(cmd.alternative, h) for h in hits]
        out += [replace(h, through=cmd.through) for h in hits] if cmd.through else hits
    return out


def _found_in_another_branch(
    hit: Hit, alternative: tuple[tuple[int, int], ...], kept: list[tuple[tuple[tuple[int, int], ...], Hit]]
) -> bool:
    """Whether the same server was found in another branch of an undecided `if`/`case` this one is in (`if command
    -v vllm; then exec vllm serve M ...; else exec python -m vllm.entrypoints.openai.api_server --model M ...; fi`):
    bash runs one branch, so one command line in two of them is one server, not two. The serve form's positional
    model and the api_server's leading `--model` are the same words; anything else differing keeps both."""
    line = _command_line(hit)
    for where, other in kept:
        apart = any(s == t and b != c for s, b in alternative for t, c in where)
        if apart and _command_line(other) == line and (other.env, other.docker) == (hit.env, hit.docker):
            return True
    return False


def _command_line(hit: Hit) -> tuple[str, ...]:
    args = hit.argv[2:]
    if hit.serve and args and not args[0].startswith("-"):  # `vllm serve M`: the model as the api_server takes it
        return ("--model", *args)
    return tuple(args)


# vllm-project/vllm-metal's install.sh makes the venv `.venv-vllm-metal` (in $HOME, or in its checkout) and tells
# the user to `source $venv/bin/activate` or put `$venv/bin` on PATH: vLLM there runs on Apple silicon (Metal/MLX)
_METAL_VENV = re.compile(r"vllm[-_]metal(?![\w-])")


def metal_venv(words: tuple[str, ...] | list[str], env: Mapping[str, str]) -> str | None:
    """Why what a script runs from here on is vLLM-Metal: it activates vllm-metal's venv (`source
    ~/.venv-vllm-metal/bin/activate`), runs a program from it, or has put its bin first on PATH."""
    venv = ""
    if len(words) > 1 and words[0] in ("source", ".") and words[1].endswith("/bin/activate"):
        venv = words[1].removesuffix("/bin/activate")
    elif words and "/bin/" in words[0]:
        venv = words[0].rpartition("/bin/")[0]
    first = str(env.get("PATH", "")).split(":", 1)[0].rstrip("/")
    if not _METAL_VENV.search(venv.rsplit("/", 1)[-1]) and first.endswith("/bin"):
        venv = first.removesuffix("/bin")
    if not _METAL_VENV.search(venv.rsplit("/", 1)[-1]):
        return None
    return f"runs vLLM-Metal (Apple silicon, {venv} is vllm-metal's venv), not NVIDIA GPUs"


def _docker_hits(cmd: shell.Command, origin: shell.Origin | None = None) -> list[Hit]:
    run = docker_run(list(cmd.words), cmd.env)
    if run is None:
        return []
    named = re.fullmatch(r"\$\{?(\w+)\}?", run.image)
    variables = cmd.env if cmd.variables is None else cmd.variables  # the shell's, exported or not
    if named and named.group(1) in variables:  # known only in part (`image="vllm/vllm-openai-cpu:$tag"`): it names it
        run = replace(run, image=str(variables[named.group(1)]))
    if run.entrypoint is not None:  # --entrypoint replaces the image's: the words after the image are its args
        program = [*run.entrypoint.split(), *run.args]
        mounted = _mounted_script_hits(run, program, cmd, origin)
        if mounted is not None:  # what stayed unresolved is the script's (and the docker run's, merged there)
            return [replace(h, docker=run) for h in mounted]
        hits = find_in_words(program, run.env, cmd.unresolved, None)
    else:
        hits = find_in_words(run.args, run.env, cmd.unresolved, run.image)
    return [replace(h, docker=run, unresolved=tuple(dict.fromkeys([*cmd.unresolved, *h.unresolved]))) for h in hits]


def _mounted_script_hits(
    run: DockerRun, program: list[str], cmd: shell.Command, origin: shell.Origin | None
) -> list[Hit] | None:
    """The servers of a script of the repository that the container runs - its program, or a shell's script operand
    (sh(1)) - bind-mounted with `-v HOST:CONTAINER` (`--entrypoint bash IMAGE /startup.sh` with `-v
    "$SCRIPT_DIR/startup.sh:/startup.sh"`): its commands with the container's environment (-e) and the words after
    it as $1...; None when the program is no such script (a script inside the image is not here)."""
    if origin is None or not program:
        return None
    at = 1 if len(program) > 1 and program[0].rsplit("/", 1)[-1] in _SHELLS and not program[1].startswith("-") else 0
    host = next((h for h, inside in run.mounts if inside == program[at]), None)
    if host is None:
        return None
    if host.startswith(shell.REPOSITORY):  # the script's own repository, here
        host = origin.root.rstrip("/") + host[len(shell.REPOSITORY) :]
    path = posixpath.normpath(posixpath.join(cmd.cwd or posixpath.dirname(origin.path), host))
    text = origin.read(path)
    if text is None or not runs_in_a_shell(text):
        return None
    items = find_in_script(text, run.env, [program[at], *program[at + 1 :]], origin=replace(origin, path=path))
    still = any(shell.REPOSITORY in w for w in program)  # else the checkout's folder was only the mount's source
    unresolved = tuple(u for u in cmd.unresolved if still or u != shell.REPOSITORY)
    return [
        replace(h, unresolved=tuple(dict.fromkeys([*unresolved, *h.unresolved])), through=(path, *h.through))
        for h in items
        if isinstance(h, Hit)
    ]


def _is_kubectl_apply(words: tuple[str, ...]) -> bool:
    head = words[0].rsplit("/", 1)[-1] if words else ""
    return head in ("kubectl", "oc") and any(w in ("apply", "create") for w in words[1:3]) and "-" in words


def comment_annotations(text: str) -> dict[str, str]:
    """`# vllm-plan.io/key: value` comment lines written by `render` into scripts and units (an empty value stays
    empty: the blanks around it never reach the next line)."""
    return dict(re.findall(r"^#[ \t]*(vllm-plan\.io/[a-z-]+):[ \t]*(.*?)[ \t\r]*$", text, re.M))


def not_evaluable(argv: tuple[str, ...], env: Mapping[str, str], image: str | None) -> str | None:
    """Why a server found in a command does not run on NVIDIA GPUs: its image, a ROCm environment, `--device`."""
    for i, word in enumerate(argv):
        flag, eq, value = word.partition("=")
        if flag == "--device":
            value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            if value.lower() == "cpu":
                return cpu_backend("--device cpu")
            if value.lower() in _OTHER_DEVICES:
                return f"--device {value}: vLLM runs on {value.upper()}, not NVIDIA GPUs"
    return (other_platform(image) if image else None) or env_platform(env)


def read_command(
    text: str,
    source: str,
    env: Mapping[str, str] | None = None,
    read_manifest: ManifestReader | None = None,
    origin: shell.Origin | None = None,
    read_unit: UnitReader | None = None,
    args: list[str] | None = None,
) -> list[Found]:
    """A shell line or script running `vllm serve ...`, `python -m vllm...api_server`, `docker run` of a vLLM
    image, `kubectl apply -f -` of a manifest, or a systemd unit it writes and starts (variables, continuations,
    `exec`, `nohup ... &`, `if` branches; other commands are ignored); `origin`: the script file, for the files it
    sources; `read_unit(text, source, unit path, files the script wrote)`: a unit's servers."""
    annotations = comment_annotations(text)
    out: list[Found] = []
    for item in find_in_script(text, env or {}, args, origin=origin):
        if isinstance(item, shell.Command) and compose_run.is_compose_run(item.words):
            out += compose_run.read_compose_run(item, source, origin)
            continue
        if isinstance(item, shell.Command) and is_started_unit(item.words, item.stdin):
            out += read_unit(item.stdin or "", source, item.words[2], item.files or {}) if read_unit else []
            continue
        if isinstance(item, shell.Command):
            out += read_manifest(item.stdin or "", source) if read_manifest else []
            continue
        out.append(found_of(source, "docker run" if item.docker else "command", item, annotations))
    return numbered(out)


def command_hits(words: list[str], env: Mapping[str, str], unresolved: tuple[str, ...]) -> list[Hit]:
    """Servers one command line starts: `docker run [options] IMAGE [args]` (podman alike) with its options read
    as a script's `docker run` is, else as find_in_words reads the words (a unit's ExecStart= is such a line)."""
    if is_docker_run(words):
        return _docker_hits(shell.Command(tuple(words), env, unresolved))
    return find_in_words(words, env, unresolved, None)


def found_of(source: str, resource: str, hit: Hit, annotations: Mapping[str, str]) -> Found:
    """The server a command line starts: a `docker run`'s GPUs, /dev/shm, image and platform, else the GPUs its
    environment makes visible."""
    run = hit.docker
    return Found(
        source,
        resource,
        hit.argv,
        gpus_per_pod=run.gpus if run else devices_seen(hit.env),
        has_shm=run.has_shm if run else None,
        annotations=dict(annotations),
        image_tag=image_tag(run.image) if run else None,
        serve_form=hit.serve,
        unresolved=hit.unresolved,
        env=dict(hit.env),
        container=run.image if run else "",
        not_evaluable=hit.platform or not_evaluable(hit.argv, hit.env, run.image if run else None),
        problems=hit.problems,
        through=hit.through,
    )


def numbered(found: list[Found]) -> list[Found]:
    """`command #1`, `command #2`, ... when a file starts several servers of one kind."""
    if len(found) < 2:
        return found
    return [replace(f, resource=f"{f.resource} #{i}") if f.resource in ("command", "docker run") else f
            for i, f in enumerate(found, 1)]  # fmt: skip


def with_image_cmd(hit: Hit, image: str) -> Hit:
    """A server started with no arguments by an image built on vLLM's: its model is the image's CMD (unresolved)."""
    word = image_cmd_placeholder(image)
    if word is None or len(hit.argv) > 2:
        return hit
    return replace(hit, argv=(*hit.argv, word), unresolved=(*hit.unresolved, word))
