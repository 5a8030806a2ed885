"""The `vllm-plan` command line: parse, call the core, print. Errors become exit codes here only."""

from __future__ import annotations

import os
import sys

import click

from recommender import __version__
from recommender.errors import PlanError

INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug in vllm-plan, not in the input

EXIT_CODES_HELP = """\b
Exit codes:
  0  success (explain: the numbers were computed, fit or not)
  1  a check failed
  2  bad input (unknown GPU/model, malformed config, invalid flag)
  3  no feasible plan for the target
  4  the model could not be fetched (check: some server not evaluated)
  70 internal error (a bug: please report it)
"""


class PlanGroup(click.Group):
    """Turns every PlanError into its documented exit code and one line on stderr."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except PlanError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, BrokenPipeError):
            raise
        except Exception as exc:
            if os.environ.get("VLLM_PLAN_DEBUG"):
                raise
            click.echo(
                f"Error: internal error ({exc.__class__.__name__}: {exc}); rerun with VLLM_PLAN_DEBUG=1 "
                "for a traceback and please report it",
                err=True,
            )
            ctx.exit(INTERNAL_ERROR)


@click.group(cls=PlanGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="vllm-plan")
def cli() -> None:
    """Which vLLM launch flags make this model serve this load on this hardware?"""


def _register() -> None:
    from recommender.cli import catalog_cmds, check_cmd, explain_cmd, perf_cmd, recommend_cmd, render_cmd

    cli.add_command(catalog_cmds.gpus)
    cli.add_command(catalog_cmds.models)
    cli.add_command(catalog_cmds.show)
    cli.add_command(explain_cmd.explain)
    cli.add_command(recommend_cmd.recommend)
    cli.add_command(render_cmd.render)
    cli.add_command(check_cmd.check)
    cli.add_command(perf_cmd.perf)
    cli.add_command(perf_cmd.calibrate)


_register()


def main() -> None:
    """Console entry point."""
    try:
        cli.main(prog_name="vllm-plan")
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        sys.exit(0)
