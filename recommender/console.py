"""The `vllm-plan` console script. Loading the commands takes a moment; Ctrl-C during it exits 130 in one line,
as it does once a command runs, instead of a traceback out of the imports."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn

PIPE_CLOSED = 141  # 128 + SIGPIPE, as the shell reports a command whose reader went away (`| head`)


def run_script(main: Callable[[], int | None]) -> NoReturn:
    """Run a script's `main` and exit with its code. A reader that closed the pipe early (`| head`) ends it
    quietly with 141, as the shell reports SIGPIPE, instead of a BrokenPipeError traceback; later writes and the
    exit's flush go to /dev/null (the Python documentation's "Note on SIGPIPE", in the signal module's)."""
    try:
        code = main()
        sys.stdout.flush()  # what is still buffered meets the closed pipe here, not at exit
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(PIPE_CLOSED)
    sys.exit(code)


def main() -> None:
    """Load the command line, then run it."""
    try:
        from recommender.cli import main as run
    except KeyboardInterrupt:
        print("\nError: interrupted", file=sys.stderr)
        sys.exit(130)
    run()
