"""Read a `vllm serve` command line the way vLLM's FlexibleArgumentParser does, with a per-release flag table (pure).

What vLLM 0.33 does with argv (vllm/utils/argparse_utils.py, argparse underneath), reproduced here:
- `--model X` anywhere is moved to the front as the positional model (`vllm serve` only);
- `--config FILE.yaml` is expanded in place (command line > config file > defaults);
- underscores in option names become dashes (`--max_model_len` = `--max-model-len`); `-O3` is
  `--optimization-level 3`; dotted `--json-arg.key value` forms are JSON flags;
- argparse: `--flag value` / `--flag=value`, unique-prefix abbreviations (`--max-num-seq`), ambiguous prefixes
  and unknown options are errors, `--no-x` / `--disable-x` booleans, booleans reject `=value`, the last
  occurrence wins, a value that looks like an option is "expected one argument".
Which options take a value comes from profiles/vllm-flags.yaml, never from guesses, so `--port 8000` before the
model is never read as the model. tests/test_serve_args.py compares this module with vLLM 0.33's own parser.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recommender.errors import FlagError
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.quoting import quoted
from recommender.units import parse_human_int
from recommender.vllm_flags import FlagSpec, FlagTable, default_flag_table

# EngineFlags field -> how vLLM converts the value (the argparse `type` of that EngineArgs field)
ENGINE_FIELDS: dict[str, str] = {
    "tensor_parallel_size": "int",
    "pipeline_parallel_size": "int",
    "data_parallel_size": "int",
    "enable_expert_parallel": "bool",
    "quantization": "str",
    "dtype": "str",
    "kv_cache_dtype": "str",
    "gpu_memory_utilization": "float",
    "kv_cache_memory_bytes": "human_readable_int",
    "max_model_len": "human_readable_int_or_auto",
    "max_num_seqs": "int",
    "max_num_batched_tokens": "human_readable_int",
    "block_size": "int",
    "enforce_eager": "bool",
    "enable_prefix_caching": "bool",
    "enable_chunked_prefill": "bool",
    "cpu_offload_gb": "float",
    "enable_lora": "bool",
    "max_loras": "int",
    "max_lora_rank": "int",
    "max_cudagraph_capture_size": "int",
    "compilation_config": "str",
    "optimization_level": "str",
}
# the capture-size lists (nargs '+'): --cudagraph-capture-sizes from 0.11.1; --cuda-graph-sizes (0.9.0 to 0.12), whose
# one value is the largest size (the default list up to it) and whose several values are the list (memory/
# capture_config.py)
CAPTURE_LIST_FIELDS = ("cudagraph_capture_sizes", "cuda_graph_sizes")
# Engine values that decide whether the multimodal towers are loaded and profiled (EngineFlags.towers_skipped);
# --limit-mm-per-prompt is kept as written, EngineFlags reads it as vLLM does.
TOWER_FIELDS: dict[str, str] = {
    "language_model_only": "bool",
    "limit_mm_per_prompt": "str",
    "mm_encoder_tp_mode": "str",
}
# The runner vLLM builds the model for (--runner pooling / --convert embed: no LM head, model/pooling.py).
RUNNER_FIELDS: dict[str, str] = {"runner": "str", "convert": "str"}
# --task (0.6.4 to 0.12; deprecated from 0.10.1, which maps it onto --runner / --convert: config/model.py of v0.10.1
# `_task_to_convert`): the pooling tasks load the model for the pooling runner, as --runner pooling --convert does
TASK_TO_RUNNER: dict[str, tuple[str, str]] = {
    "embed": ("pooling", "embed"),
    "embedding": ("pooling", "embed"),
    "reward": ("pooling", "embed"),
    "classify": ("pooling", "classify"),
    "score": ("pooling", "classify"),
    "generate": ("generate", "none"),
}
# The speculative decoder: --speculative-config as written, and the flags vLLM folds into it (engine/arg_utils.py
# create_speculative_config: --spec-method / --spec-model / --spec-tokens in 0.33, exclusive with the JSON's own key;
# --speculative-model / --num-speculative-tokens / --speculative-draft-tensor-parallel-size before 0.8.3)
SPECULATIVE_KEYS: dict[str, str] = {
    "spec_method": "method",
    "spec_model": "model",
    "spec_tokens": "num_speculative_tokens",
    "speculative_model": "model",
    "num_speculative_tokens": "num_speculative_tokens",
    "speculative_draft_tensor_parallel_size": "draft_tensor_parallel_size",
}
# every argparse destination whose value becomes an EngineFlags value (the memory model reads it): a value not known
# here (a variable set elsewhere) leaves the engine unknown, however its text would parse
ENGINE_READ_DESTS: frozenset[str] = frozenset(
    {
        *ENGINE_FIELDS,
        *TOWER_FIELDS,
        *RUNNER_FIELDS,
        *SPECULATIVE_KEYS,
        *CAPTURE_LIST_FIELDS,
        "speculative_config",
        "task",
    }
)
# vLLM's positional model when none is given (vllm/entrypoints/cli/serve.py DESCRIPTION, 0.33): ModelConfig.model's
# default, Qwen/Qwen3-0.6B since vllm#20335 (merged 2025-07, first in 0.10.0), facebook/opt-125m before
DEFAULT_MODEL = "Qwen/Qwen3-0.6B"
_DEFAULT_MODEL_BEFORE_0_10 = "facebook/opt-125m"


def default_model(version: str) -> str:
    """The model vLLM `version` serves when the command line (and its --config) names none."""
    major, minor = (int(p) for p in [*re.findall(r"\d+", version), "0", "0"][:2])
    return DEFAULT_MODEL if (major, minor) >= (0, 10) else _DEFAULT_MODEL_BEFORE_0_10


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclass(frozen=True, slots=True)
class GivenFlag:
    """One option as written on the command line, resolved to vLLM's flag."""

    written: str  # as written, e.g. '--max_model_len' or '--max-num-seq'
    spec: FlagSpec
    value: str | tuple[str, ...] | bool


