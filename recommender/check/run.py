"""Judge every server found on its own: pass, fail, or not evaluated (with why), never aborting the run.

The checks that need no model always run here (vLLM's own argument errors, flags the target release does not
have, GPUs requested against TP x PP x DP, /dev/shm for NCCL), each failure kind with its own fix; the memory
verdict comes from check.evaluate. Everything the run needs from outside (model resolution, the GPU catalog,
`--config` files) is passed in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from recommender.check.evaluate import evaluate
from recommender.check.found import Found
from recommender.check.results import FAIL, IDLE_GPUS, NOT_EVALUATED, PASS, Context, Finding, ServerResult
from recommender.errors import FetchError, PlanError, UnknownGpuError, UnsupportedArchitectureError
from recommender.memory.engine import KV_CACHE_DTYPES_NOT_MODELLED, VllmVersion
from recommender.memory.explanation import Explanation
from recommender.memory.startup_issues import IssueKind
from recommender.quoting import clipped, quoted
from recommender.serve_args import (
    DEFAULT_MODEL,
    ConfigReader,
    GivenFlag,
    ServeCommand,
    config_args,
    default_model,
    parse_serve_argv,
)
from recommender.serve_argv_builder import build_serve_argv
from recommender.serve_release_errors import choice_errors
from recommender.serve_values import ENGINE_READ_DESTS

_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)|\$(?:[A-Za-z_][A-Za-z0-9_]*|\d+|[@*])|<[A-Za-z_][^<>]*>")
# a model written as a template placeholder (V_MODEL_PATH, MODEL_ID) that a tutorial substitutes before applying
_PLACEHOLDER_MODEL = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^__[A-Za-z][A-Za-z0-9_]*__$")


def config_beside(
    read_config: ConfigReader | None, source: str, files: Mapping[str, str] | None = None
) -> ConfigReader | None:
    """A `--config FILE` reader that also looks beside the file holding the command (`nohup vllm serve --config
    vllm_config.yaml` in a script run from its own folder), when the name is relative and not found as given;
    `files`, mounted from the manifest's own ConfigMaps, come first (the path the container sees)."""
    if read_config is None:
        return None
    reader = read_config
    folder = source.replace("\\", "/").rpartition("/")[0]
    mounted = dict(files or {})

    def read(path: str) -> list[str] | None:
        if path in mounted:
            return _mounted_config(path, mounted[path])
        found = reader(path)
        if found is None and folder and not path.startswith("/"):
            return reader(f"{folder}/{path}")
        return found

    return read


def _mounted_config(path: str, text: str) -> list[str]:
    """A `--config` file's flags from the text a ConfigMap mounts there (bounded parsing, as any file)."""
    from recommender.errors import FlagError
    from recommender.safe_load import UntrustedDocumentError, load_yaml_all

    try:
        docs = [d for d in load_yaml_all(text) if d is not None]
    except UntrustedDocumentError as exc:
        raise FlagError(f"--config {path} (from a ConfigMap): {exc}") from exc
    return config_args(docs[0] if docs else {}, path)


def _counts_engines(dest: str) -> bool:
    """A data-parallel setting the GPU count depends on (sizes), not where the engines meet or which ranks a node
    takes (address, ports, start rank)."""
    return dest.startswith("data_parallel") and not dest.endswith(("_address", "_port", "_rank"))


def unresolved_names(cmd: ServeCommand, names: Sequence[str]) -> list[str]:
    """Variables (or placeholders) left in something the verdict depends on: the model, a flag the memory model
    reads (memory, parallelism, the multimodal limits, the runner, the drafter), or a word the parser could not place
    (an unset `$EXTRA_ARGS` may hold any flag). Such a value is not judged by its text: vLLM never sees `$X`."""
    relevant = [cmd.model or "", cmd.ignored or "", *cmd.extras]
    relevant += [str(g.value) for g in cmd.given if g.spec.dest in ENGINE_READ_DESTS or _counts_engines(g.spec.dest)]
    seen = [n for n in names if any(n in text for text in relevant)]
    seen += [m for text in relevant for m in _VARIABLE.findall(text)]
    if cmd.model and _PLACEHOLDER_MODEL.match(cmd.model):
        seen.append(cmd.model)
    return list(dict.fromkeys(seen))


