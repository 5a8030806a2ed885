"""A whole command pasted into explain or perf as users copy it from a README or a terminal: `vllm serve MODEL ...`,
`python -m vllm.entrypoints.openai.api_server --model MODEL ...` or `docker run [options] IMAGE [engine args]`, after
`--` or quoted as one argument, line continuations and all. It is read by check's readers (check/commands.py
read_command), so explain, perf and check read one command one way."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from recommender.check.commands import read_command, starts_a_command
from recommender.check.found import Found
from recommender.errors import FlagError, InputError
from recommender.memory.engine import VllmVersion
from recommender.quoting import clipped, quoted
from recommender.serve_args import ServeCommand, parse_serve_argv


@dataclass(frozen=True, slots=True)
class Pasted:
    """The one server a pasted command starts, and the MODEL given before the command (`explain M -- vllm serve M`)."""

    found: Found
    model_before: str | None = None

    @property
    def release(self) -> str | None:
        """The vLLM release the command's image tag names (`vllm/vllm-openai:v0.11.0`), as check reads it."""
        tagged = VllmVersion.from_tag(self.found.image_tag) if self.found.image_tag else None
        return str(tagged) if tagged is not None else None


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:  # an unclosed quote
        raise InputError(f"cannot read the command {quoted(clipped(text))}: {exc}") from exc


def pasted_command(model_arg: str | None, serve: tuple[str, ...]) -> Pasted | None:
    """The whole command given, if any: quoted as one argument, after `--` (click hands its first word to MODEL),
    or after `--` behind MODEL; None for MODEL with vLLM flags after `--` (`explain M -- --max-model-len 8k`)."""
    if not serve and model_arg and any(ch.isspace() for ch in model_arg.strip()):
        text = _without_prompt(model_arg)
        words = _words(text)
        starts = starts_a_command(words) or words[:1] == ["serve"] or _runs_a_server(text)
        return Pasted(read_server(text)) if starts else None
    if model_arg is None or model_arg == "serve" or starts_a_command([model_arg, *serve]):
        words = ([model_arg] if model_arg else []) + list(serve)
        if not words:
            return None
        return Pasted(read_server(shlex.join(["vllm", *words] if words[0] == "serve" else words)))
    if model_arg and serve and _runs_a_server(line := shlex.join([model_arg, *serve])):
        return Pasted(read_server(line))  # variables or a wrapper first: `CUDA_VISIBLE_DEVICES=0 vllm serve`, `nohup`
    if serve and starts_a_command(serve):
        return Pasted(read_server(shlex.join(serve)), model_arg)
    return None


def _without_prompt(text: str) -> str:
    """A command copied with the shell prompt that documentation prints before it (`$ vllm serve ...`)."""
    stripped = text.lstrip()
    return stripped[1:].lstrip() if stripped.startswith("$") and stripped[1:2].isspace() else text


def _runs_a_server(text: str) -> bool:
    """Whether check's reader finds a vLLM server in the line, behind what a shell puts first: variables
    (`CUDA_VISIBLE_DEVICES=0,1 vllm serve ...`), `nohup`, `env`, `time`, `uv run`, ... (check/commands.py)."""
    try:
        return bool(read_command(text, "<argument>"))
    except ValueError:  # an unclosed quote: read_server says so in one line
        return False


def image_release(model_arg: str | None, serve: tuple[str, ...]) -> str | None:
    """The release a pasted `docker run`'s image tag names, which `check` would judge the command at."""
    pasted = pasted_command(model_arg, serve)
    return pasted.release if pasted else None


def read_server(text: str) -> Found:
    """The vLLM server one command line starts, read as `check` reads it, or a one-line error saying why not."""
    found = read_command("vllm " + text if text.startswith("serve ") else text, "<argument>")
    if not found:
        raise InputError(
            f"{quoted(clipped(text.strip()))} does not start vLLM's server (`vllm serve ...`, `python -m "
            "vllm.entrypoints.openai.api_server ...`, or `docker run` of a vLLM image)"
        )
    if len(found) > 1:
        raise InputError(f"the command starts {len(found)} vLLM servers; give one of them")
    server = found[0]
    if server.problems:
        raise FlagError(server.problems[0])
    if server.not_evaluable:
        raise InputError(f"the command {server.not_evaluable}: nothing to predict on a GPU")
    return server


def parsed(pasted: Pasted, version: VllmVersion) -> ServeCommand:
    """The server's arguments as `version`'s parser reads them, with variables as check takes them: an unset one
    standing alone where it can only add options (`vllm serve M "$@"`) expands to nothing; one the prediction
    depends on (`vllm serve $MODEL`) is a one-line error. A variable elsewhere (`--env "HF_TOKEN=$HF_TOKEN"`)
    does not matter."""
    from recommender.check.run import empty_hooks, unresolved_names

    found = pasted.found
    cmd = parse_serve_argv(list(found.argv), serve=found.serve_form, version=version)
    hooks = empty_hooks(cmd, found.unresolved)
    if hooks:
        argv = [w for w in found.argv if w not in hooks]
        cmd = parse_serve_argv(argv, serve=found.serve_form, version=version)
    names = [n for n in unresolved_names(cmd, found.unresolved) if n not in hooks]
    if names:
        raise InputError(f"the command uses {', '.join(names)}, which is not set here: write its value")
    return cmd