@dataclass(frozen=True, slots=True)
class ServeCommand:
    """A parsed `vllm serve` command line (issue #9.3's typed result).

    `values` holds the memory-relevant settings as EngineFlags fields (converted as vLLM converts them);
    `errors` are what vLLM's parser would print before exiting (with its wording), apart from unrecognized
    arguments, which are in `extras` (whether they are errors depends on the release: see serve_release_errors.strict_errors);
    `config_file` is a `--config` file that could not be read here.
    """

    model: str | None
    values: Mapping[str, Any]
    given: tuple[GivenFlag, ...] = ()
    unknown: tuple[str, ...] = ()  # options no release in the table knows
    extras: tuple[str, ...] = ()  # what argparse would call unrecognized: unknown options, their values, stray words
    errors: tuple[str, ...] = ()
    config_file: str | None = None
    other: tuple[str, ...] = ()  # every token that is not a memory-relevant setting (for display)
    ignored: str | None = None  # a positional the api_server form parses as `model_tag` and does not use
    # positional words after the first (in `extras`): no release's parser takes them, whatever its options
    strays: tuple[str, ...] = ()

    def engine_flags(self) -> EngineFlags:
        """The settings as EngineFlags (vLLM's defaults for everything not given). The multimodal limits are read
        as written (the dotted `--limit-mm-per-prompt.image 0` form is not: the towers are then counted)."""
        return EngineFlags(**self.values)

    def dest(self, name: str) -> str | tuple[str, ...] | bool | None:
        """The last value given for an argparse destination (e.g. 'distributed_executor_backend')."""
        for g in reversed(self.given):
            if g.spec.dest == name:
                return g.value
        return None


ConfigReader = Callable[[str], "list[str] | None"]


def convert(flag: str, kind: str, raw: str) -> Any:
    """Convert one flag value the way vLLM's argparse would, with vLLM's one-line error otherwise."""
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind in ("hint", "human_readable_int"):
            return parse_human_int(raw)
        if kind in ("len", "human_readable_int_or_auto"):
            return -1 if raw.strip().lower() in ("-1", "auto") else parse_human_int(raw)
    except ValueError:
        name = {"hint": "human_readable_int", "len": "human_readable_int_or_auto"}.get(kind, kind)
        raise FlagError(f"argument {flag}: invalid {name} value: {quoted(raw)}") from None
    return raw