# A whole word the shell expands to nothing when it is not set: "$@" (a script run without arguments), $EXTRA_ARGS,
# ${EXTRA_ARGS}. Not Kubernetes' $(VAR), which the kubelet leaves as written when the container has no such variable.
_SHELL_HOOK = re.compile(r"^\$(?:[@*]|\{[@*]\}|[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})$")


def empty_hooks(cmd: ServeCommand, names: Sequence[str]) -> list[str]:
    """The unresolved words that stand alone where they can only add options (the model is known and no flag takes
    them as its value): `vllm serve M ... "$@"`, `... $EXTRA_ARGS`. The shell expands an unset variable, and "$@" of
    a script run without arguments, to nothing, so the server is judged without them (check_server says so)."""
    if not cmd.model or any(n in cmd.model for n in names):
        return []
    values = [str(g.value) for g in cmd.given]
    hooks = [n for n in names if _SHELL_HOOK.match(n) and (n in cmd.extras or n == cmd.ignored)]
    return [n for n in hooks if not any(n in v for v in values)]


def _hook_note(name: str) -> str:
    if name.strip("${}") in "@*":
        return f"{name} taken as empty (the script run without arguments): any options it would add are not judged"
    return f"{name} taken as empty (set nowhere in the file, so the shell expands it to nothing)"


def _as_written(g: GivenFlag) -> list[str]:
    """An option and its value(s) as the command line gave them (what argparse lists as unrecognized)."""
    if isinstance(g.value, str):
        return [g.written, g.value]
    return [g.written, *g.value] if isinstance(g.value, tuple) else [g.written]


def _release_findings(cmd: ServeCommand, ctx: Context) -> tuple[list[Finding], list[str]]:
    """Flags the target release no longer has, or does not have yet (failures); not judged (a warning) when the
    image's release is not known."""
    v = ctx.version
    findings: list[Finding] = []
    warnings: list[str] = []
    for g in cmd.given if ctx.unknown_release is None else ():
        said = f"vLLM's parser: unrecognized arguments: {' '.join(_as_written(g))}"
        if g.spec.removed is not None and v >= g.spec.removed:
            findings.append(
                Finding(
                    "flag-version",
                    f"{g.written} was removed in vLLM {g.spec.removed} (target {v}): vLLM will refuse to start ({said})",
                    f"remove {g.written}",
                )
            )
        elif g.spec.since is not None and v < g.spec.since:
            findings.append(
                Finding(
                    "flag-version",
                    f"{g.written} arrived in vLLM {g.spec.since} (target {v}): vLLM will refuse to start ({said})",
                    f"remove {g.written}, or run vLLM {g.spec.since} or later",
                )
            )
    versioned = [g.written for g in cmd.given if g.spec.removed is not None or g.spec.since is not None]
    if ctx.unknown_release is not None and versioned:
        warnings.append(
            f"{', '.join(versioned)}: present in some vLLM releases only, and the image tag {quoted(ctx.unknown_release)} "
            "does not say which release it carries: not judged (give --vllm-version)"
        )
    return findings, warnings


