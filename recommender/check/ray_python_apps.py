"""A Ray Serve application of the repository's own Python (a RayService's serveConfigV2, or a `serve run` config,
whose `import_path: module:app` is not ray.serve.llm): the vLLM engine its Python builds, read from the file when it
is in the folder checked (pure, apart from the reader given).

Ray imports `module.sub:app` (or the older `module.sub.app`) from the application's runtime_env `working_dir`, else
the folder Serve runs in (docs.ray.io/en/latest/serve/production-guide/config.html, `import_path`); here: `module/sub.py`
or `module/sub/__init__.py` under a relative working_dir, the folder of the config, or a folder above it inside the
repository. The file is parsed with Python's `ast`, never run. The engine is the keywords of a vLLM
`AsyncEngineArgs(...)` / `EngineArgs(...)` / `LLM(...)` call, of a ray.serve.llm `LLMConfig(model_loading_config=...,
engine_kwargs=..., accelerator_type=...)`, or a dict given as or assigned to `engine_args` / `engine_kwargs`
(`engine_args=dict(model=..., tensor_parallel_size=...)`). Values are literals, module-level names bound to
literals, `int()` / `float()` / `str()` of them, and `os.environ.get("X", default)` / `os.getenv` / `os.environ["X"]`
(the application's runtime_env env_vars, else the default). A value that cannot be read that way stays `$NAME`,
reported unresolved.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from recommender.check import shell
from recommender.check.found import Found
from recommender.check.manifest_values import as_mapping

FileReader = Callable[[str], str | None]  # a file by absolute path (None: not read here)
_ENGINE_CALLS = {"AsyncEngineArgs", "EngineArgs", "LLM", "AsyncLLM"}
_ENGINE_NAMES = {"engine_args", "engine_kwargs"}
# vLLM's own command-line parser built in the file: a dict of `--key value` items it parses is the engine's options
_CLI_PARSER = re.compile(r"\bmake_arg_parser\b|\bFlexibleArgumentParser\b")
_MAX_NODES = 200_000  # a Python file past this many nodes is not a Serve application: not read


@dataclass(frozen=True, slots=True)
class Unread:
    """A value the file does not fix: `$NAME` in the engine's command line."""

    name: str


@dataclass(frozen=True, slots=True)
class OwnApp:
    """One Serve application of the repository's own Python: its import path, env vars and working_dir."""

    name: str
    import_path: str
    env: Mapping[str, str]
    working_dir: str
    given: Mapping[str, Any] | None = None  # engine arguments the config itself passes (its_engine_args)


def own_apps(serve: Mapping[str, Any]) -> list[OwnApp]:
    """The applications of a Serve config that are not ray.serve.llm's."""
    out = []
    for app in serve.get("applications") or []:
        app = as_mapping(app)
        path = str(app.get("import_path", ""))
        if not path or path.startswith("ray.serve.llm"):
            continue
        runtime = as_mapping(app.get("runtime_env"))
        env = {str(k): str(v) for k, v in as_mapping(runtime.get("env_vars")).items()}
        name, working_dir = str(app.get("name") or path), str(runtime.get("working_dir") or "")
        out.append(OwnApp(name, path, env, working_dir, its_engine_args(app)))
    return out


