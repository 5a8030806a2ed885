"""Servers in job and task specs that run a script on GPUs they request (pure): Slurm batch scripts, dstack
configurations and SkyPilot task YAMLs. Each platform's own variables are set as it sets them before the script
runs, from what the spec requests:

- Slurm: `#SBATCH --nodes / --gpus-per-node / --gres=gpu[:type]:N / --gpus-per-task / --gpus / --constraint` give SLURM_JOB_NUM_NODES,
  SLURM_NNODES, SLURM_GPUS_PER_NODE, SLURM_GPUS_ON_NODE (sbatch(1)); a typed GRES or a constraint that names a GPU
  gives its type.
- dstack: `resources.gpu` ("24GB", "H100:2", "A100:80GB:2", "40GB..48GB", or name/count/memory keys) gives
  DSTACK_GPUS_NUM / DSTACK_GPUS_PER_NODE; without `shm_size` the container keeps Docker's 64 MiB /dev/shm.
- SkyPilot: `resources.accelerators` ("H100:8", {L4: 1, A10G: 1}, a list, any_of/ordered) gives
  SKYPILOT_NUM_GPUS_PER_NODE when every choice has the same count (else it stays unresolved), `num_nodes`
  SKYPILOT_NUM_NODES; the script is read as the head node (rank 0) runs it.
- spark-vllm-docker recipes (eugr/spark-vllm-docker's run-recipe.py): `command` formatted with `defaults`, `env`
  exported; the nodes come from its command line, so no GPU count.

An engine spread over several nodes (Ray) gets the GPUs of every node (gpus_total, a pool it takes from).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from recommender.check import commands, slurm_options
from recommender.check.found import Found
from recommender.check.images import image_tag, other_platform
from recommender.errors import InputError

_AMD_OR_TPU = re.compile(r"^(mi\d+|radeon|instinct|tpu|v\d+e?-|gaudi|hl-?\d+|trn|inf)", re.I)


@dataclass(frozen=True, slots=True)
class Gpus:
    """What a spec requests: GPUs per node (None: not fixed), nodes, the GPU type when it names one."""

    per_node: int | None
    nodes: int = 1
    product: str | None = None

    @property
    def total(self) -> int | None:
        return None if self.per_node is None else self.per_node * self.nodes


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _place(found: list[Found], gpus: Gpus, **facts: Any) -> list[Found]:
    """The GPUs, type and facts of the spec on every server its script starts."""
    out = []
    for f in found:
        pool = gpus.nodes > 1 and gpus.total is not None
        not_evaluable = f.not_evaluable
        if gpus.product and _AMD_OR_TPU.match(gpus.product):
            not_evaluable = not_evaluable or f"requests {gpus.product}, not an NVIDIA GPU"
        out.append(
            replace(
                f,
                gpu_product=gpus.product if not not_evaluable else None,
                gpus_per_pod=None if pool else (gpus.per_node if gpus.per_node is not None else f.gpus_per_pod),
                gpus_total=gpus.total if pool else None,
                gpus_at_least=pool,
                not_evaluable=not_evaluable,
                **facts,
            )
        )
    return out


# --- Slurm -------------------------------------------------------------------------------------------------------

_SBATCH = re.compile(r"^#SBATCH[ \t]+([^\n#]*)", re.M)


def is_sbatch(text: str) -> bool:
    return bool(_SBATCH.search(text))


def sbatch_gpus(text: str) -> Gpus:
    """Nodes, GPUs per node and GPU type an `#SBATCH` header requests."""
    opts: dict[str, str] = {}
    for line in _SBATCH.findall(text):
        for m in re.finditer(r"(--?[\w-]+)(?:[= ]\s*([^\s]+))?", line):
            opts[m.group(1)] = (m.group(2) or "").strip("'\"")
    kind, per_node, nodes = slurm_options.gpu_request(opts)
    constraint = opts.get("--constraint") or opts.get("-C")
    product = kind or (constraint if constraint and re.fullmatch(r"[\w.-]+", constraint) else None)
    return Gpus(per_node, nodes, product)


def _int(text: str) -> int | None:
    m = re.match(r"^(\d+)", text)
    return int(m.group(1)) if m else None


def read_sbatch(text: str, source: str, read_manifest: commands.ManifestReader | None = None) -> list[Found]:
    """A Slurm batch script's servers, with the SLURM_* variables its header sets."""
    gpus = sbatch_gpus(text)
    env = {"SLURM_JOB_NUM_NODES": str(gpus.nodes), "SLURM_NNODES": str(gpus.nodes), "SLURM_NODEID": "0"}
    if gpus.per_node is not None:
        env |= {"SLURM_GPUS_PER_NODE": str(gpus.per_node), "SLURM_GPUS_ON_NODE": str(gpus.per_node)}
    found = commands.read_command(text, source, env, read_manifest)
    return _place([f for f in found if f.resource.split(" #")[0] == "command"], gpus) + [
        f for f in found if f.resource.split(" #")[0] != "command"
    ]


