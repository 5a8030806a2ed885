"""The `vllm-plan` command line: parse, call the core, print. Errors become exit codes here only."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from typing import IO, Any, NoReturn

import click

from recommender import __version__
from recommender.console import PIPE_CLOSED
from recommender.errors import PlanError

INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug in vllm-plan, not in the input
INTERRUPTED = 130  # 128 + SIGINT, as the shell reports a command stopped by Ctrl-C
_OUTPUT_ERRNOS = frozenset({errno.EPIPE, errno.ENOSPC, errno.EDQUOT})  # what writing stdout can meet

EXIT_CODES_HELP = """\b
Exit codes:
  0    success (explain: the numbers were computed, fit or not)
  1    a check failed
  2    bad input (unknown GPU/model, malformed config, invalid flag)
  3    no feasible plan for the target
  4    the model could not be fetched (check: some server not evaluated)
  70   internal error (a bug: please report it)
  130  interrupted (Ctrl-C)
  141  the output's reader closed the pipe early (`| head`)
"""


MAX_ERROR_CHARS = 2000


def one_line(text: str) -> str:
    """A message as one printable line: line breaks, control characters and Unicode line separators escaped
    (a value quoted from hostile input cannot add a line or move the terminal's cursor), and bounded."""
    out = "".join(
        ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] if ord(ch) < 0x10000 else ch for ch in text.strip()
    )
    return out if len(out) <= MAX_ERROR_CHARS else out[: MAX_ERROR_CHARS - 3] + "..."