def argument_findings(cmd: ServeCommand, ctx: Context) -> tuple[list[Finding], list[str]]:
    """What vLLM's parser refuses, and flags the target release does not have (failures), or doubts (warnings)."""
    v = ctx.version
    findings: list[Finding] = []
    warnings: list[str] = []
    strict = v >= ctx.table.newest and ctx.unknown_release is None  # an image of unknown release: not judged
    for message in cmd.errors:
        if strict:
            findings.append(Finding("argument", f"vLLM {v} refuses the command line: {message}"))
        else:
            warnings.append(f"vLLM {ctx.table.newest} would refuse the command line ({message}); not known for {v}")
    if ctx.unknown_release is None:  # the values this release's parser refuses (its argparse choices)
        findings += [Finding("argument", f"vLLM {v} refuses the command line: {m}") for m in choice_errors(cmd, v)]
    by_release, doubts = _release_findings(cmd, ctx)
    findings += by_release
    warnings += doubts
    if cmd.ignored is not None:
        warnings.append(
            f"{quoted(cmd.ignored)} is a positional argument, which python -m vllm.entrypoints.openai.api_server parses as "
            "model_tag and ignores (only `vllm serve` takes the model that way): --model or the default is served"
        )
    unrecognized, doubts = _unrecognized(cmd, ctx, strict=strict)
    return [*findings, *unrecognized], [*warnings, *doubts]


def _unrecognized(cmd: ServeCommand, ctx: Context, *, strict: bool) -> tuple[list[Finding], list[str]]:
    """Options vLLM's parser does not have, and the stray words it cannot place (failures, or doubts when the
    target release's parser is not the one the flag table describes)."""
    v = ctx.version
    findings: list[Finding] = []
    warnings: list[str] = []
    stray = [w for w in cmd.extras if w not in cmd.unknown]
    if cmd.unknown and strict and ctx.version_explicit:
        findings.append(
            Finding(
                "argument",
                f"vLLM {v} refuses the command line: unrecognized arguments: {clipped(' '.join(cmd.extras))}",
                f"remove {clipped(', '.join(cmd.unknown))}",
            )
        )
    elif cmd.unknown and not strict:  # an older release may have had them (and their values): not judged
        warnings.append(
            f"not vLLM {ctx.table.newest} options: {clipped(', '.join(cmd.unknown))} (not known for {v}: not judged)"
        )
        findings += _second_positional(cmd)
    elif cmd.unknown:
        warnings.append(
            f"not vLLM {ctx.table.newest} options (vLLM would refuse them): {clipped(', '.join(cmd.unknown))}"
        )
        if stray:  # the words vLLM's parser prints: the unknown options with the stray words, in order
            findings.append(Finding("argument", f"unrecognized arguments: {clipped(' '.join(cmd.extras))}"))
    elif stray:
        findings.append(
            Finding(
                "argument", f"vLLM {v} refuses the command line: unrecognized arguments: {clipped(' '.join(stray))}"
            )
        )
    return findings, warnings


def _second_positional(cmd: ServeCommand) -> list[Finding]:
    """A positional word after the first, which every release refuses whatever options it has: `vllm serve` takes
    one (`model_tag`, vllm/entrypoints/cli/serve.py), the api_server module at most that one, and argparse's
    parse_args reports any more as unrecognized (FlexibleArgumentParser moves `--model M` first, so `vllm serve
    python3 -m ... --model M` has `python3` second). A word that is a variable may expand to nothing: not judged."""
    strays = [w for w in cmd.strays if not _VARIABLE.search(w)]
    if not strays:
        return []
    fix = f"remove {clipped(' '.join(strays))}: vLLM's server takes no positional argument but the model"
    start = cmd.extras.index(strays[0])
    launcher = next((i for i, w in enumerate(cmd.extras) if w.startswith("vllm.entrypoints.") and i > start), None)
    if launcher is not None:  # `python3 -m vllm.entrypoints.openai.api_server` given to what already runs vLLM
        fix = (
            f"drop `{' '.join(cmd.extras[start : launcher + 1])}`: vLLM's server is already what runs these "
            "arguments (the image's entrypoint); keep the model and flags"
        )
    message = f"vLLM refuses the command line in every release: unrecognized arguments: {clipped(' '.join(cmd.extras))}"
    return [Finding("argument", message, fix)]


def _certain_refusals(cmd: ServeCommand, ctx: Context) -> list[Finding]:
    """What vLLM refuses whatever the unresolved words hold: an option its parser does not have, written out (no
    variable in its name; `vllm serve /bin/sh -c "$SCRIPT"` is refused at `-c`, whatever the script)."""
    if not cmd.unknown or any(_VARIABLE.search(u) for u in cmd.unknown):
        return []
    strict = ctx.version >= ctx.table.newest and ctx.unknown_release is None
    return _unrecognized(cmd, ctx, strict=strict)[0]