def config_args(data: Any, source: str, *, keep_false: bool = False) -> list[str]:
    """vLLM's FlexibleArgumentParser.load_config_file: a YAML mapping flattened to `--key value` arguments.

    A `key: false` becomes `--no-key` only when the parser reading the file has that option; under `vllm serve`
    the file is read by the top-level `vllm` parser, which has none, so false booleans are dropped there (vLLM
    0.33 behaviour, checked against its parser): `keep_false=True` is for `python -m ...api_server`.
    """
    if not isinstance(data, dict):
        raise FlagError(f"--config {source}: expected a YAML mapping of flag names to values")
    out: list[str] = []
    for key, value in data.items():
        if isinstance(value, bool):
            out += [f"--{key}"] if value else ([f"--no-{key}"] if keep_false else [])
        elif isinstance(value, list):
            out += [f"--{key}", *(str(v) for v in value)] if value else []
        elif isinstance(value, dict):
            out += [f"--{key}", json.dumps(value)]
        else:
            out += [f"--{key}", str(value)]
    return out


def _enforces_model_first(version: VllmVersion | None) -> bool:
    """Whether the release refuses `--served-model-name` without a positional model first (None: the newest)."""
    return version is None or version >= VllmVersion.parse("0.17.0")


def _move_model_first(args: list[str]) -> list[str]:
    """`vllm serve ... --model X ...` -> `X ...` (FlexibleArgumentParser.parse_args, serve only)."""
    for i, arg in enumerate(args):
        if arg == "--model" and i + 1 < len(args):
            return [args[i + 1], *args[:i], *args[i + 2 :]]
        if arg.startswith("--model="):
            return [arg.removeprefix("--model="), *args[:i], *args[i + 1 :]]
    return args


def _expand_config(args: list[str], read_config: ConfigReader | None, serve: bool) -> tuple[list[str], str | None]:
    """Insert a `--config` file's flags after the model (command line > config file > defaults)."""
    if "--config" not in args:
        return args, None
    index = args.index("--config")
    if index == len(args) - 1:
        raise FlagError("No config file specified! Please check your command-line arguments.")
    path = args[index + 1]
    if not path.endswith((".yaml", ".yml")):
        raise FlagError(f"Config file must be of a yaml/yml type. {path.rsplit('.', 1)[-1]} supplied")
    extra = read_config(path) if read_config else None
    rest = args[:index] + args[index + 2 :]
    if extra is None:
        return rest, path
    model_in_cli = serve and bool(rest) and not rest[0].startswith("-")
    if serve and not model_in_cli and "--model" not in extra:
        raise FlagError("No model specified! Please specify model either as a positional argument or in a config file.")
    if model_in_cli:
        return [rest[0], *extra, *rest[1:]], None
    return [*extra, *rest], None


def _normalise(args: list[str]) -> list[str]:
    """Underscores to dashes in option names, `-O3` -> `--optimization-level 3`."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            head, dot, tail = key[2:].partition(".")
            out.append("--" + head.replace("_", "-") + dot + tail + eq + value)
        elif arg.startswith("-O") and arg != "-O":
            out += ["--optimization-level", arg[3:] if arg[2:3] == "=" else arg[2:]]
        elif arg == "-O" and i + 1 < len(args) and (args[i + 1] in {"0", "1", "2", "3"} or args[i + 1][:1] == "{"):
            out.append("--optimization-level")
        else:
            out.append(arg)
    return out


def _is_option(token: str) -> bool:
    """argparse's 'O': starts with '-', is not a negative number, and has no space."""
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE_NUMBER.match(token) and " " not in token


def _known_with_value(token: str, table: FlagTable) -> bool:
    """argparse's first rule: `--opt=value` whose `--opt` is an option exactly, even when the value has spaces."""
    name, eq, _ = token.partition("=")
    return bool(eq) and name in table.options


@dataclass
class _State:
    given: list[GivenFlag] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    positional: str | None = None
    strays: list[str] = field(default_factory=list)


def _take_values(spec: FlagSpec, args: list[str], i: int, st: _State) -> tuple[Any, int]:
    """The value(s) after the option at args[i]; returns (value, index of the last token used)."""
    j = i + 1
    if spec.nargs is None:
        if j >= len(args) or _is_option(args[j]):
            st.errors.append(f"argument {spec.label()}: expected one argument")
            return None, i
        return args[j], j
    values = []
    while j < len(args) and not _is_option(args[j]):
        values.append(args[j])
        j += 1
        if spec.nargs == "?":
            break
    if spec.nargs == "+" and not values:
        st.errors.append(f"argument {spec.label()}: expected at least one argument")
    return tuple(values), j - 1