# --- dstack --------------------------------------------------------------------------------------------------------


def is_dstack(doc: Mapping[str, Any]) -> bool:
    return doc.get("type") in ("service", "task", "dev-environment") and ("commands" in doc or "image" in doc)


def _dstack_gpus(spec: Any, nodes: int) -> Gpus:
    """`gpu: H100:2`, `24GB`, `A100:80GB:2`, `40GB..48GB`, `nvidia:2`, or {name, count, memory}."""
    if isinstance(spec, dict):
        names = spec.get("name")
        name = names[0] if isinstance(names, list) and len(names) == 1 else names if isinstance(names, str) else None
        raw = spec.get("count", 1)
        return Gpus(raw if isinstance(raw, int) else _int(str(raw)), nodes, name)
    if spec is None:
        return Gpus(None, nodes)
    count: int | None = 1
    name = None
    for part in str(spec).split(":"):
        part = part.strip()
        if re.fullmatch(r"\d+", part):
            count = int(part)
        elif re.fullmatch(r"\d*\.\.\d*", part):
            count = None  # a range: dstack picks
        elif re.fullmatch(r"[\d.]+\s*[GMT]B(\.\.[\d.]*\s*[GMT]?B?)?", part, re.I):
            continue  # memory
        elif part and part.lower() not in ("nvidia", "amd", "tpu", "intel"):
            name = part.split(",")[0] if "," not in part else None
    return Gpus(count, nodes, name)


def _dstack_env(items: Any) -> dict[str, str]:
    """`env:` as a list of `K=V` or a mapping; a bare `K` (or null) is given at `dstack apply`, so it stays unset."""
    if isinstance(items, dict):
        return {str(k): str(v) for k, v in items.items() if v is not None}
    env: dict[str, str] = {}
    for item in items if isinstance(items, list) else []:
        key, eq, value = str(item).partition("=")
        if eq:
            env[key] = value
    return env


def read_dstack(doc: Mapping[str, Any], source: str) -> list[Found]:
    """A dstack service or task: its commands, in its image, on the GPUs `resources.gpu` asks for."""
    resources = _mapping(doc.get("resources"))
    nodes = int(doc["nodes"]) if isinstance(doc.get("nodes"), int) else 1
    gpus = _dstack_gpus(resources.get("gpu"), nodes)
    env = _dstack_env(doc.get("env"))
    if gpus.per_node is not None:
        env |= {"DSTACK_GPUS_PER_NODE": str(gpus.per_node), "DSTACK_GPUS_NUM": str(gpus.total)}
    env |= {"DSTACK_NODES_NUM": str(nodes), "DSTACK_NODE_RANK": "0"}
    lines = doc.get("commands")
    script = "\n".join(str(c) for c in lines) if isinstance(lines, list) else str(lines or "")
    image = str(doc.get("image") or "")
    name = f"{doc['type']}/{doc['name']}" if doc.get("name") else str(doc["type"])
    found = [
        replace(f, resource=name, container="commands", image_tag=image_tag(image) if image else None)
        for f in commands.read_command(script, source, env)
    ]
    shm = resources.get("shm_size") is not None
    platform = other_platform(image) if image else None
    return [replace(f, not_evaluable=f.not_evaluable or platform) for f in _place(found, gpus, has_shm=shm)]


# --- SkyPilot ------------------------------------------------------------------------------------------------------


def is_skypilot(doc: Mapping[str, Any]) -> bool:
    keys = {"resources", "envs", "setup", "num_nodes", "file_mounts", "workdir", "service", "secrets"}
    return isinstance(doc.get("run"), str) and bool(keys & set(doc)) and "kind" not in doc and "services" not in doc


def _accelerators(resources: Mapping[str, Any]) -> list[tuple[str, int]]:
    """Every accelerator choice as (name, count): "H100:8", {L4: 1, A10G: 1}, a list, any_of / ordered."""
    choices: list[Any] = []
    alternatives = [o for key in ("any_of", "ordered") if isinstance(resources.get(key), list) for o in resources[key]]
    for option in [resources, *alternatives]:
        acc = option.get("accelerators") if isinstance(option, dict) else None
        if isinstance(acc, dict):  # {L4: 1} or {L4:1} (YAML reads the latter as the key "L4:1" with no value)
            choices += [str(k) if v is None else f"{k}:{v}" for k, v in acc.items()]
        elif isinstance(acc, list):
            choices += acc
        elif acc is not None:
            choices += [s.strip() for s in str(acc).strip("{}").split(",")]
    out = []
    for choice in choices:
        name, _, count = str(choice).partition(":")
        out.append((name.strip(), int(float(count)) if re.fullmatch(r"\d+(\.0)?", count.strip()) else 1))
    return out