def _engine_gpus(cmd: ServeCommand) -> tuple[int, str]:
    values = cmd.values
    tp = int(values.get("tensor_parallel_size", 1))
    pp = int(values.get("pipeline_parallel_size", 1))
    local = cmd.dest("data_parallel_size_local")
    dp = int(local) if isinstance(local, str) and local.isdigit() else int(values.get("data_parallel_size", 1))
    text = f"TP x PP = {tp} x {pp}" if dp == 1 else f"TP x PP x DP = {tp} x {pp} x {dp}"
    return tp * pp * dp, text


def _gpu_setting(found: Found, n: int) -> str:
    if found.resource.startswith("service/"):
        return f"reserve {n} GPU(s) for the service (deploy.resources.reservations.devices count: {n})"
    if found.resource.startswith("modelSpec/"):
        return f"set requestGPU: {n}"
    if found.resource.startswith("Model/"):
        return f"set resourceProfile to ...:{n}"
    if found.resource.startswith(("docker run", "command", "ExecStart")):
        return f"make {n} GPU(s) visible (CUDA_VISIBLE_DEVICES / --gpus)"
    return f"set resources.limits nvidia.com/gpu: {n}"


def gpu_findings(found: Found, cmd: ServeCommand) -> list[Finding]:
    """GPUs requested against the GPUs the engine uses, and the shared memory NCCL needs between them."""
    need, text = _engine_gpus(cmd)
    out: list[Finding] = []
    if found.gpus_total is not None and (
        found.gpus_total < need or (not found.gpus_at_least and found.gpus_total != need)
    ):
        what = "the Ray cluster has" if found.gpus_at_least else f"the {found.pods_per_replica}-pod group requests"
        short = found.gpus_total < need
        out.append(
            Finding(
                "gpu-count" if short else IDLE_GPUS,
                f"{what} {found.gpus_total} GPU(s) but {text} = {need}: "
                + ("vLLM will wait for GPUs that never come" if short else "GPUs left idle"),
                f"give the group {need} GPUs in total",
            )
        )
    elif found.gpus_total is None and found.gpus_per_pod is not None:
        have = found.gpus_per_pod * found.pods_per_replica
        if have < need:
            out.append(
                Finding(
                    "gpu-count",
                    f"{have} GPU(s) requested but {text} = {need}: vLLM will not start",
                    _gpu_setting(found, need),
                )
            )
        elif have > need:
            out.append(
                Finding(
                    IDLE_GPUS,
                    f"{have} GPU(s) requested but {text} = {need}: {have - need} GPU(s) idle",
                    _gpu_setting(found, need) + f" (or use them: {text.split(' = ')[0]} = {have})",
                )
            )
    if found.has_shm is False and need // max(1, _dp(cmd)) > 1:
        out.append(
            Finding("shm", "TP/PP > 1 without a memory-backed /dev/shm: NCCL will fail or crawl", _shm_fix(found))
        )
    return out


def _dp(cmd: ServeCommand) -> int:
    return int(cmd.values.get("data_parallel_size", 1))


def _shm_fix(found: Found) -> str:
    if found.resource.startswith("service/"):
        return "add `ipc: host` (or `shm_size: 16gb`) to the service"
    if found.resource.startswith("docker run"):
        return "add --ipc=host (or --shm-size=16g) to docker run"
    if found.resource.startswith("modelSpec/"):
        return "set vllmConfig.tensorParallelSize (the chart then mounts /dev/shm) and shmSize"
    if found.resource == "values":
        return "set shm.enabled: true"
    return (
        "mount a memory-backed volume at /dev/shm:\n"
        "  volumes:\n  - name: dshm\n    emptyDir:\n      medium: Memory\n"
        "  containers[].volumeMounts:\n  - name: dshm\n    mountPath: /dev/shm"
    )


