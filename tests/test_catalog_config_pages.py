"""Transcribed config.json files against the byte counts their pages print (re-serialised at indent 2 as transformers
writes them), for the entries of many families at once."""

from __future__ import annotations

import pytest

from recommender.catalog import find_model

from .catalog_support import config_bytes


def test_catalog_round_7_minicpm_v_official_pages_whole() -> None:
    """MiniCPM-Llama3-V-2_5 and MiniCPM-V-2 come from the official repositories' blame pages, whose byte counts
    (1,373 and 1,179) the transcriptions re-serialised at indent 2 reproduce exactly; QwQ-32B-Preview from unsloth's
    re-save (728 bytes). A dropped or mistyped key would change the count."""
    for model, size in (
        ("openbmb/MiniCPM-Llama3-V-2_5", 1373),
        ("openbmb/MiniCPM-V-2", 1179),
        ("Qwen/QwQ-32B-Preview", 728),
    ):
        match = find_model(model)
        assert match is not None and match.entry.id == model
        assert config_bytes(dict(match.entry.config)) == size, model


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("baichuan-inc/Baichuan-13B-Chat", 733),
        ("baichuan-inc/Baichuan2-13B-Chat", 791),
        ("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", 905),
        ("TechxGenus/Mistral-Large-Instruct-2411-AWQ", 855),
        ("mistralai/Mistral-Large-Instruct-2411", 678),
        ("ModelCloud/Mistral-Large-Instruct-2407-gptq-4bit", 1094),
        ("nvidia/Llama-3.1-Nemotron-Nano-4B-v1.1", 910),
        ("Qwen/Qwen2-57B-A14B", 916),
        ("Qwen/Qwen-7B-Chat", 1107),
        ("Qwen/Qwen1.5-110B-Chat", 662),
        ("nvidia/Mistral-NeMo-Minitron-8B-Instruct", 702),
        ("deepseek-ai/deepseek-llm-67b-chat", 593),
        ("Qwen/Qwen1.5-4B-Chat", 666),
    ],
)
def test_catalog_round_8_pages_whole(model: str, size: int) -> None:
    """Each transcription re-serialised at indent 2 is exactly as long as the page it was copied from says its file
    is: a dropped or mistyped key would change the count."""
    match = find_model(model)
    assert match is not None and match.entry.id == model
    assert config_bytes(dict(match.entry.config)) == size
