"""Typed plan + options -> the values each template places (pure: every number and string is computed here).

`deployment()` validates the options (render/options.py) and computes the facts every artifact shares (`Deployment`, raw values);
one frozen context per artifact then holds exactly what its template places, already escaped for that target
(render/escape.py). A renamed field is a mypy error here and a test failure for the template
(tests/test_render.py compares each template's variables with its context's fields).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recommender.documents import plan_annotations
from recommender.documents.plan import Plan, Prediction
from recommender.errors import InputError
from recommender.render.escape import (
    Comment,
    Shell,
    Systemd,
    Yaml,
    comment,
    shell,
    systemd_command,
    systemd_text,
    systemd_word,
    yaml_arg,
    yaml_list,
    yaml_str,
)
from recommender.render.names import k8s_name
from recommender.render.options import RenderOptions, check_options
from recommender.vllm_flags import FlagSpec, default_flag_table

ARTIFACTS = ("command", "systemd", "k8s", "helm", "compose")
MAX_GPUS_PER_HOST = 64  # systemd units and compose services share one host; render k8s beyond that


@dataclass(frozen=True, slots=True)
class Deployment:
    """What every artifact deploys: the plan's command and figures, the options, and the sizes derived from them."""

    plan: Plan
    opts: RenderOptions
    tool_version: str
    name: str
    notes: tuple[str, ...]
    replicas: int
    nodes: int
    multinode: bool
    gpus_per_replica: int
    gpus_per_pod: int
    image_tag: str
    startup_seconds: int
    storage_gib: int
    shm_gib: int
    cpu: int
    memory_gib: int
    annotations: tuple[tuple[str, str], ...]

    @property
    def serve_args(self) -> tuple[str, ...]:
        """`vllm serve` arguments after `serve` for one server on --port (Ray for a multi-node plan)."""
        ray = ("--distributed-executor-backend", "ray") if self.multinode else ()
        return (*self.plan.best.command[2:], "--host", "0.0.0.0", "--port", str(self.opts.port), *ray)

    @property
    def vllm_version(self) -> str:
        """The plan's vLLM release."""
        return self.plan.inputs.vllm_version

    @property
    def model(self) -> str:
        """The model the command serves."""
        return self.plan.best.model