def engine_summary(cmd: ServeCommand) -> dict[str, object]:
    """The settings read, as the corpus expectations and the JSON output name them."""
    v = cmd.values
    return {
        "model": cmd.model,
        "tensor_parallel_size": v.get("tensor_parallel_size", 1),
        "pipeline_parallel_size": v.get("pipeline_parallel_size", 1),
        "data_parallel_size": v.get("data_parallel_size", 1),
        "max_model_len": v.get("max_model_len"),
        "gpu_memory_utilization": v.get("gpu_memory_utilization"),
        "quantization": v.get("quantization"),
        "kv_cache_dtype": v.get("kv_cache_dtype", "auto"),
    }


def check_server(found: Found, ctx: Context) -> ServerResult:
    """One server's verdict. Never raises for anything about the input: that becomes a reason or a finding."""
    version = str(ctx.version)
    if found.not_evaluable:
        return ServerResult(found, NOT_EVALUATED, "", None, version, reasons=(found.not_evaluable,))
    read_config = config_beside(ctx.read_config, found.source, found.files)
    release = ctx.version if ctx.unknown_release is None else None  # how its parser reads a bool's value
    cmd = parse_serve_argv(
        list(found.argv), ctx.table, read_config=read_config, serve=found.serve_form, version=release
    )
    hooks = empty_hooks(cmd, found.unresolved)
    if hooks:  # judged without them, as the shell would run it
        argv = tuple(w for w in found.argv if w not in hooks)
        found = replace(found, argv=argv, unresolved=tuple(n for n in found.unresolved if n not in hooks))
        cmd = parse_serve_argv(list(argv), ctx.table, read_config=read_config, serve=found.serve_form, version=release)
    notes = [_hook_note(n) for n in hooks]
    summary = engine_summary(cmd)
    reasons = [f"unresolved {n}" for n in unresolved_names(cmd, found.unresolved)]
    if cmd.config_file:
        reasons.append(f"--config {cmd.config_file} is not readable here")
    if not cmd.model and (reasons or ctx.unknown_release is not None):
        reasons.append(f"no model in the command (vLLM would serve its default model, {DEFAULT_MODEL})")
    elif not cmd.model:  # nothing unknown: vLLM serves its default model, as it would from the command line
        cmd = replace(cmd, model=default_model(version))
        notes.append(f"no model in the command: vLLM {version} serves its default model, {cmd.model}")
        summary = engine_summary(cmd)
    structure = [Finding("structure", p) for p in found.problems]  # fails whatever the unresolved values are
    if reasons:
        structure += _certain_refusals(cmd, ctx)
        status = FAIL if structure else NOT_EVALUATED
        return ServerResult(
            found, status, cmd.model or "", None, version, tuple(structure), tuple(reasons), tuple(notes), None, summary
        )
    findings, warnings = argument_findings(cmd, ctx)
    warnings = [*notes, *warnings]
    findings = [*structure, *findings]
    if not any(f.kind == "argument" for f in findings):
        gpus = gpu_findings(found, cmd)
        findings += [f for f in gpus if f.kind != IDLE_GPUS]
        warnings += [
            f"{f.message} (vLLM starts; to stop paying for them: {f.fix})" for f in gpus if f.kind == IDLE_GPUS
        ]
    base = ServerResult(
        found, FAIL, cmd.model or "", None, version, tuple(findings), (), tuple(warnings), None, summary
    )
    if any(f.kind == "argument" for f in findings):
        return base  # vLLM exits at argument parsing: nothing else happens
    return _memory_verdict(base, cmd, ctx)