def _switch(
    spec: FlagSpec,
    positive: bool,
    name: str,
    explicit: str | None,
    args: list[str],
    i: int,
    st: _State,
    version: VllmVersion | None,
) -> int:
    """An option without a value (or a release's StoreBoolean, which may take one); returns the next index."""
    if spec.takes == "bool" and positive and spec.takes_bool_value(version):
        return _bool_value(spec, name, explicit, args, i, st)
    if explicit is not None:
        st.errors.append(f"argument {spec.label()}: ignored explicit argument {quoted(explicit)}")
    st.given.append(GivenFlag(name, spec, positive))
    return i + 1


def _bool_value(spec: FlagSpec, name: str, explicit: str | None, args: list[str], i: int, st: _State) -> int:
    """vLLM's StoreBoolean (nargs='?', const 'True'; 0.5.3 to 0.8.4 for --enable-chunked-prefill): the word after
    the option, unless it is an option, is its value, true or false in any case. Returns the next index."""
    word = explicit
    if word is None and i + 1 < len(args) and not _is_option(args[i + 1]):
        word = args[i + 1]
        i += 1
    if word is None or word.lower() in ("true", "false"):
        st.given.append(GivenFlag(name, spec, word is None or word.lower() == "true"))
    else:
        st.errors.append(f"Invalid boolean value: {word}. Expected 'true' or 'false'.")
    return i + 1


def _parse_tokens(args: list[str], table: FlagTable, version: VllmVersion | None = None) -> _State:
    st = _State()
    i = 0
    while i < len(args):
        tok = args[i]
        if not _is_option(tok) and not _known_with_value(tok, table):
            if st.positional is None:
                st.positional = tok
            else:
                st.extras.append(tok)
                st.strays.append(tok)
            i += 1
            continue
        name, eq, explicit = tok.partition("=")
        if "." in name and name.startswith("--"):  # --json-arg.key value: a JSON flag set key by key
            i += 1 if eq or i + 1 >= len(args) else 2
            continue
        hit = table.match(name)
        if isinstance(hit, list):
            st.errors.append(f"ambiguous option: {name} could match {', '.join(hit)}")
            i += 1
            continue
        if hit is None:
            j = i + 1
            while not eq and j < len(args) and not _is_option(args[j]):
                j += 1
            st.unknown.append(name)
            st.extras += args[i:j]
            i = j
            continue
        spec, positive = hit
        if spec.takes in ("flag", "bool"):
            i = _switch(spec, positive, name, explicit if eq else None, args, i, st, version)
            continue
        if eq:
            value: Any = explicit if spec.nargs is None else (explicit,)
            last = i
        else:
            value, last = _take_values(spec, args, i, st)
        if value is not None:
            st.given.append(GivenFlag(name, spec, value))
        i = last + 1
    return st


def _speculative_value(given: Sequence[GivenFlag], errors: list[str]) -> str | None:
    """--speculative-config with the shorthand flags folded in, as one JSON object (None: no drafter asked for)."""
    written = next((str(g.value) for g in reversed(given) if g.spec.dest == "speculative_config"), None)
    parts: dict[str, Any] = {}
    shorthand: set[str] = set()  # the keys 0.33's --spec-* flags set (exclusive with the JSON's own)
    for g in given:
        key = SPECULATIVE_KEYS.get(g.spec.dest)
        if key is not None:
            value = str(g.value)
            parts[key] = int(value) if key != "method" and key != "model" and value.isdigit() else value
            shorthand |= {key} if g.spec.dest.startswith("spec_") else set()
    if not parts:
        return written
    try:
        data = json.loads(written) if written and written.strip() not in ("null", "None") else {}
    except ValueError:
        return written  # EngineFlags.validate reports the malformed JSON
    if not isinstance(data, dict):
        return written
    for flag, key in (
        ("--spec-method", "method"),
        ("--spec-model", "model"),
        ("--spec-tokens", "num_speculative_tokens"),
    ):
        if key in data and key in shorthand:
            errors.append(f"{flag} and --speculative-config['{key}'] are mutually exclusive")
    return json.dumps({**data, **parts})


