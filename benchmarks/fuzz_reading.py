"""Hostile inputs for `check`'s readers that follow references (benchmarks/fuzz.py's kind `reading`): files that
run or source each other and Makefile variables that name each other, each a shape that made a reading never end
before its cap (at most 64 files run or sourced per reading, check/shell.py; at most 2,000 Makefile references
expanded per text, check/makefiles.py).

- self:   a script that runs itself on many lines (`./a.sh`, `bash a.sh`, `source a.sh`, `. ./a.sh`, `sh "$0"`);
- cycle:  scripts that run or source each other in a ring, several times each;
- tree:   a script that runs several others, each running several more (a wide tree, every one read);
- make-self: `A = $(A)$(A)$(A)$(A)` (make refuses it) on many rules' recipe lines;
- make-chain: variables each naming the next several times, deep (an exponential expansion make would finish);
- make-call: `define`s whose `$(call)` calls the next, several times, deep, or calls itself;
- make-script: a Makefile recipe running a script that runs `make` and itself.

Every case is a repository (a `.git` folder marks its root, as the readers follow files only inside one) and is
checked as a folder or as its entry file; the judge (fuzz.py) wants an answer within its timeout.
"""

from __future__ import annotations

import random
from collections.abc import Callable

SERVE = "vllm serve Qwen/Qwen2.5-0.5B-Instruct --max-model-len 4096"
GIT = {".git/HEAD": b"ref: refs/heads/main\n"}  # the repository's root: scripts run only files inside it
RUNS = ("./{0}", "bash {0}", "sh ./{0}", "source {0}", ". ./{0}", 'bash "$(dirname "$0")/{0}"', "exec ./{0}")

Files = dict[str, bytes]


def _script(lines: list[str]) -> bytes:
    return ("#!/bin/bash\n" + "\n".join(lines) + "\n").encode()


def _runs(rng: random.Random, name: str, times: int) -> list[str]:
    return [rng.choice(RUNS).format(name) for _ in range(times)]


def self_running(rng: random.Random) -> tuple[str, str, Files]:
    times = rng.choice((10, 30, 100, 400))
    lines = _runs(rng, "a.sh", times)
    lines.insert(rng.randrange(len(lines) + 1), SERVE)
    return f"a.sh runs itself {times} times", "a.sh", {"a.sh": _script(lines)}


def cycle(rng: random.Random) -> tuple[str, str, Files]:
    ring, times = rng.randint(2, 12), rng.choice((1, 3, 10, 40))
    names = [f"s{i}.sh" for i in range(ring)]
    files = {n: _script([*_runs(rng, names[(i + 1) % ring], times), SERVE]) for i, n in enumerate(names)}
    return f"{ring} scripts in a ring, each running the next {times} times", names[0], files


def tree(rng: random.Random) -> tuple[str, str, Files]:
    width, depth = rng.randint(3, 8), rng.randint(3, 5)
    files: Files = {}
    level = ["t.sh"]
    for d in range(depth):
        children = [f"t{d}_{i}.sh" for i in range(width)]
        for parent in level:
            files[parent] = _script([*(rng.choice(RUNS).format(c) for c in children), SERVE])
        level = children
    for leaf in level:
        files[leaf] = _script([SERVE])
    return f"a tree of scripts {width} wide, {depth} deep", "t.sh", files


def _makefile(head: list[str], recipes: list[str], rules: int) -> bytes:
    lines = [*head, ""]
    for i in range(rules):
        lines += [f"serve{i}:", *(f"\t{r}" for r in recipes), ""]
    return "\n".join(lines).encode()


def make_self(rng: random.Random) -> tuple[str, str, Files]:
    times, rules = rng.randint(2, 8), rng.choice((1, 20, 200, 1000))
    head = ["MODEL = " + "$(MODEL)" * times, "export MODEL"] if rng.random() < 0.5 else ["A = " + "$(A)" * times]
    recipe = "vllm serve $(MODEL) --port 8000" if "MODEL" in head[0] else "vllm serve $(A)"
    return (
        f"a variable naming itself {times} times, {rules} rules",
        "Makefile",
        {"Makefile": _makefile(head, [recipe], rules)},
    )


def make_chain(rng: random.Random) -> tuple[str, str, Files]:
    depth, fan, rules = rng.randint(8, 60), rng.randint(2, 6), rng.choice((1, 50, 500))
    head = [f"V{i} = " + f"$(V{i + 1})" * fan for i in range(depth)] + [f"V{depth} = x"]
    if rng.random() < 0.3:  # and back to the top: a cycle
        head[-1] = f"V{depth} = $(V0)"
    recipes = [f"vllm serve $(V0) --max-model-len {rng.choice((4096, 8192))}"]
    return (
        f"a chain of {depth} variables naming the next {fan} times, {rules} rules",
        "Makefile",
        {"Makefile": _makefile(head, recipes, rules)},
    )


def make_call(rng: random.Random) -> tuple[str, str, Files]:
    depth, fan, rules = rng.randint(4, 40), rng.randint(1, 5), rng.choice((1, 50, 300))
    head: list[str] = []
    for i in range(depth):
        body = "".join(f"$(call f{i + 1},$(1)$(1))" for _ in range(fan)) if i + 1 < depth else "$(1)"
        head += [f"define f{i}", body, "endef"]
    if rng.random() < 0.4:  # a function that calls itself
        head += ["define loop", "$(call loop,$(call loop,$(1)))", "endef"]
        recipes = ["$(call loop,x)", f"{SERVE} $(call f0,a)"]
    else:
        recipes = [f"{SERVE} --served-model-name $(call f0,a)"]
    return (
        f"$(call) {depth} deep, {fan} calls each, {rules} rules",
        "Makefile",
        {"Makefile": _makefile(head, recipes, rules)},
    )


def make_script(rng: random.Random) -> tuple[str, str, Files]:
    times, rules = rng.choice((3, 20, 100)), rng.choice((1, 30))
    files = {
        "Makefile": _makefile([], ["./run.sh", "$(MAKE) serve0"], rules),
        "run.sh": _script([*(["make serve0", "./run.sh"] * times), SERVE]),
    }
    return f"a Makefile and a script running each other {times} times", "Makefile", files


SHAPES: dict[str, Callable[[random.Random], tuple[str, str, Files]]] = {
    "self": self_running,
    "cycle": cycle,
    "tree": tree,
    "make-self": make_self,
    "make-chain": make_chain,
    "make-call": make_call,
    "make-script": make_script,
}


def hostile_reading(rng: random.Random) -> tuple[str, str, Files]:
    """(label, the file or folder to check relative to the case's folder, the files), a repository of one shape."""
    shape = rng.choice(sorted(SHAPES))
    label, entry, files = SHAPES[shape](rng)
    return f"{shape}: {label}", "." if rng.random() < 0.4 else entry, {**GIT, **files}