class OneLineError(click.ClickException):
    """What click would report in a usage block, as `Error: ...` on one line: bad input, exit 2."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"Error: {one_line(self.message)}", file=file, err=file is None)


ARGV_KEY = "vllm_plan.argv"  # ctx.meta: the subcommand's arguments as typed, for usage errors


def _as_written(option: str, argv: Sequence[str]) -> str:
    """The option as the user typed it: click reports `-tp` (vLLM's spelling) as the unknown short option `-t`."""
    if len(option) == 2 and option.startswith("-"):
        for arg in argv:
            if arg == "--":
                break
            if arg.startswith(option) and not arg.startswith("--") and len(arg) > 2:
                return arg.split("=", 1)[0]
    return option


RECOMMEND_TARGETS = {"--max-model-len": "--context", "--max-num-seqs": "--concurrency"}


def _vllm_option_hint(option: str, command: str | None) -> str | None:
    """Where a `vllm serve` option goes when this command does not take it (vLLM users type them by habit)."""
    from recommender.vllm_flags import default_flag_table

    if option not in default_flag_table().options:
        return None
    if command in ("explain", "perf"):
        return (
            f"{command} takes only the vLLM options that size memory{' or speed' if command == 'perf' else ''}; "
            f"paste a whole command after `--` (vllm-plan {command} --gpu G ... -- vllm serve MODEL ...) to have "
            "every other vLLM option read and ignored"
        )
    if command == "check":
        return f"check reads vLLM's options from the command it checks: vllm-plan check --gpu G -- vllm serve MODEL {option} ..."
    if command == "recommend" and option in RECOMMEND_TARGETS:
        return f"recommend sets {option} from {RECOMMEND_TARGETS[option]}"
    if command == "recommend":
        return (
            "recommend chooses vLLM's flags itself (--gpus-per-node and --nodes bound the GPUs, --quantization the "
            "weights); to judge flags you picked, run vllm-plan explain or vllm-plan perf with them"
        )
    return None


def _usage_message(exc: click.UsageError, where: str) -> str:
    """click's message without its usage block, and where to look: `... (see vllm-plan recommend --help)`."""
    if isinstance(exc, click.NoSuchOption):
        written = _as_written(exc.option_name, exc.ctx.meta.get(ARGV_KEY, ()) if exc.ctx else ())
        text = f"no such option {written}"
        hint = _vllm_option_hint(written, exc.ctx.info_name if exc.ctx else None)
        if hint:
            text += f": {hint}"
        elif exc.possibilities:  # closest first
            *rest, last = exc.possibilities
            text += f"; did you mean {', '.join(rest) + ' or ' if rest else ''}{last}?"
    elif (
        isinstance(exc, click.BadParameter)
        and not isinstance(exc, click.MissingParameter)
        and exc.param is not None
        and exc.param_hint is None
    ):
        name = max(exc.param.opts, key=len) if isinstance(exc.param, click.Option) else exc.param.human_readable_name
        message = exc.message.rstrip(".")
        text = f"{name} {message}" if message.startswith("must ") else f"{name}: {message}"
    else:
        text = exc.format_message().rstrip(".")
        if text[:2].istitle():  # "Invalid value ..." -> "invalid value ...", but not "TP ..."
            text = text[0].lower() + text[1:]
    if exc.ctx is not None and exc.ctx.command_path != "vllm-plan":
        where = exc.ctx.command_path
    return f"{text} (see {where} --help)"


def _one_line_click(exc: click.ClickException, where: str = "vllm-plan") -> click.ClickException:
    if isinstance(exc, click.exceptions.NoArgsIsHelpError | OneLineError):
        return exc  # the help text itself, asked for by giving nothing
    if isinstance(exc, click.UsageError):
        return OneLineError(_usage_message(exc, where))
    return OneLineError(exc.format_message())


def _output_failed(exc: OSError) -> NoReturn:
    """Standard output could not be written: its reader went away (`| head`: exit 141, silently, as a shell
    reports SIGPIPE, so `pipefail` never reads a cut-off `check` as a pass) or its disk is full (one line, exit 2,
    as for -o). Later writes and the exit's flush go to /dev/null, so no second error follows."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (click's test runner)
        pass
    if exc.errno == errno.EPIPE:
        sys.exit(PIPE_CLOSED)
    click.echo(f"Error: cannot write the output: {exc.strerror or exc}", err=True)
    sys.exit(2)


class PlanGroup(click.Group):
    """Turns every PlanError into its documented exit code and one line on stderr; click's usage errors too."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        ctx.meta[ARGV_KEY] = tuple(args)  # a usage error quotes what was typed (`-tp`, not click's `-t`)
        return super().resolve_command(ctx, args)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:  # `vllm-plan --bogus`
            raise _one_line_click(exc) from None
        except OSError as exc:  # `vllm-plan --help | head -1`, `--version > /dev/full`
            if exc.errno not in _OUTPUT_ERRNOS:
                raise
            _output_failed(exc)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except PlanError as exc:
            click.echo(f"Error: {one_line(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except click.ClickException as exc:  # a subcommand's usage error, an unknown command
            sub = ctx.invoked_subcommand
            raise _one_line_click(exc, f"{ctx.command_path} {sub}" if sub else ctx.command_path) from None
        except KeyboardInterrupt:  # click would print "Aborted!" and exit 1, which `check` documents as a failure
            click.echo("\nError: interrupted", err=True)
            ctx.exit(INTERRUPTED)
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:
            if isinstance(exc, OSError) and exc.errno in _OUTPUT_ERRNOS:  # -o writes are caught where they happen
                _output_failed(exc)
            if os.environ.get("VLLM_PLAN_DEBUG"):
                raise
            click.echo(
                one_line(
                    f"Error: internal error ({exc.__class__.__name__}: {exc}); rerun with VLLM_PLAN_DEBUG=1 "
                    "for a traceback and please report it"
                ),
                err=True,
            )
            ctx.exit(INTERNAL_ERROR)


@click.group(
    "vllm-plan", cls=PlanGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP
)
@click.version_option(__version__, prog_name="vllm-plan")
def cli() -> None:
    """Which vLLM launch flags make this model serve this load on this hardware?"""


def _register() -> None:
    from recommender.cli import (
        calibrate_cmd,
        catalog_cmds,
        check_cmd,
        explain_cmd,
        perf_cmd,
        recommend_cmd,
        render_cmd,
    )

    cli.add_command(catalog_cmds.gpus)
    cli.add_command(catalog_cmds.models)
    cli.add_command(catalog_cmds.show)
    cli.add_command(explain_cmd.explain)
    cli.add_command(recommend_cmd.recommend)
    cli.add_command(render_cmd.render)
    cli.add_command(check_cmd.check)
    cli.add_command(perf_cmd.perf)
    cli.add_command(calibrate_cmd.calibrate)


_register()


def main() -> None:
    """Console entry point."""
    try:
        cli.main(prog_name="vllm-plan")
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
    except BrokenPipeError as exc:  # output piped into `head` and the like, outside a command
        _output_failed(exc)