def its_engine_args(app: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """vLLM's engine arguments a Serve application's config passes its code: the app's `args` (what Ray gives the
    application builder, e.g. Ray's vLLM example parses them with vLLM's own argument parser) or a deployment's
    `user_config` (given to its `reconfigure`), or their `engine_args` / `engine_kwargs` key: the first mapping that
    names a `model`, its keys as vLLM's options (`tensor-parallel-size` or `tensor_parallel_size`)."""
    places = [as_mapping(app.get("args"))]
    places += [as_mapping(as_mapping(d).get("user_config")) for d in app.get("deployments") or []]
    for place in places:
        for candidate in (place, *(as_mapping(place.get(k)) for k in _ENGINE_NAMES)):
            if "model" in candidate:
                return {str(k).replace("-", "_"): v for k, v in candidate.items()}
    return None


def module_file(app: OwnApp, config_path: str, root: str, read: FileReader) -> tuple[str, str] | None:
    """(path, text) of the module an import path names, looked up as described above (None: not in the folder)."""
    module = app.import_path.split(":", 1)[0] if ":" in app.import_path else app.import_path.rpartition(".")[0]
    parts = [p for p in module.split(".") if p]
    if not parts:
        return None
    here = posixpath.dirname(config_path)
    folders = []
    if app.working_dir and "://" not in app.working_dir and not app.working_dir.startswith("/"):
        folders.append(posixpath.normpath(posixpath.join(here, app.working_dir)))
    folder = here
    while True:
        folders.append(folder)
        if folder == root or not folder.startswith(root) or folder == posixpath.dirname(folder):
            break
        folder = posixpath.dirname(folder)
    for base in folders:
        for candidate in (posixpath.join(base, *parts) + ".py", posixpath.join(base, *parts, "__init__.py")):
            text = read(candidate)
            if text is not None:
                return candidate, text
    return None


def engine_configs(text: str, env: Mapping[str, str]) -> list[dict[str, Any]] | None:
    """The LLMConfig-shaped mappings (model_loading_config, engine_kwargs, accelerator_type) of the engines a
    Python file builds, values not known as Unread; None when the file is not Python."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
        return None
    values = _Values(env)
    cli = _CLI_PARSER.search(text) is not None
    out: list[dict[str, Any]] = []
    for stmt in tree.body:  # module-level names bound to literals, in the order written
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            values.names[stmt.targets[0].id] = values.of(stmt.value)
            given = _cli_dict(stmt.value, values) if cli else None
            if given is not None:
                out.append(given)
    for node in ast.walk(tree):
        got = _engine_of(node, values)
        if got is not None:
            out.append(got)
    return out


def _cli_dict(value: ast.expr, values: _Values) -> dict[str, Any] | None:
    """`app = build_app({"model": os.environ["MODEL_ID"], "tensor-parallel-size": ...})` at module level in a file
    that parses command-line options with vLLM's own parser (Ray's vLLM example: parse_vllm_args turns each item
    into `--key value` for make_arg_parser(FlexibleArgumentParser())): those items are the engine's options."""
    if not isinstance(value, ast.Call) or len(value.args) != 1 or not isinstance(value.args[0], ast.Dict):
        return None
    given = values.of(value.args[0])
    return _engine_dict({str(k).replace("-", "_"): v for k, v in given.items()}) if isinstance(given, dict) else None


def _engine_of(node: ast.AST, values: _Values) -> dict[str, Any] | None:
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        kwargs = values.keywords(node)
        if name in _ENGINE_CALLS:
            model = kwargs.pop("model", values.of(node.args[0]) if node.args else Unread("model"))
            return _as_config(model, kwargs)
        if name == "LLMConfig":
            return _llm_config(kwargs)
        given = [kw.value for kw in node.keywords if kw.arg in _ENGINE_NAMES]
        return _engine_dict(values.of(given[0])) if given and name not in _ENGINE_CALLS else None
    if isinstance(node, ast.Assign) and any(_engine_name(t) for t in node.targets):
        return _engine_dict(values.of(node.value))
    return None


def _llm_config(kwargs: dict[str, Any]) -> dict[str, Any]:
    """An LLMConfig's keywords as the mapping serving_resources reads; a part not known is kept as unresolved."""
    loading = kwargs.get("model_loading_config", Unread("model_loading_config"))
    loading = loading if isinstance(loading, dict) else {"model_source": loading}
    engine = kwargs.get("engine_kwargs", {})
    config = {"model_loading_config": loading, "engine_kwargs": engine if isinstance(engine, dict) else {"**": engine}}
    accelerator = kwargs.get("accelerator_type")
    return {**config, "accelerator_type": accelerator} if isinstance(accelerator, str) else config


