"""Just enough of a POSIX shell to find the `vllm serve` commands a script runs, with its variables (pure).

Handles what launch scripts, Slurm batch scripts, `sh -c` / `bash -lc` wrappers, container entrypoints and README
code blocks do around vLLM: comments, backslash-newline continuations, `;` `&&` `||` `|` `&` and newlines between
commands, here-documents (`cat <<EOF | kubectl apply -f -`), `if/elif/else/fi` (a branch whose condition can be
decided from the script's own variables - `[ -n "$X" ]`, `[[ "$M" == *8B* ]]`, `[ "$N" -gt 0 ]` - is taken or
skipped as the shell would; every branch of an undecidable one is read: shell_branches.py), assignments (`X=1`, `export X=1`,
`X=1 cmd`), quoting and expansion (shell_expansion.py: `$X` / `${X:-default}` / `${NAME##*/}` / `$((arithmetic))`
with word splitting of unquoted expansions), and the prefixes a command runs under (`exec`, `nohup`, `env A=1`,
`timeout 5m`, `srun -N 1`, `ray job submit ... --`, `uv run`, `apptainer exec IMAGE`, ...). What it cannot know
(command substitution, a variable no line sets, a `<placeholder>` of a README) is kept as written and reported; a
variable assigned from such a value stays unknown.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from recommender.check.launchers import strip_prefixes
from recommender.check.script_units import STARTED, units_started
from recommender.check.shell_branches import Branches
from recommender.check.shell_conditions import arithmetic, evaluate_test, files_present
from recommender.check.shell_environment import INHERITED, allexport, environment, export_marks
from recommender.check.shell_eval import Evals
from recommender.check.shell_exec import brace_balance, ends_the_script, executed_file, runs_in_a_shell
from recommender.check.shell_expansion import ASSIGNMENT, UNKNOWN_PART, VARIABLE_NAME, Expander, Word
from recommender.check.shell_functions import MAX_CALLS, Functions, function_end, function_name
from recommender.check.shell_groups import Subshells, groups
from recommender.check.shell_split import Segment, command_substitutions, split_commands
from recommender.check.shell_templates import read_from, rendered, written_files
from recommender.check.shell_words import drop_redirections, outside_words, written_to

_ARRAY = re.compile(  # ARR=(a "b c"), local ARR=(...), ARR+=(d): a bash array, set or appended to
    rf"^(?:(?:local|declare|typeset|readonly|export)\s+(?:-[a-z]+\s+)*)?({VARIABLE_NAME})(\+?)=\((.*)\)$", re.S
)
_TESTS = ("[", "[[", "test")


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command: its words after expansion, the environment it starts with (the exported variables and
    those set just for it), what stayed unknown, and the here-document it reads (its own, or the one `cat` pipes
    into it)."""

    words: tuple[str, ...]
    env: Mapping[str, str]
    unresolved: tuple[str, ...] = ()
    stdin: str | None = None
    files: Mapping[str, str] | None = None  # the files the script has written by then (a unit's EnvironmentFile=)
    through: tuple[str, ...] = ()  # the script files run (`./x.sh`) on the way to this command, outermost first
    cwd: str | None = None  # the folder the script's `cd` moved to (its path here); None: where the script runs
    # the shell's variables, exported or not (`env` is the command's environment: shell_environment); None: `env`
    variables: Mapping[str, str] | None = None
    # the branches of undecided `if`s / `case`s it is in: (which one, which branch) each (Branches._alternative)
    alternative: tuple[tuple[int, int], ...] = ()


# `NODE_RANK="$2"` (an option loop), `model=$1`, `X=$OPTARG`: a variable the script's arguments may set. Its value
# is a value for the servers read, but a branch on it is read as one of the script's modes, wherever it is read
# (a function defined above the option loop, called after it).
_FROM_ARGUMENT = re.compile(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]*)=[\"']?\$\{?(?:[1-9]|OPTARG)\b")


REPOSITORY = "<repository>"
_MAX_SOURCED = 4  # `source` nested deeper than this is not followed (a file sourcing itself, a long chain)
# files read for `source` and for scripts run by scripts, over one whole reading of a file (every run_script with its
# Origin: a Makefile's recipe lines together): a file that runs or sources itself many times (30 lines of `./a.sh`
# in a.sh) would otherwise be read 30^4 times within the depth limit, and a Makefile's 300 rules each running it
# 300 times as many
_MAX_FILES_READ = 64