def read_skypilot(doc: Mapping[str, Any], source: str) -> list[Found]:
    """A SkyPilot task: its `run` script on the head node, with `envs` and the accelerators it asks for."""
    resources = _mapping(doc.get("resources"))
    nodes = int(doc["num_nodes"]) if isinstance(doc.get("num_nodes"), int) else 1
    choices = _accelerators(resources)
    counts = {c for _, c in choices}
    names = {n for n, _ in choices}
    gpus = Gpus(counts.pop() if len(counts) == 1 else None, nodes, names.pop() if len(names) == 1 else None)
    env = {
        str(k): str(v) for k, v in _mapping(doc.get("envs")).items() if v is not None
    }  # a null env is given at launch
    env |= {"SKYPILOT_NUM_NODES": str(nodes), "SKYPILOT_NODE_RANK": "0"}
    if gpus.per_node is not None:
        env["SKYPILOT_NUM_GPUS_PER_NODE"] = str(gpus.per_node)
    image = str(resources.get("image_id") or "").removeprefix("docker:")
    found = [
        replace(f, resource="run", container="", image_tag=image_tag(image) if image else None)
        for f in commands.read_command(str(doc["run"]), source, env)
    ]
    return _place(found, gpus)


# --- Beaker (AI2) -----------------------------------------------------------------------------------------------


def is_beaker(doc: Mapping[str, Any]) -> bool:
    """A Beaker experiment spec: `version: v2` and a list of `tasks`."""
    return isinstance(doc.get("tasks"), list) and str(doc.get("version", "")).lower().startswith("v2")


def _words_of(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)] if isinstance(value, str) else []


def read_beaker(doc: Mapping[str, Any], source: str) -> list[Found]:
    """Each task of a Beaker experiment: `command` (replacing the image's entrypoint) then `arguments`, with its
    `envVars` literal values, on `resources.gpuCount` GPUs; without a command, a vLLM image's own entrypoint."""
    out: list[Found] = []
    for index, task in enumerate(doc["tasks"], 1):
        if not isinstance(task, dict):
            continue
        command, arguments = _words_of(task.get("command")), _words_of(task.get("arguments"))
        env = {
            str(e["name"]): str(e["value"])
            for e in task.get("envVars") or []
            if isinstance(e, dict) and "name" in e and isinstance(e.get("value"), (str, int, float))
        }
        image_spec = _mapping(task.get("image"))
        image = str(image_spec.get("docker") or image_spec.get("beaker") or "")
        hits = commands.find_in_words([*command, *arguments], env, (), None if command else image)
        gpus = _mapping(task.get("resources")).get("gpuCount")
        out += [
            Found(
                source,
                str(task.get("name") or f"task #{index}"),
                hit.argv,
                gpus_per_pod=gpus if isinstance(gpus, int) else None,
                serve_form=hit.serve,
                unresolved=hit.unresolved,
                env=dict(hit.env),
                not_evaluable=hit.platform or commands.not_evaluable(hit.argv, hit.env, image or None),
                problems=hit.problems,
            )
            for hit in hits
        ]
    return out


# --- spark-vllm-docker recipes --------------------------------------------------------------------------------------

_RECIPE_FIELDS = ("name", "recipe_version", "container", "command")  # the fields run-recipe.py's load_recipe requires


def is_spark_recipe(doc: Mapping[str, Any]) -> bool:
    """A recipe of eugr/spark-vllm-docker (and its forks): the fields its runner requires, `command` a template."""
    return all(k in doc for k in _RECIPE_FIELDS) and isinstance(doc.get("command"), str)


class _RecipeParams(dict[str, Any]):
    """run-recipe.py's template parameters: `defaults`, which its command line overrides (--port, --tp, ...); a
    field with no default comes from that command line only, read as the unresolved `${name}`."""

    def __missing__(self, key: str) -> str:
        return "${" + key + "}"


def read_spark_recipe(doc: Mapping[str, Any], source: str) -> list[Found]:
    """The command run-recipe.py writes into its launch script (generate_launch_script): `command.format(**params)`
    (str.format: `{name}` fields, `{{` and `}}` for braces) after `export K="V"` of `env`, in the `container` image."""
    params = _RecipeParams({str(k): v for k, v in _mapping(doc.get("defaults")).items()})
    try:
        script = str(doc["command"]).format_map(params)
    except (ValueError, IndexError, AttributeError) as exc:  # run-recipe.py stops on such a template too
        raise InputError(f"{source}: the recipe's command template does not format: {exc}") from None
    env = {str(k): str(v) for k, v in _mapping(doc.get("env")).items() if v is not None}
    container = str(doc["container"])
    return [
        replace(f, resource=f"recipe/{doc['name']}", container="command", image_tag=image_tag(container))
        for f in commands.read_command(script, source, env)
    ]