def _memory_verdict(base: ServerResult, cmd: ServeCommand, ctx: Context) -> ServerResult:
    found, model_ref = base.found, cmd.model or ""
    flags = cmd.engine_flags()
    if flags.kv_cache_dtype in KV_CACHE_DTYPES_NOT_MODELLED:
        return _not_evaluated(base, f"--kv-cache-dtype {flags.kv_cache_dtype}: its page layout is not modelled")
    try:
        flags.validate()
    except PlanError as exc:
        finding = Finding("argument", f"vLLM {ctx.version} refuses the setting: {exc}")
        return replace(base, findings=(*base.findings, finding))
    try:
        gpu = ctx.gpu_for(found)
    except UnknownGpuError as exc:
        return _not_evaluated(base, f"GPU not understood: {exc}")
    if gpu is None:
        return _not_evaluated(base, "no GPU type: pass --gpu, or select nodes by a GPU label in the manifest")
    note = ctx.gpu_note(found) if ctx.gpu_note else None
    base = replace(base, gpu=gpu.name, warnings=(*base.warnings, note) if note else base.warnings)
    try:
        model = ctx.resolve_model(model_ref)
    except FetchError as exc:
        return _not_evaluated(base, f"model {clipped(model_ref)} cannot be fetched: {exc}")
    except PlanError as exc:
        return _not_evaluated(base, f"model {clipped(model_ref)}: {exc}")
    canonical = replace(
        found,
        argv=tuple(build_serve_argv(model_ref, flags)),
        gpus_per_pod=None,
        has_shm=None,
        problems=(),  # already findings
    )
    try:
        memory = evaluate(canonical, resolve=lambda _: model, gpu=gpu, version=ctx.version, slo=ctx.slo)
    except UnsupportedArchitectureError as exc:
        return _not_evaluated(base, f"not modelled: {exc}")
    risky = _margin_messages(memory.explanation)
    findings = (*base.findings, *(Finding("at-risk" if m in risky else "startup", m) for m in memory.failures))
    status = FAIL if findings else PASS
    warnings = (*base.warnings, *memory.warnings)
    return replace(base, status=status, findings=findings, warnings=warnings, memory=memory)


def _margin_messages(e: Explanation | None) -> frozenset[str]:
    """The failures that are a margin inside the model's uncertainty (an at-risk class, a warm-up margin), not a
    predicted crash: JSON tells them apart as failure kind "at-risk"."""
    if e is None:
        return frozenset()
    return frozenset(i.message for i in e.issues if i.kind.at_risk or i.kind is IssueKind.WARMUP_HEADROOM)


def _not_evaluated(base: ServerResult, reason: str) -> ServerResult:
    """Failures already found stand (the checks that need no model); otherwise the server is not evaluated."""
    status = FAIL if base.findings else NOT_EVALUATED
    return replace(base, status=status, reasons=(*base.reasons, reason))


def exit_code(results: Sequence[ServerResult], problems: Sequence[str]) -> int:
    """0 every server evaluated and passed, 1 any failed, 4 nothing failed but something was not evaluated."""
    if any(r.status == FAIL for r in results):
        return 1
    if problems or any(r.status == NOT_EVALUATED for r in results):
        return 4
    return 0


def unknown_release(found: Found, stated: str | None) -> str | None:
    """The image tag, when it names no vLLM release check knows (LMCache's lmcache/vllm-openai:v0.3.14, a
    `gptoss` build) and neither --vllm-version nor a plan annotation states one; `latest` and `nightly` builds
    are taken as the target release."""
    tag = found.image_tag
    if (stated and stated != tag) or not tag or re.search(r"latest|nightly", tag, re.I):
        return None
    try:
        VllmVersion.parse(tag)
    except PlanError:
        return tag
    return tag if _COMMIT.search(tag) else None


# a commit hash in a tag (aibrix/vllm-openai:v0.6.1-edb07092-20250118): a build from a commit after the release named,
# whose options may be newer than that release's
_COMMIT = re.compile(r"(?<![0-9a-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![0-9a-z])", re.I)


def version_source(found: Found, given: str | None, claimed: str | None) -> str | None:
    """The version text a source states (--vllm-version, plan annotation, image tag), if any."""
    for candidate in (given, claimed, found.image_tag):
        if candidate and re.fullmatch(r"v?0\.\d+(\.\d+)?([.+\-].*)?", candidate):
            return candidate
    return None
