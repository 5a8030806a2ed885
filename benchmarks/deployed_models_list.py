"""Regenerate benchmarks/data/deployed_models.txt: the model ids that public vLLM deployment material serves.

Reads git mirrors (`fetch github:OWNER/NAME` puts them under /work/.mirror/OWNER+NAME/repo) at a named revision
and collects every Hugging Face id written where a model is served: after `vllm serve`, `--model`, `model:`,
`model_id:`, `modelURL:`, `hf://`, `"model":`, `LLM(model=`, `huggingface.co/` and the like, in the repositories'
docs, examples, recipes and manifests; and, from vLLM's supported-models page, every example id of its tables
(written in backticks). One line per id and repository: `ID  github:OWNER/NAME@COMMIT:PATH` (the first file that
names it). An id named by several repositories has several lines, so the count of its lines is how widely it is
deployed. Left out, each by a rule below: placeholders and hub pages that are no model, LoRA adapters and
speculative-decoding drafts (never the served `--model`), weights for another engine (faster-whisper), and
diffusion pipelines (served by vllm-omni, not by vLLM's engine, and without a transformers config.json).

    python benchmarks/deployed_models_list.py --mirrors /work/.mirror --out benchmarks/data/deployed_models.txt
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

from recommender.console import run_script

# (repository, the mirror holding it, revision, path prefixes read; empty: every file). vLLM's own history is read
# from a fork that mirrors its release tags (a tag names the same commit in both).
SOURCES: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("vllm-project/recipes", "vllm-project+recipes", "HEAD", ()),
    ("vllm-project/vllm", "li2haipeng+vllm", "v0.14.0rc0", ("docs/", "examples/", "benchmarks/", "README.md")),
    ("vllm-project/production-stack", "vllm-project+production-stack", "HEAD", ()),
    ("vllm-project/aibrix", "vllm-project+aibrix", "HEAD", ()),
    ("substratusai/kubeai", "substratusai+kubeai", "HEAD", ()),
    ("llm-d/llm-d-benchmark", "llm-d+llm-d-benchmark", "HEAD", ()),
)
# An id the text goes on to complete with a template or shell variable (`nvidia/Llama-3.3-70B-Instruct-$DTYPE`,
# `org/model-{{ size }}`) is no id: the name before the variable is not a repository.
_ID = r"([A-Za-z0-9][A-Za-z0-9_.-]{1,40}/[A-Za-z0-9][A-Za-z0-9_.-]{0,96}[A-Za-z0-9])(?![A-Za-z0-9_.-]*[$%{])"
_SERVED = re.compile(
    r"(?:vllm\s+serve\s+|--model[= ]+|--model-name[= ]+|model_id:\s*|model:\s*|modelURL:\s*|hf://|\"model\":\s*"
    r"|'model':\s*|model=|MODEL(?:_NAME|_ID)?[=:]\s*|huggingface\.co/|--tokenizer[= ]+|\bmodel_name[:=]\s*"
    r"|repo_id[=:]\s*)[\"']?" + _ID
)
_TABLE_ID = re.compile(r"`" + _ID + r"`")
_TABLE_FILES = ("docs/models/supported_models.md",)
_READ = re.compile(r"\.(md|ya?ml|py|sh|json|txt|ipynb|rst|j2|tpl|toml|env)$|Dockerfile|Makefile")
# Not a served model: hub pages, placeholders, adapters, drafts, diffusion pipelines
_NOT_A_MODEL = re.compile(
    r"^(datasets|docs|collections|spaces|settings|learn|blog|papers|organizations|api|tasks|join|hosted_vllm|path|org|Org|me|myrepo|other|some-user"
    r"|some-huggingface-user|v1|prefill|models|community|frpc-gradio-0\.3|tiny-llama)/"
)
_ADAPTER_OR_DRAFT = re.compile(r"(?i)lora|eagle|speculator|dflash|dspark|-assistant$|accelerator|text2sql|colorist")
_OTHER_ENGINE = re.compile(r"(?i)faster-whisper")  # CTranslate2 weights (KubeAI's FasterWhisper engine)
_DIFFUSION = re.compile(
    r"(?i)diffusers|stable-diffusion|stable-audio|Qwen-Image|CogVideoX|HunyuanVideo|LongCat-Image|GLM-Image|Cosmos3"
)


def _git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True).stdout


def served_ids(text: str, path: str) -> set[str]:
    """The model ids a file names where a model is served (and every table id of the supported-models page)."""
    found = {m.group(1) for m in _SERVED.finditer(text)}
    if path in _TABLE_FILES:
        found |= {m.group(1) for m in _TABLE_ID.finditer(text)}
    ids = {i.rstrip(".").removesuffix(".git") for i in found}
    return {
        i
        for i in ids
        if i.count("/") == 1
        and not _NOT_A_MODEL.match(i)
        and not _ADAPTER_OR_DRAFT.search(i)
        and not _DIFFUSION.search(i)
        and not _OTHER_ENGINE.search(i)
    }


def collect(mirrors: Path) -> dict[str, list[str]]:
    """id -> one `github:REPO@COMMIT:PATH` per repository naming it. The hub resolves ids case-insensitively
    (`qwen/Qwen1.5-0.5B-Chat` is `Qwen/Qwen1.5-0.5B-Chat`): spellings that differ only in case are one id, written
    as most files spell it."""
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    where: dict[str, list[str]] = defaultdict(list)
    for repo, mirror_name, rev, prefixes in SOURCES:
        mirror = mirrors / mirror_name / "repo"
        commit = _git(mirror, "rev-parse", rev).strip()
        first: dict[str, str] = {}
        for path in sorted(_git(mirror, "ls-tree", "-r", "--name-only", commit).splitlines()):
            if (prefixes and not path.startswith(prefixes)) or not _READ.search(path):
                continue
            text = subprocess.run(
                ["git", "-C", str(mirror), "show", f"{commit}:{path}"], capture_output=True, text=True, errors="replace"
            ).stdout
            for i in sorted(served_ids(text, path)):
                spellings[i.lower()][i] += 1
                first.setdefault(i.lower(), path)
        for key, path in first.items():
            where[key].append(f"github:{repo}@{commit}:{path}")
    return {spellings[key].most_common(1)[0][0]: sources for key, sources in where.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--out", type=Path, default=Path("benchmarks/data/deployed_models.txt"))
    args = ap.parse_args()
    where = collect(args.mirrors)
    lines = [
        "# Model ids that public vLLM deployment material serves, one `ID  SOURCE` per line (an id named by several",
        "# repositories has one line each). Written by benchmarks/deployed_models_list.py (its docstring says what",
        "# is read and what is left out); benchmarks/catalog_coverage.py reports how many resolve offline.",
    ]
    lines += [f"{i}  {src}" for i in sorted(where, key=str.lower) for src in where[i]]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(where)} ids, {sum(len(v) for v in where.values())} lines -> {args.out}")


if __name__ == "__main__":
    run_script(main)