def _engine_name(target: ast.expr) -> bool:
    return isinstance(target, ast.Name) and any(n in target.id.lower() for n in _ENGINE_NAMES)


def _engine_dict(value: object) -> dict[str, Any] | None:
    if not isinstance(value, dict) or "model" not in value:
        return None
    kwargs = dict(value)
    return _as_config(kwargs.pop("model"), kwargs)


def _as_config(model: object, kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"model_loading_config": {"model_source": model}, "engine_kwargs": kwargs}


class _Values:
    """Python expressions read as literal values (Unread where they are not)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.names: dict[str, Any] = {}

    def keywords(self, node: ast.Call) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kw in node.keywords:
            value = self.of(kw.value)
            if kw.arg:
                out[kw.arg] = value
            elif isinstance(value, dict):  # `**engine_args`
                out.update(value)
            else:  # `**extra` not known: its keywords may set anything, so the engine is not fully known
                out[f"**{len(out)}"] = value if isinstance(value, Unread) else Unread("keywords")
        return out

    def of(self, node: ast.expr, depth: int = 0) -> Any:
        if depth > 20:
            return Unread("expression")
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id, Unread(node.id))
        if isinstance(node, ast.Dict):
            keys = [self.of(k, depth + 1) if k is not None else None for k in node.keys]
            vals = [self.of(v, depth + 1) for v in node.values]
            return {k: v for k, v in zip(keys, vals, strict=True) if isinstance(k, str)}
        if isinstance(node, ast.Subscript):
            return self._environ_item(node)
        if isinstance(node, ast.Call):
            return self._call(node, depth + 1)
        return Unread(_name(node) or "value")

    def _environ_item(self, node: ast.Subscript) -> Any:
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if _name(node.value).endswith("environ") and isinstance(key, str):
            return self.env.get(key, Unread(key))
        return Unread(_name(node) or "value")

    def _call(self, node: ast.Call, depth: int) -> Any:
        name, owner = _name(node.func).rpartition(".")[2], _name(node.func).rpartition(".")[0]
        args = [self.of(a, depth) for a in node.args]
        if (name == "get" and owner.endswith("environ")) or (name == "getenv" and owner == "os"):
            key = args[0] if args and isinstance(args[0], str) else "env"
            default = args[1] if len(args) > 1 else Unread(key)
            return self.env.get(key, default) if key in self.env else default
        if name == "dict" and not args:
            return self.keywords(node)
        if name in ("int", "float", "str") and len(args) == 1 and isinstance(args[0], Unread):
            return args[0]  # int(os.environ["TP"]): still the variable not known
        if name in ("int", "float", "str") and len(args) == 1:
            try:
                return {"int": int, "float": float, "str": str}[name](args[0])
            except (TypeError, ValueError):
                return Unread(name)
        if name in ("ModelLoadingConfig", "LLMConfig"):
            return self.keywords(node)
        return Unread(name or "call")


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def unresolved_config(config: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The config with each Unread value written `$NAME`, and those names (for Found.unresolved)."""
    names: list[str] = []

    def text(v: Any) -> Any:
        if isinstance(v, Unread):
            names.append(f"${v.name}")
            return f"${v.name}"
        return {k: text(x) for k, x in v.items()} if isinstance(v, dict) else v

    return text(config), tuple(dict.fromkeys(names))


def with_unresolved(found: Found, names: tuple[str, ...], where: str) -> Found:
    """The server found, its Python file named, its unknown values unresolved."""
    return replace(found, container=where, unresolved=tuple(dict.fromkeys((*found.unresolved, *names))))