@dataclass(frozen=True, slots=True)
class Origin:
    """A script file: its absolute path here (its $0 and ${BASH_SOURCE[0]}), the folder of its repository, and a
    reader of the files it may `source`, by absolute path (None: not read here). A path under `root` that reaches
    a command is where the repository is checked out on the deployment host: unknown, written `<repository>`.
    `files_left`: the files its readings may still run or source (one budget for all of them)."""

    path: str
    root: str
    read: Callable[[str], str | None]
    files_left: list[int] = field(default_factory=lambda: [_MAX_FILES_READ], compare=False)


def run_script(
    script: str,
    env: Mapping[str, str] | None = None,
    args: list[str] | None = None,
    platform: tuple[str, ...] = (),
    origin: Origin | None = None,
) -> list[Command]:
    """The simple commands a script runs, each with the variables in force (assignments apply in order). `args`
    are $0 $1 ... when they are known (`sh -c SCRIPT NAME ARG...`); otherwise "$@" stays unresolved. `platform`
    names variables set at run time by what starts the script (a pod's role): read like the script's options.
    `origin`: the script file's path (its $0 and ${BASH_SOURCE[0]}) and a reader of the files it sources."""
    runner = _Runner(dict(env or {}))
    runner.options = (set(_FROM_ARGUMENT.findall(script)) | set(platform)) - set(env or {})
    if args:
        runner.arrays["@"] = list(args[1:])
        runner.scope.update({str(k): a for k, a in enumerate(args)})
    if origin is None:
        return runner.run_all(split_commands(script))
    runner.read_file, runner.files_left, runner.root = origin.read, origin.files_left, origin.root
    runner.arrays["BASH_SOURCE"] = [origin.path]
    runner.scope["BASH_SOURCE"] = origin.path
    runner.scope.setdefault("0", origin.path)
    return [_checkout_unknown(cmd, origin.root) for cmd in runner.run_all(split_commands(script))]


def _checkout_unknown(cmd: Command, root: str) -> Command:
    """A command's words with the repository's folder here (reached through the script's own path) written as
    `<repository>`, unresolved: the deployment host's checkout is elsewhere."""
    under = re.compile(re.escape(root.rstrip("/")) + r"(?=/|$)")
    if not any(under.search(w) for w in cmd.words):
        return cmd
    words = tuple(under.sub(REPOSITORY, w) for w in cmd.words)
    return replace(cmd, words=words, unresolved=(*cmd.unresolved, REPOSITORY))


