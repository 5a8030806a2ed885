"""`eval` in a script's commands (pure): bash(1), SHELL BUILTIN COMMANDS, "eval [arg ...]: The args are read and
concatenated together into a single command. This command is then read and executed by the shell". So a launcher
that builds its command line in a string (`CMD="vllm serve $MODEL ..."`, `CMD="$CMD --max-model-len $LEN"`) and runs
`eval $CMD` runs that command line, split again by the shell, in the script's own shell (its assignments stay)."""

from __future__ import annotations

from recommender.check.shell_split import Segment, split_commands

_MAX_DEPTH = 8  # `CMD='eval $CMD'; eval $CMD` would never end
# evals over one script's reading: `A='eval "$A"; eval "$A"; ...'` (ten of them) run ten times over at each of the
# eight levels is 10^8 readings within the depth; past this many an `eval` stays a command not read
_MAX_EVALS = 256


class Evals:
    """`eval ARGS...` in shell.py's _Runner (a mixin): the arguments joined by spaces, run as the script's text."""

    evals = 0  # how deep in eval'd text
    evals_run = 0  # how many evals this reading has run (_MAX_EVALS)

    def run(self, segments: list[Segment]) -> object:  # shell.py's _Runner.run
        raise NotImplementedError

    def _eval(self, args: list[str]) -> bool:
        """Run `eval`'s arguments as a command line of this shell: True when read so (nothing else to run)."""
        text = " ".join(args).strip()
        if not text or self.evals >= _MAX_DEPTH or self.evals_run >= _MAX_EVALS:
            return False
        self.evals += 1
        self.evals_run += 1
        try:
            self.run(split_commands(text))
        finally:
            self.evals -= 1
        return True