def read_own_apps(serve: Mapping[str, Any], source: str, resource: str, origin: shell.Origin | None) -> list[Found]:
    """The engines the repository's own Serve applications of a Serve config build (`source` the config's path)."""
    from recommender.check.serving_resources import llm_config_found  # imported here: it imports this module's kin

    out: list[Found] = []
    for app in own_apps(serve):
        if app.given is not None:  # the config names the engine's arguments itself: those, whatever the code does
            config = _as_config(app.given.get("model"), {k: v for k, v in app.given.items() if k != "model"})
            out.append(replace(llm_config_found(config, source, resource), container=f"{app.name} (its args)"))
            continue
        if origin is None:
            continue
        hit = module_file(app, origin.path, origin.root, origin.read)
        configs = engine_configs(hit[1], app.env) if hit else None
        seen: list[dict[str, Any]] = []
        for config in configs or []:
            written, names = unresolved_config(config)
            if written in seen:
                continue  # `engine_args = dict(...)` then `AsyncEngineArgs(**engine_args)`: one engine
            seen.append(written)
            where = f"{app.name} ({posixpath.relpath(hit[0], posixpath.dirname(origin.path)) if hit else ''})"
            out.append(with_unresolved(llm_config_found(written, source, resource), names, where))
    return out


def unread_reason(serve: Mapping[str, Any], origin: shell.Origin | None) -> str:
    """Why the own applications of a Serve config gave no engine: the module not in the folder, or no engine read."""
    reasons = []
    for app in own_apps(serve):
        hit = module_file(app, origin.path, origin.root, origin.read) if origin else None
        if hit is None:
            reasons.append(f"{app.import_path}: its module is not in the folder checked")
        else:
            reasons.append(
                f"{app.import_path}: {hit[0]} builds no vLLM engine check reads (AsyncEngineArgs, EngineArgs, LLM, "
                "LLMConfig or an engine_args dict with literal values)"
            )
    return "; ".join(reasons)


def _serve_configs(k8s: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any], Mapping[str, Any]]]:
    """(index, RayService, its parsed serveConfigV2) for each RayService of a manifest whose config is YAML."""
    from recommender.safe_load import load_yaml

    out: list[tuple[int, dict[str, Any], Mapping[str, Any]]] = []
    for index, doc in enumerate(k8s, 1):
        serve = as_mapping(doc.get("spec")).get("serveConfigV2") if doc.get("kind") == "RayService" else None
        try:
            parsed = load_yaml(serve) if isinstance(serve, str) else None
        except ValueError:  # UntrustedDocumentError
            continue  # reported where ray.serve.llm's applications are read
        if isinstance(parsed, dict):
            out.append((index, doc, parsed))
    return out


def read_ray_services(k8s: list[dict[str, Any]], source: str, origin: shell.Origin | None) -> list[Found]:
    """The engines the RayServices of a manifest start from the repository's own Python, on their Ray cluster's
    GPUs (a pool the engine takes from, as for ray.serve.llm)."""
    from recommender.check.kubernetes_objects import gpu_pod_labels, group_gpus, resource_name

    out: list[Found] = []
    for index, doc, serve in _serve_configs(k8s):
        got = read_own_apps(serve, source, resource_name(doc, index), origin)
        cluster = {"spec": as_mapping(as_mapping(doc.get("spec")).get("rayClusterConfig"))}
        total, pool, _ = group_gpus(cluster, "headGroupSpec") if got else (None, False, 1)
        labels = gpu_pod_labels(cluster)  # the GPUs its engines' workers run on
        out += [replace(f, gpus_total=total, gpus_at_least=pool, node_labels=f.node_labels or labels) for f in got]
    return out


def ray_services_unread(k8s: list[dict[str, Any]], origin: shell.Origin | None) -> str:
    """Why the RayServices of a manifest gave no engine from their own Python ('' when none runs any)."""
    return "; ".join(r for _, _, serve in _serve_configs(k8s) if (r := unread_reason(serve, origin)))