def _engine_values(given: Sequence[GivenFlag], errors: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    speculative = _speculative_value(given, errors)
    if speculative is not None:
        values["speculative_config"] = speculative
    for g in given:  # in order: the last occurrence wins, as in argparse
        if g.spec.dest in CAPTURE_LIST_FIELDS:
            _capture_list(g, values, errors)
            continue
        if g.spec.dest == "task" and str(g.value) in TASK_TO_RUNNER:
            values["runner"], values["convert"] = TASK_TO_RUNNER[str(g.value)]
            continue
        kind = ENGINE_FIELDS.get(g.spec.dest) or TOWER_FIELDS.get(g.spec.dest) or RUNNER_FIELDS.get(g.spec.dest)
        if kind is None:
            continue
        if kind == "bool":
            values[g.spec.dest] = bool(g.value)
            continue
        try:
            values[g.spec.dest] = convert(g.spec.label(), kind, str(g.value))
        except FlagError as exc:
            errors.append(str(exc))
    return values


def _capture_list(g: GivenFlag, values: dict[str, Any], errors: list[str]) -> None:
    """--cudagraph-capture-sizes 1 2 4 / --cuda-graph-sizes N (the largest size) or several (the list)."""
    words = [w for v in (g.value if isinstance(g.value, tuple) else (str(g.value),)) for w in str(v).split()]
    try:
        sizes = tuple(int(w) for w in words)
    except ValueError:
        bad = next(w for w in words if not w.lstrip("-").isdigit())
        errors.append(f"argument {g.spec.label()}: invalid int value: {quoted(bad)}")
        return
    if g.spec.dest == "cuda_graph_sizes" and len(sizes) == 1:
        values["max_cudagraph_capture_size"] = sizes[0]
        values.pop("cudagraph_capture_sizes", None)
    elif sizes:
        values["cudagraph_capture_sizes"] = sizes


def parse_serve_argv(
    argv: Sequence[str] | str,
    table: FlagTable | None = None,
    *,
    read_config: ConfigReader | None = None,
    serve: bool | None = None,
    version: VllmVersion | None = None,
) -> ServeCommand:
    """Parse `vllm serve MODEL ...` (a string or an argv list; a leading `vllm serve` is optional).

    `serve=False` reads the arguments of `python -m vllm.entrypoints.openai.api_server` (where `--model` is an
    ordinary option). `read_config(path)` returns a `--config` file's arguments (see config_args), or None when it
    cannot be read here. `version` is the release whose parser differs from the newest's in how it reads a word
    (a bool that took a true/false value); None reads as the newest. Argument errors are collected in `errors`.
    """
    args = shlex.split(argv) if isinstance(argv, str) else [str(a) for a in argv]
    if args[:2] == ["vllm", "serve"]:
        args = args[2:]
        serve = True if serve is None else serve
    elif args[:1] == ["serve"]:
        args = args[1:]
    serve = True if serve is None else serve
    table = table or default_flag_table()
    errors: list[str] = []
    config_file = None
    try:
        if serve:
            args = _move_model_first(args)
            # from vLLM 0.17.0 (vllm#34973; 0.16.0's argparse_utils.py has no such check, 0.17.0's has)
            if args and args[0].startswith("-") and "--config" not in args and _enforces_model_first(version):
                if any(re.match(r"^--served[-_]model[-_]name(=.+|$)", a) for a in args):
                    raise FlagError(
                        "`model` should be provided as the first positional argument when using `vllm serve`. "
                        "i.e. `vllm serve <model> --<arg> <value>`."
                    )
        args, config_file = _expand_config(args, read_config, serve)
    except FlagError as exc:
        errors.append(str(exc))
    st = _parse_tokens(_normalise(args), table, version)
    errors += st.errors
    values = _engine_values(st.given, errors)
    # the api_server form parses a positional `model_tag` too, but only `vllm serve` uses it: --model stands
    model, ignored = (st.positional, None) if serve else (None, st.positional)
    if model is None:
        given_model = next((g.value for g in reversed(st.given) if g.spec.dest == "model"), None)
        model = str(given_model) if given_model is not None else None
    other = tuple(a for a in args if a != model)
    return ServeCommand(
        model,
        values,
        tuple(st.given),
        tuple(st.unknown),
        tuple(st.extras),
        tuple(errors),
        config_file,
        other,
        ignored,
        tuple(st.strays),
    )