def deployment(plan: Plan, opts: RenderOptions, *, tool_version: str) -> Deployment:
    """Validate the options against the plan and compute what every artifact shares."""
    check_options(opts)
    best = plan.best
    replicas = opts.replicas if opts.replicas is not None else best.replicas
    name, note = k8s_name(opts.name or f"vllm-{best.model.split('/')[-1]}", what="name", max_len=50)
    nodes = plan.inputs.nodes
    pp = best.pipeline_parallel_size
    gpus_per_replica = best.gpus_per_engine
    multinode = nodes > 1 and pp > 1
    gpus_per_pod = max(1, gpus_per_replica // nodes) if multinode else gpus_per_replica
    weights_gib = (plan.prediction.weights_gib or 0.0) * best.tensor_parallel_size * pp  # DP ranks share them
    # Loading time budget: 10 s per GiB of weights (download + load) on top of 2 minutes, at most 1 hour.
    startup_seconds = min(3600, 120 + math.ceil(weights_gib * 10))
    claimed = plan_annotations.from_plan(plan, tool_version=tool_version, replicas=replicas)
    return Deployment(
        plan=plan,
        opts=opts,
        tool_version=tool_version,
        name=name,
        notes=(note,) if note and opts.name else (),
        replicas=replicas,
        nodes=nodes,
        multinode=multinode,
        gpus_per_replica=gpus_per_replica,
        gpus_per_pod=gpus_per_pod,
        image_tag=opts.image_tag or f"v{plan.inputs.vllm_version}",
        startup_seconds=startup_seconds,
        storage_gib=opts.storage_gib or max(20, math.ceil(weights_gib * 1.3 / 10) * 10),
        shm_gib=1 if gpus_per_pod == 1 else min(32, 2 * gpus_per_pod),
        cpu=max(2, 4 * gpus_per_pod),
        memory_gib=16 + 8 * gpus_per_pod,
        annotations=plan_annotations.encode(claimed),
    )


def _one_host(d: Deployment, artifact: str) -> None:
    """systemd units and compose services put every replica on one host, each on its own port."""
    gpus = d.replicas * d.gpus_per_replica
    if gpus > MAX_GPUS_PER_HOST:
        raise InputError(
            f"{d.replicas} replicas x {d.gpus_per_replica} GPU(s) = {gpus} GPUs on one host for {artifact}: "
            f"at most {MAX_GPUS_PER_HOST} (render k8s to spread replicas over nodes)"
        )
    last = d.opts.port + d.replicas - 1
    if last > 65535:
        raise InputError(
            f"--port {d.opts.port} with {d.replicas} replicas needs ports up to {last} for {artifact} "
            "(one per replica): lower --port"
        )


def _header(d: Deployment) -> tuple[Comment, Comment, Comment]:
    return comment(d.model), comment(d.vllm_version), comment(d.tool_version)


def _comment_annotations(d: Deployment) -> tuple[Comment, ...]:
    return tuple(comment(f"{k}: {v}") for k, v in d.annotations)


def _yaml_pairs(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[Yaml, Yaml], ...]:
    return tuple((yaml_str(k), yaml_str(v)) for k, v in pairs)


def _visible_devices(d: Deployment, replica: int) -> tuple[str, ...]:
    first = replica * d.gpus_per_replica
    return tuple(str(g) for g in range(first, first + d.gpus_per_replica))


def _replica_name(d: Deployment, replica: int) -> str:
    return f"{d.name}-{replica}" if d.replicas > 1 else d.name


@dataclass(frozen=True, slots=True)
class ScriptContext:
    """command.sh.j2: a POSIX shell script that execs vllm serve."""

    model: Comment
    vllm_version: Comment
    tool_version: Comment
    predicted: Comment
    annotations: tuple[Comment, ...]
    command: Shell


def _predicted(pred: Prediction) -> str:
    """serve.sh's prediction line; a model vLLM keeps no KV cache for (0 KV-cache groups, memory/no_kv.py) is
    bounded by what one step prefills."""
    if pred.kv_cache_groups == 0 and pred.kv_cache_tokens == 0:
        return (
            f"no KV cache (encoder-only attention); a step of {pred.max_num_batched_tokens:,} tokens holds "
            f"{pred.max_concurrency} requests of {pred.max_model_len:,} tokens; vLLM runs at most "
            f"{pred.max_num_seqs:,} at once (--max-num-seqs)"
        )
    return (
        f"{pred.kv_cache_tokens:,} KV-cache tokens, room for {pred.max_concurrency} requests of "
        f"{pred.max_model_len:,} tokens; vLLM runs at most {pred.max_num_seqs:,} at once (--max-num-seqs)"
    )


def script_context(d: Deployment) -> ScriptContext:
    """The values of serve.sh."""
    model, version, tool = _header(d)
    pred = d.plan.prediction
    return ScriptContext(
        model=model,
        vllm_version=version,
        tool_version=tool,
        predicted=comment(_predicted(pred)),
        annotations=_comment_annotations(d),
        command=shell(["vllm", "serve", *d.plan.best.command[2:], "--host", "0.0.0.0", "--port", str(d.opts.port)]),
    )


@dataclass(frozen=True, slots=True)
class UnitContext:
    """vllm.service.j2: one systemd unit per replica."""

    annotations: tuple[Comment, ...]
    description: Systemd
    user: Systemd
    env_file: Systemd
    environment: tuple[Systemd, ...]
    exec_start: Systemd
    timeout_start: int


def unit_contexts(d: Deployment) -> tuple[tuple[str, UnitContext], ...]:
    """Each replica's unit file name (<name>.service: a DNS label, safe as a file name) and values."""
    _one_host(d, "systemd")
    units = []
    for r in range(d.replicas):
        name = _replica_name(d, r)
        args = ["serve", *d.plan.best.command[2:], "--host", "0.0.0.0", "--port", str(d.opts.port + r)]
        unit = UnitContext(
            annotations=_comment_annotations(d),
            description=systemd_text(
                f"vLLM server {name} for {d.model} (planned by vllm-plan {d.tool_version}, vLLM {d.vllm_version})"
            ),
            user=systemd_text(d.opts.user),
            env_file=systemd_text(d.opts.env_file),
            environment=(
                systemd_word(f"CUDA_VISIBLE_DEVICES={','.join(_visible_devices(d, r))}"),
                systemd_word(f"HF_HOME={d.opts.hf_home}"),
            ),
            exec_start=systemd_command(d.opts.vllm_bin, args),
            timeout_start=d.startup_seconds + 60,
        )
        units.append((f"{name}.service", unit))
    return tuple(units)


@dataclass(frozen=True, slots=True)
class KubernetesContext:
    """k8s/deployment.yaml.j2 and k8s/leaderworkerset.yaml.j2."""

    model: Comment
    tool_version: Comment
    layout: Comment  # the header's "1 GPU", "2 replicas x 4 GPUs", "2 nodes x 8 GPUs"
    replicas: int
    nodes: int
    tp: int
    pp: int
    name: Yaml
    cache_claim: Yaml
    namespace: Yaml
    labels: tuple[tuple[Yaml, Yaml], ...]
    annotations: tuple[tuple[Yaml, Yaml], ...]
    access_mode: Yaml
    storage_class: Yaml | None
    storage: Yaml
    runtime_class: Yaml | None
    gpu_product: Yaml | None
    image: Yaml
    args: tuple[Yaml, ...]
    leader_command: Yaml
    port: int
    hf_token_secret: Yaml
    cpu: Yaml
    memory: Yaml
    gpu_count: Yaml
    startup_failure_threshold: int
    shm: Yaml


def _labels(d: Deployment) -> tuple[tuple[str, str], ...]:
    return (
        ("app.kubernetes.io/name", "vllm"),
        ("app.kubernetes.io/instance", d.name),
        ("app.kubernetes.io/version", d.vllm_version),
        ("app.kubernetes.io/component", "inference-server"),
        ("app.kubernetes.io/managed-by", "vllm-plan"),
    )


def _optional(value: str | None) -> Yaml | None:
    return yaml_str(value) if value else None


def _counted(n: int, thing: str) -> str:
    return f"{n:,} {thing}" + ("" if n == 1 else "s")


def _layout(d: Deployment) -> str:
    """What the manifest runs, in words: the pods of one replica (nodes, for LeaderWorkerSet) by their GPUs."""
    gpus = _counted(d.gpus_per_pod, "GPU")
    if d.multinode:
        return f"{_counted(d.nodes, 'node')} x {gpus}"
    return gpus if d.replicas == 1 else f"{_counted(d.replicas, 'replica')} x {gpus}"


def kubernetes_context(d: Deployment) -> KubernetesContext:
    """The values of the Kubernetes manifests (container words `$`-escaped: Kubernetes expands `$(VAR)`)."""
    model, _, tool = _header(d)
    leader = "ray start --head --port=6379 && exec " + shell(["vllm", "serve", *d.serve_args])
    return KubernetesContext(
        model=model,
        tool_version=tool,
        layout=comment(_layout(d)),
        replicas=d.replicas,
        nodes=d.nodes,
        tp=d.plan.best.tensor_parallel_size,
        pp=d.plan.best.pipeline_parallel_size,
        name=yaml_str(d.name),
        cache_claim=yaml_str(f"{d.name}-cache"),
        namespace=yaml_str(d.opts.namespace),
        labels=_yaml_pairs(_labels(d)),
        annotations=_yaml_pairs(d.annotations),
        access_mode=yaml_str("ReadWriteOnce" if d.replicas == 1 else "ReadWriteMany"),
        storage_class=_optional(d.opts.storage_class),
        storage=yaml_str(f"{d.storage_gib}Gi"),
        runtime_class=_optional(d.opts.runtime_class),
        gpu_product=_optional(d.plan.inputs.gpu_product_label),
        image=yaml_str(f"{d.opts.image}:{d.image_tag}"),
        args=tuple(yaml_arg(a) for a in d.serve_args),
        leader_command=yaml_arg(leader),
        port=d.opts.port,
        hf_token_secret=yaml_str(d.opts.hf_token_secret),
        cpu=yaml_str(str(d.cpu)),
        memory=yaml_str(f"{d.memory_gib}Gi"),
        gpu_count=yaml_str(str(d.gpus_per_pod)),
        startup_failure_threshold=math.ceil(d.startup_seconds / 10),
        shm=yaml_str(f"{d.shm_gib}Gi"),
    )


@dataclass(frozen=True, slots=True)
class HelmContext:
    """helm-values.yaml.j2: vLLM production-stack chart values."""

    model_comment: Comment
    tool_version: Comment
    runtime_class: Yaml | None
    name: Yaml
    repository: Yaml
    tag: Yaml
    model_url: Yaml
    replicas: int
    cpu: int
    memory: Yaml
    gpus: int
    storage: Yaml
    storage_class: Yaml | None
    shm: Yaml
    hf_token_secret: Yaml
    gpu_product: Yaml | None
    tp: int
    max_model_len: int
    gpu_memory_utilization: float
    max_num_seqs: int
    dtype: Yaml
    extra_args: tuple[Yaml, ...]


# Flags the production-stack chart has its own vllmConfig keys for (deployment-vllm-multi.yaml)
_HELM_FIELDS = frozenset({"tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "max_num_seqs"})


def helm_extra_args(flags: tuple[str, ...]) -> tuple[str, ...]:
    """The flags after the model that the chart has no dedicated key for (each with its value)."""
    out: list[str] = []
    i = 0
    while i < len(flags):
        name, eq, _ = flags[i].partition("=")
        hit = default_flag_table().match(name)
        spec = hit[0] if isinstance(hit, tuple) else None
        field = spec.dest if isinstance(spec, FlagSpec) else ""
        takes_value = not eq and (spec is None or spec.takes == "value") and i + 1 < len(flags)
        if spec is None:  # not a vLLM flag: a value follows unless the next word is a flag
            takes_value = takes_value and not flags[i + 1].startswith("-")
        if field not in _HELM_FIELDS:
            out += flags[i : i + (2 if takes_value else 1)]
        i += 2 if takes_value else 1
    return tuple(out)


def helm_context(d: Deployment) -> HelmContext:
    """The values of the production-stack chart (container words `$`-escaped: they become container args)."""
    model, _, tool = _header(d)
    pred = d.plan.prediction
    return HelmContext(
        model_comment=model,
        tool_version=tool,
        runtime_class=_optional(d.opts.runtime_class),
        name=yaml_str(d.name),
        repository=yaml_str(d.opts.image),
        tag=yaml_str(d.image_tag),
        model_url=yaml_arg(d.model),
        replicas=d.replicas,
        cpu=d.cpu,
        memory=yaml_str(f"{d.memory_gib}Gi"),
        gpus=d.gpus_per_pod,
        storage=yaml_str(f"{d.storage_gib}Gi"),
        storage_class=_optional(d.opts.storage_class),
        shm=yaml_str(f"{d.shm_gib}Gi"),
        hf_token_secret=yaml_str(d.opts.hf_token_secret),
        gpu_product=_optional(d.plan.inputs.gpu_product_label),
        tp=d.plan.best.tensor_parallel_size,
        max_model_len=pred.max_model_len,
        gpu_memory_utilization=pred.gpu_memory_utilization,
        max_num_seqs=pred.max_num_seqs,
        dtype=yaml_str("auto"),
        extra_args=tuple(yaml_arg(a) for a in helm_extra_args(d.plan.best.command[3:])),
    )


@dataclass(frozen=True, slots=True)
class ComposeService:
    """One replica's service in compose.yaml."""

    name: Yaml
    command: tuple[Yaml, ...]
    ports: Yaml
    health_url: Yaml
    device_ids: Yaml


@dataclass(frozen=True, slots=True)
class ComposeContext:
    """compose.yaml.j2 (every string `$`-escaped: compose interpolates `${VAR}` in all values)."""

    model: Comment
    tool_version: Comment
    annotations: tuple[tuple[Yaml, Yaml], ...]
    services: tuple[ComposeService, ...]
    image: Yaml
    shm: Yaml
    start_period: Yaml


def compose_context(d: Deployment) -> ComposeContext:
    """The values of the docker compose file."""
    _one_host(d, "compose")
    model, _, tool = _header(d)
    services = []
    for r in range(d.replicas):
        port = d.opts.port + r
        args = (*d.plan.best.command[2:], "--host", "0.0.0.0", "--port", str(port))
        services.append(
            ComposeService(
                name=yaml_str(_replica_name(d, r)),
                command=tuple(yaml_arg(a) for a in args),
                ports=yaml_str(f"{port}:{port}"),
                health_url=yaml_str(f"http://localhost:{port}/health"),
                device_ids=yaml_list(_visible_devices(d, r)),
            )
        )
    return ComposeContext(
        model=model,
        tool_version=tool,
        annotations=tuple((yaml_str(k), yaml_arg(v)) for k, v in d.annotations),
        services=tuple(services),
        image=yaml_arg(f"{d.opts.image}:{d.image_tag}"),
        shm=yaml_str(f"{d.shm_gib}g"),
        start_period=yaml_str(f"{d.startup_seconds}s"),
    )