# `serve run|deploy [OPTIONS] TARGET [key=value ...]` (docs.ray.io/en/latest/serve/api/index.html#serve-cli): TARGET
# an import path or a config file; the options that take a value
_SERVE_CLI = re.compile(r"(?<![\w./-])serve\s+(run|deploy)\s+(.*?)(?=\s*(?:[;&|]|$))", re.M)
_SERVE_VALUED = {"-a", "--address", "--working-dir", "-d", "--app-dir", "--runtime-env", "--runtime-env-json",
                 "--name", "--host", "-p", "--port", "--route-prefix"}  # fmt: skip


def serve_cli_apps(text: str, here: str, read: FileReader) -> list[Mapping[str, Any]]:
    """The Serve configs the `serve run|deploy` lines of a command text start: a config file (read beside the file
    when it is there, else none), or an import path with its `key=value` arguments as the app's args."""
    out: list[Mapping[str, Any]] = []
    for m in _SERVE_CLI.finditer(text):
        words, i, options = m.group(2).split(), 0, {}
        while i < len(words) and words[i].startswith("-"):
            name, eq, value = words[i].partition("=")
            if name in _SERVE_VALUED and not eq and i + 1 < len(words):
                value, i = words[i + 1], i + 1
            options[name] = value
            i += 1
        if i >= len(words):
            continue
        target, rest = words[i].strip("'\""), words[i + 1 :]
        if target.endswith((".yaml", ".yml")):
            config = read(posixpath.normpath(posixpath.join(here, target)))
            parsed = _yaml_mapping(config) if config is not None else None
            out += [parsed] if parsed is not None else []
            continue
        args = dict(w.strip("'\"").split("=", 1) for w in rest if "=" in w and not w.startswith("-"))
        working_dir = options.get("--working-dir") or options.get("--app-dir") or options.get("-d") or ""
        app = {"name": target, "import_path": target, "args": args, "runtime_env": {"working_dir": working_dir}}
        out.append({"applications": [app]})
    return out


def _yaml_mapping(text: str) -> Mapping[str, Any] | None:
    from recommender.safe_load import load_yaml

    try:
        doc = load_yaml(text)
    except ValueError:  # UntrustedDocumentError: malformed, too deep, an alias bomb
        return None
    return doc if isinstance(doc, dict) else None


def read_ray_clusters(k8s: list[dict[str, Any]], source: str, origin: shell.Origin | None) -> list[Found]:
    """The engines a RayCluster's containers start with `serve run|deploy` (Ray Serve applications of the
    repository's own Python or a Serve config beside the manifest), on the cluster's GPUs (a pool)."""
    from recommender.check.kubernetes_objects import group_gpus, resource_name

    out: list[Found] = []
    for index, doc in enumerate(k8s, 1):
        if doc.get("kind") != "RayCluster" or origin is None or "serve" not in str(doc):
            continue
        texts = [str(w) for w in _container_words(doc)]
        got = []
        for serve in serve_cli_apps("\n".join(texts), posixpath.dirname(origin.path), origin.read):
            got += read_own_apps(serve, source, resource_name(doc, index), origin)
        total, pool, _ = group_gpus(doc, "headGroupSpec") if got else (None, False, 1)
        out += [replace(f, gpus_total=total, gpus_at_least=pool) for f in got]
    return out


def _container_words(doc: Mapping[str, Any]) -> list[Any]:
    """The command and args words of every container of a RayCluster's head and worker groups."""
    spec = as_mapping(doc.get("spec"))
    groups = [as_mapping(spec.get("headGroupSpec")), *(as_mapping(g) for g in spec.get("workerGroupSpecs") or [])]
    words: list[Any] = []
    for group in groups:
        for container in as_mapping(as_mapping(group.get("template")).get("spec")).get("containers") or []:
            c = as_mapping(container)
            words += [*(c.get("command") or []), *(c.get("args") or [])]
    return words
