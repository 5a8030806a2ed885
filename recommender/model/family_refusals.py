"""Architectures vllm-plan refuses by name (encoder-only, encoder-decoder, task heads), and the releases that last
served the architectures vLLM dropped (`SERVED_UNTIL`)."""

from __future__ import annotations

from recommender.model.family_spec import BERT_TYPES

_ENCODER_ONLY_TYPES = frozenset(
    {
        "distilbert",
        "electra",
        "deberta",
        "deberta-v2",
        "modernbert",
        "nomic_bert",
        "albert",
        "mpnet",
        "camembert",
        "new",
        "xlm-roberta-xl",
        "ernie",
    }
)
_ENCODER_DECODER_TYPES = frozenset({"t5", "mt5", "umt5", "bart", "mbart", "pegasus", "marian", "whisper", "m2m_100"})
_TASK_HEADS = ("ForTokenClassification", "ForMaskedLM", "ForQuestionAnswering")


def _task_head(arch: str) -> str:
    return next(h for h in _TASK_HEADS if arch.endswith(h)).removeprefix("For")


# vllm/model_executor/models/registry.py _PREVIOUSLY_SUPPORTED_MODELS (0.33.0): the last release that served them.
# AquilaModel, Grok1ModelForCausalLM, TeleChatForCausalLM, FuyuForCausalLM and OuroForCausalLM as the same table
# states them beside their siblings (a registry.py copy in the code index, id 58315171810: "AquilaModel": "0.24.0",
# "Grok1ModelForCausalLM": "0.24.0", "TeleChatForCausalLM": "0.25.0", "FuyuForCausalLM": "0.25.0",
# "OuroForCausalLM": "0.26.0").
SERVED_UNTIL: dict[str, str] = {
    "MotifForCausalLM": "0.10.2",
    "Phi3SmallForCausalLM": "0.9.2",
    "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0",
    "DonutForConditionalGeneration": "0.10.2",
    "MllamaForConditionalGeneration": "0.10.2",
    "BambaForCausalLM": "0.23.0",
    "MiniMaxForCausalLM": "0.23.0",
    "MiniMaxText01ForCausalLM": "0.23.0",
    "MiniMaxM1ForCausalLM": "0.23.0",
    "BaiChuanForCausalLM": "0.23.0",
    "BaichuanForCausalLM": "0.23.0",
    "QWenLMHeadModel": "0.23.0",
    "InternLMForCausalLM": "0.23.0",
    "XverseForCausalLM": "0.23.0",
    "AquilaModel": "0.24.0",
    "AquilaForCausalLM": "0.24.0",
    "Grok1ModelForCausalLM": "0.24.0",
    "Grok1ForCausalLM": "0.24.0",
    "TeleChatForCausalLM": "0.25.0",
    "PersimmonForCausalLM": "0.25.0",
    "FuyuForCausalLM": "0.25.0",
    "Plamo2ForCausalLM": "0.26.0",
    "OuroForCausalLM": "0.26.0",
    "ArcticForCausalLM": "0.28.0",
    "MPTForCausalLM": "0.28.0",
    "MptForCausalLM": "0.28.0",
    "RWForCausalLM": "0.28.0",
    "StableLMEpochForCausalLM": "0.28.0",
}


def refusal(arch: str, model_type: str) -> str | None:
    """Why vllm-plan does not plan this architecture (a decoder served for generation is planned), or None."""
    if model_type in _ENCODER_ONLY_TYPES:
        return (
            f"{arch} (model_type {model_type!r}) is an encoder-only model vllm-plan does not lay out: it plans the "
            f"BERT / RoBERTa / XLM-RoBERTa encoders ({', '.join(BERT_TYPES)}) and decoder-based embedders"
        )
    if arch.endswith(_TASK_HEADS):
        return (
            f"{arch} (model_type {model_type!r}) has a {_task_head(arch)} head vllm-plan does not lay out: it plans "
            "the base models (*Model) and *ForSequenceClassification rerankers and classifiers"
        )
    if model_type in _ENCODER_DECODER_TYPES:
        return (
            f"{arch} (model_type {model_type!r}) is an encoder-decoder model: vLLM 0.33 serves none in-tree except "
            "Whisper, whose encoder cache vllm-plan does not model"
        )
    return None