class _Runner(Branches, Functions, Subshells, Evals):
    def __init__(self, scope: dict[str, str]) -> None:
        self.scope = scope
        self.exported = set(scope) | INHERITED  # the names a child process gets (shell_environment)
        self.allexport = False  # `set -a`: every variable assigned is exported
        self.unknown: set[str] = set()
        self.soft: set[str] = set()
        self.options: set[str] = set()  # names the script's arguments may set (_FROM_ARGUMENT)
        self.frames = []
        self.cases = []
        self.opened = 0
        self.arrays: dict[str, list[str]] = {}
        self.files: dict[str, str] = {}  # the text of the files the script writes from a here-document
        self.units: set[str] = set()  # the unit files it wrote that it starts (systemctl), each read once
        self.read_file: Callable[[str], str | None] | None = None  # the files `source` reads (run_script's origin)
        self.root = ""  # the folder of the script's repository (run_script's origin)
        self.sourcing = 0  # how deep in sourced files
        self.files_left = [_MAX_FILES_READ]  # shared with the runners of the scripts this one runs
        self.outside: set[str] = set()  # names holding the empty default of a variable set outside (`X="${X:-}"`)
        self.cwd: str | None = None  # where `cd` moved the shell (Command.cwd)
        self.functions: dict[str, list[Segment]] = {}  # the bodies of the functions defined so far, by name
        self.called: set[str] = set()
        self.emitted: dict[str, set[tuple[Any, ...]]] = {}
        self.calls_left = [MAX_CALLS]  # shared with the runners of its command substitutions
        self.depth = 0  # how deep in function calls
        self.subshells = []  # the state to put back when each `( list )` entered ends (shell_groups)
        self.out: list[Command] = []
        self.halted = False  # an `exit` or a `sleep infinity` the script certainly reaches: nothing after it runs
        self.next_op = ""  # the operator after the command being read (`&`: it runs in the background)
        self.braces = 0  # `{` groups open: a command in one may not run (`cond || { echo; exit 1; }`)

    def run(self, segments: list[Segment]) -> list[Command]:
        previous: Segment | None = None
        i, segments = 0, groups(segments)
        while i < len(segments) and not self.halted:
            seg = segments[i]
            self.next_op = segments[i + 1].op if i + 1 < len(segments) else ""
            self.braces = max(0, self.braces + brace_balance(seg.text))  # `{ ...; exit 1; }`, `die() { ...; }`
            if not (self.cases and self.cases[-1].expecting) and self._subshell(seg.text):
                previous, i = seg, i + 1
                continue
            name = function_name(seg.text) if self.active else None
            end = function_end(segments, i) if name else None
            if name and end is not None:  # a definition: its body runs where the function is called
                self.functions[name] = segments[i + 1 : end]
                i, previous = end + 1, None
                continue
            self._segment(seg, previous)
            previous, i = seg, i + 1
        return self.out

    def _words(self, text: str) -> tuple[list[Word], list[str]]:
        unresolved: list[str] = []
        words = [Word()]
        expander = Expander(
            self.scope, self.unknown, self.soft | self.options, arrays=self.arrays, outside=self.outside | self.options
        )
        expander.scan(text, words, unresolved, split=True)
        for w in words:
            w.soft = expander.used_soft
        if self.active:
            for name, (value, known) in expander.assigned.items():  # `: "${X:=default}"` set X
                self._record(name, value)
                self.scope[name] = value
                (self.unknown.discard if known else self.unknown.add)(name)
        return [w for w in words if w.started], unresolved

    def _condition(self, text: str, *, defaults: bool = False) -> bool | None:
        """A condition command's result, an unset variable being empty as when the script runs; with `defaults`, the
        defaults that stand for the script's arguments count as values (the script run without arguments)."""
        math = re.fullmatch(r"\s*(?:(?:if|elif|while|until)\s+)?\(\((.*)\)\)\s*", text, re.S)
        if math:  # `(( N > 0 ))`: true when the arithmetic is not zero
            got = arithmetic(math.group(1), self.scope, self.unknown | (set() if defaults else self.soft))
            return None if got is None else got != 0
        words = [Word()]
        expander = Expander(self.scope, self.unknown, self.soft | self.options, unset_empty=True, arrays=self.arrays)
        expander.scan(text, words, [], split=True)
        scanned = drop_redirections([w for w in words if w.started])
        while scanned and scanned[0].text in ("if", "elif", "then", "else", "while", "until", "do"):
            scanned = scanned[1:]
        soft = expander.used_soft and not defaults
        return evaluate_test(self._files_present([(w.text, not (w.unresolved or soft)) for w in scanned]))

    def _files_present(self, words: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
        """File tests decided from the script's repository (shell_conditions.files_present)."""
        sources = self.arrays.get("BASH_SOURCE") or []
        if self.read_file is None or not sources:
            return words
        return files_present(words, sources[0], self.root, self.read_file)

    def _segment(self, seg: Segment, previous: Segment | None) -> None:
        if self.cases and (self.cases[-1].expecting or seg.op == ";;" or re.match(r"esac\b", seg.text)):
            self._case_arm(seg, previous)
            return
        if self._keyword_then_array(seg, previous):
            return
        guard = self._guard(seg, previous)
        array = _ARRAY.match(seg.text)
        if guard is None and (array or ASSIGNMENT.match(seg.text)):  # a value: as the script runs without arguments
            guard = self._guard(seg, previous, defaults=True)
        if guard is False:
            return
        self._substitutions(seg.text)
        if array:
            self._assign_array(array.group(1), array.group(3), append=bool(array.group(2)), sure=guard is True)
            return
        scanned, unresolved = self._words(seg.text)
        structured = self._structure(drop_redirections(scanned), seg)
        if structured is None:
            return
        words = structured
        if not words or not self.active:
            return
        if self._builtin(words):
            return
        local: dict[str, str] = {}
        while words and ASSIGNMENT.match(words[0].text):
            self._assign(words[0], global_=False, into=local)
            words = words[1:]
        if not words:
            for name, value in local.items():  # a bare assignment sets a shell variable
                self._record(name, value)
                self.scope[name] = value
                self.exported |= {name} if self.allexport else set()
            return
        source = read_from([(w.text, w.bare) for w in scanned])
        self._command(words, local, unresolved, seg, previous, (source, written_to(scanned)))

    def _command(
        self,
        words: list[Word],
        local: dict[str, str],
        unresolved: list[str],
        seg: Segment,
        previous: Segment | None,
        redirected: tuple[str | None, str | None],
    ) -> None:
        """A simple command the script runs, `local` its own assignments, `redirected` the files its input comes
        from and its output goes to."""
        unresolved += outside_words(words)
        argv, more = strip_prefixes([w.text for w in words])
        local.update(more)
        stdin = self._stdin(seg, previous, unresolved)
        if self._call(argv):
            return
        argv, stdin = written_files(argv, stdin, redirected[1], self.files)
        sources = self.arrays.get("BASH_SOURCE") or []
        env = environment(self.scope, self.exported, local)
        if self.read_file is not None and sources:  # a template it renders with its environment (shell_templates)
            here = self.cwd or posixpath.dirname(sources[0])
            made = rendered(argv, stdin, *redirected, env, self.read_file, here)
            self.files.update([made] if made else [])
        if self._execute(argv, env):
            return
        if ends_the_script(argv, seg.op) and not (self.frames or self.cases or self.depth or self.braces):
            self.halted = self.next_op != "&"
            return
        if ends_the_script(argv, seg.op) and self.frames and self.frames[-1].branches and not self.braces:
            self.frames[-1].exited.add(len(self.frames[-1].branches) - 1)  # `else ... exit 1`: see _close_if
        variables = {**self.scope, **local}
        cmd = Command(tuple(argv), env, tuple(dict.fromkeys(unresolved)), stdin, cwd=self.cwd, variables=variables)
        self.out.append(replace(cmd, alternative=self._alternative()))
        self._started_units(argv)

    def _started_units(self, argv: list[str]) -> None:
        """A unit file the script wrote that `systemctl enable|start ...` starts: a command standing for it (its
        text as stdin, with the files written so far for its EnvironmentFile=), once per unit."""
        for path, text in units_started(argv, self.files):
            if path not in self.units:
                self.units.add(path)
                self.out.append(Command((*STARTED, path), dict(self.scope), (), text, dict(self.files)))

    def _keyword_then_array(self, seg: Segment, previous: Segment | None) -> bool:
        """`then ARR+=(x)` on one line: the keyword, then the array assignment (True when read so)."""
        keyword = re.match(r"(then|else|do)\s+(?=\S)", seg.text)
        if not keyword or not _ARRAY.match(seg.text[keyword.end() :]):
            return False
        self._segment(Segment(keyword.group(1), seg.op), previous)
        self._segment(Segment(seg.text[keyword.end() :], ""), None)
        return True

    def _substitutions(self, text: str) -> None:
        """Run the commands of each `$(...)` in the command (`ID="$("${docker_cmd[@]}" 2>err.log)"`): bash runs them
        in a subshell (bash(1), Command Substitution), so what they set does not reach the script. Not in a condition
        (`if [ -n "$(docker ps -q)" ]`) nor in a branch not taken."""
        if not self.active or (self.frames and self.frames[-1].in_condition):
            return
        for inner in command_substitutions(text):
            sub = _Runner(dict(self.scope))
            sub.exported, sub.allexport = set(self.exported), self.allexport
            sub.unknown, sub.soft, sub.options = set(self.unknown), set(self.soft), set(self.options)
            sub.arrays, sub.outside = {k: list(v) for k, v in self.arrays.items()}, set(self.outside)
            sub.functions, sub.called, sub.calls_left = self.functions, self.called, self.calls_left
            sub.emitted = self.emitted
            self.out += sub.run(split_commands(inner))

    def _builtin(self, words: list[Word]) -> bool:
        """Run a builtin that sets variables (export X=1, declare, `set -- A B` for "$@"); False for other commands."""
        argv = [w.text for w in words]
        if argv[0] in ("source", ".") and len(argv) > 1 and not words[1].unresolved:
            return self._source(argv[1], argv[2:])
        if argv[0] == "eval":  # its arguments, joined, are a command line of this shell (shell_eval)
            return self._eval(argv[1:])
        state = allexport(argv) if argv[0] == "set" else None
        self.allexport = self.allexport if state is None else state
        if argv[0] == "set" and "--" in argv:  # `set -- serve "$MODEL" ...`: the positional parameters, for "$@"
            self._set_positional(argv[argv.index("--") + 1 :])
            return True
        if argv[0] in ("export", "declare", "local", "readonly", "typeset"):
            for w in words[1:]:
                self._assign(w, global_=True)
            marked, unmarked = export_marks(argv)
            self.exported = (self.exported | marked) - unmarked
            return True
        if argv[0] == "cd":  # still a command of its own (read by nothing else); a `$(cd ...)` runs in a subshell
            self._cd([w.text for w in words[1:] if not w.text.startswith("-") or w.text == "-"], words[1:])
        return False

    def _cd(self, args: list[str], words: list[Word]) -> None:
        """`cd DIR`: the folder later commands run in (a relative DIR from the current one, the script's own folder
        until a `cd`); `cd`, `cd ~...`, `cd -` or a DIR not known here: where the script runs, as before any `cd`."""
        sources = self.arrays.get("BASH_SOURCE") or []
        target = args[0] if len(args) == 1 else ""
        if not target or target.startswith(("~", "-")) or any(w.unresolved for w in words) or not sources:
            self.cwd = None
            return
        self.cwd = posixpath.normpath(posixpath.join(self.cwd or posixpath.dirname(sources[0]), target))

    def _execute(self, argv: list[str], env: dict[str, str]) -> bool:
        """A script file of the repository the command runs (shell_exec): its commands, run by a shell of their own
        with the arguments as $1..., the file's path as $0; it gets the caller's environment (`env`: its exported
        variables, shell_environment). A relative path from the folder of the file running it. False (an ordinary command)
        when the file is not read here: outside the files run_script's origin reads, not a shell script, too deep."""
        hit = executed_file(argv)
        sources = self.arrays.get("BASH_SOURCE") or []
        if hit is None or self.read_file is None or not sources or not self._may_read_another():
            return False
        target = posixpath.normpath(posixpath.join(posixpath.dirname(sources[0]), hit[0]))
        text = self.read_file(target)
        if text is None or not runs_in_a_shell(text):
            return False
        child = _Runner(dict(env))
        child.read_file, child.sourcing, child.files_left = self.read_file, self.sourcing + 1, self.files_left
        child.root = self.root
        child.cwd = self.cwd  # a child process starts in its parent's folder
        child.arrays.update({"BASH_SOURCE": [target], "@": list(hit[1])})
        child.scope.update({"BASH_SOURCE": target, "0": target, **{str(k): a for k, a in enumerate(hit[1], 1)}})
        self.out += [replace(c, through=(target, *c.through)) for c in child.run_all(split_commands(text))]
        return True

    def _may_read_another(self) -> bool:
        """Whether one more file may be run or sourced: within the nesting depth and the whole reading's budget."""
        if self.sourcing >= _MAX_SOURCED or self.files_left[0] <= 0:
            return False
        self.files_left[0] -= 1
        return True

    def _source(self, path: str, args: list[str]) -> bool:
        """`source FILE [ARG...]` / `. FILE`: run the file's commands in this shell, with the arguments as its
        positional parameters while it runs (bash(1), SHELL BUILTIN COMMANDS), ${BASH_SOURCE[0]} being the file; a
        relative path from the folder of the file sourcing it. False (an ordinary command) when it is not read
        here: outside the files run_script's origin reads, a venv's activate script, too deep."""
        sources = self.arrays.get("BASH_SOURCE") or []
        if self.read_file is None or not sources or not self._may_read_another():
            return False
        target = posixpath.normpath(posixpath.join(posixpath.dirname(sources[0]), path))
        text = None if target.endswith("/bin/activate") else self.read_file(target)
        if text is None:
            return False
        saved = (dict(self.scope), list(self.arrays.get("@", [])), "@" in self.arrays, "@" in self.unknown)
        if args:
            self._set_positional(args)
        self.arrays["BASH_SOURCE"] = [target, *sources]
        self.scope["BASH_SOURCE"] = target
        self.sourcing += 1
        start = len(self.out)
        try:
            self.run(split_commands(text))
        finally:
            self.sourcing -= 1
            # its servers are read as run by this script (a folder's reading does not read the file a second time)
            self.out[start:] = [replace(c, through=(target, *c.through)) for c in self.out[start:]]
            self.arrays["BASH_SOURCE"] = sources
            self.scope["BASH_SOURCE"] = sources[0]
            if args:  # the caller's positional parameters come back
                for k in [k for k in self.scope if k.isdigit() and k != "0"]:
                    del self.scope[k]
                self.scope.update({k: v for k, v in saved[0].items() if k.isdigit() and k != "0"})
                if saved[2]:
                    self.arrays["@"] = saved[1]
                else:
                    self.arrays.pop("@", None)
                if saved[3]:
                    self.unknown.add("@")
        return True

    def _set_positional(self, items: list[str]) -> None:
        """`set -- WORD...` makes the words $1 $2 ... and "$@" (a word left unknown is kept as written)."""
        for k in [k for k in self.scope if k.isdigit() and k != "0"]:
            del self.scope[k]
        self.scope.update({str(k): item for k, item in enumerate(items, 1)})
        self.arrays["@"] = items
        self.unknown.discard("@")

    def _stdin(self, seg: Segment, previous: Segment | None, unresolved: list[str]) -> str | None:
        """The command's here-document, or the one piped into it (`cat <<EOF | kubectl apply -f -`), expanded
        unless its delimiter was quoted."""
        if seg.heredoc is None and seg.op == "|" and previous is not None and previous.heredoc is not None:
            seg = previous
        if seg.heredoc is None or seg.heredoc_quoted:
            return seg.heredoc
        return Expander(self.scope, self.unknown).text(seg.heredoc, unresolved)

    def _guard(self, seg: Segment, previous: Segment | None, *, defaults: bool = False) -> bool | None:
        """Whether a command after `[ test ] &&` / `||` runs: True (it runs, or nothing guards it), False (the test
        decides it does not, as the shell would), None (the test cannot be decided from the script)."""
        if seg.op not in ("&&", "||") or previous is None or previous.text.split(" ", 1)[0] not in _TESTS:
            return True
        passed = self._condition(previous.text, defaults=defaults)
        return None if passed is None else passed == (seg.op == "&&")

    def _assign_array(self, name: str, body: str, *, append: bool = False, sure: bool = True) -> None:
        """`NAME=(a "b c")`: a bash array ($NAME is its first item); `NAME+=(d)` appends, and an append that may or
        may not run (`[ "$X" -gt 1 ] && NAME+=(...)` with $X unknown) leaves the array unknown."""
        if not self.active:
            return
        if append and self.cases and self.cases[-1].on_argument and name in self.arrays and name not in self.unknown:
            self.soft.add(name)  # `--arg) EXTRA+=("$2")` in `case "$1"`: only when the script is given that option
            return
        words, unresolved = self._words(body)
        items = [*(self.arrays.get(name, []) if append else []), *(w.text for w in words)]
        uncertain = append and (name in self.unknown or not sure)
        if uncertain:
            unresolved.append(f"${{{name}[@]}}")
        self._record(name, "\0".join(items), array=True)
        self.arrays[name] = items
        self.scope[name] = items[0] if items else ""
        # items that only hold an unknown part (`"${MODEL_DIR}/m"`) keep it as written: the array is still known
        known = not uncertain and all(UNKNOWN_PART.search(w.text) for w in words if w.unresolved)
        (self.unknown.discard if known else self.unknown.add)(name)

    def _assign(self, word: Word, *, global_: bool, into: dict[str, str] | None = None) -> None:
        m = ASSIGNMENT.match(word.text)
        if not m:
            return
        name = m.group(1)
        option = word.unresolved or (self.cases and self.cases[-1].on_argument)
        if self.case_depth and option and name in self.scope and name not in self.unknown:
            # `-m) MODEL="$OPTARG"`, `--fast) FAST=true` in `case "$1"`: only when the script is given that option
            self.soft.add(name)
            return
        target = self.scope if global_ or into is None else into
        appended = word.text[len(name)] == "+"  # `cmd+=" --port $PORT"`: onto the value it holds
        value = target.get(name, self.scope.get(name, "")) + m.group(2) if appended else m.group(2)
        if global_ or into is None:
            self._record(name, value)
            self.exported |= {name} if self.allexport else set()
        target[name] = value
        empty_outside = value == "" and bool(word.empty_from)
        for flag, names in (
            (bool(word.unresolved) or (appended and name in self.unknown), self.unknown),
            (word.soft, self.soft),
            (empty_outside, self.outside),
        ):
            if flag:
                names.add(name)
            else:
                names.discard(name)
