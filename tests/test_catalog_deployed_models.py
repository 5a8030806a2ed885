"""The list of models public vLLM material serves (benchmarks/data/deployed_models.txt, read by
benchmarks/catalog_coverage.py), and catalog entries added because that list names them: each checked against its
source by hand (the docstring says which)."""

from __future__ import annotations

import re
from pathlib import Path

from recommender.sources.resolve import resolve_model

LIST = Path(__file__).parent.parent / "benchmarks" / "data" / "deployed_models.txt"
# `ID  github:OWNER/NAME@COMMIT:PATH`
_LINE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+  github:[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S+$")


def test_every_listed_id_names_the_repository_commit_and_file_it_comes_from() -> None:
    lines = [line for line in LIST.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    bad = [line for line in lines if not _LINE.match(line)]
    assert bad == [] and len(lines) >= 800
    pairs = [(line.split()[0].lower(), line.split()[1].split("@")[0]) for line in lines]
    assert len(pairs) == len(set(pairs)), "an id is listed twice for one repository"


def test_orion_14b_chat_by_hand() -> None:
    """Orion-14B-Chat (mlc-llm's preset, whose commit names the repository): 40 layers of 5120 with 40 full heads
    (q/k/v/o 4 x 5120^2), MLP 3 x 5120 x 15360, two norms, untied 84,608-row embedding and head, final norm:
    14,498,288,640 parameters counted with RMSNorm-sized norms (OrionStar's "14B"; vLLM's OrionForCausalLM uses
    LayerNorm with biases, 414,720 more, which is why the entry is approximate)."""
    h, vocab = 5120, 84608
    total = 40 * (4 * h * h + 3 * h * 15360 + 2 * h) + 2 * vocab * h + h
    assert total == 14_498_288_640
    spec = resolve_model("OrionStarAI/Orion-14B-Chat")
    assert spec.params is not None and spec.params.total == total
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (40, 128, 4096)
    assert any("orion" in reason for reason in spec.approximate)


def test_ministral_3_3b_reasoning_by_hand() -> None:
    """Ministral 3 3B Reasoning 2512 (mlc-llm's preset of its config.json): 26 text layers of 3072 (q 3072 x 32 x
    128, o back, k/v 3072 x 8 x 128, gated MLP 3 x 3072 x 9216, two RMSNorms), tied 131,072-row embedding, final
    norm: 3,429,006,336 text parameters (Mistral's "3.4B language model"), plus the 24-layer Pixtral encoder of 1024
    counted as vision; 262,144 positions (YaRN factor 16 over 16,384)."""
    h = 3072
    text = 26 * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 9216 + 2 * h) + 131072 * h + h
    assert text == 3_429_006_336
    spec = resolve_model("mistralai/Ministral-3-3B-Reasoning-2512")
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert 0.3e9 < spec.params.vision < 0.45e9
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 262144)
