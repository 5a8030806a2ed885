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
The values the memory model reads from the flags given, converted as vLLM converts them: serve_values.py.
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
from recommender.serve_values import engine_values
from recommender.vllm_flags import FlagSpec, FlagTable, default_flag_table

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
    values = engine_values(st.given, errors)
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
