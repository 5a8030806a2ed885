"""What the `check` reader tests share: writing the files of a case into a folder, the servers `check` finds in a
file, and the engine settings it takes for one."""

from __future__ import annotations

from pathlib import Path

from recommender.check import shell
from recommender.check.found import Found
from recommender.check.inputs import load_inputs
from recommender.check.run import config_beside, engine_summary
from recommender.serve_args import parse_serve_argv


def write_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def write_files(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def found_in(path: Path) -> list[Found]:
    return load_inputs((str(path),)).found


def engine_settings(found: Found) -> dict[str, object]:
    """The engine settings `check` takes for a server found, its --config read as `check` reads one."""
    from recommender.cli.check_cmd import _read_config

    read = config_beside(_read_config, found.source, found.files)
    cmd = parse_serve_argv(list(found.argv), read_config=read, serve=found.serve_form)
    return dict(engine_summary(cmd))


def serves(script: str, env: dict[str, str] | None = None) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The words and unresolved words of each `vllm serve` command the mini shell runs in a script."""
    return [(c.words, c.unresolved) for c in shell.run_script(script, env) if c.words[:2] == ("vllm", "serve")]
