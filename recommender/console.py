"""The `vllm-plan` console script. Loading the commands takes a moment; Ctrl-C during it exits 130 in one line,
as it does once a command runs, instead of a traceback out of the imports."""

from __future__ import annotations

import sys


def main() -> None:
    """Load the command line, then run it."""
    try:
        from recommender.cli import main as run
    except KeyboardInterrupt:
        print("\nError: interrupted", file=sys.stderr)
        sys.exit(130)
    run()
