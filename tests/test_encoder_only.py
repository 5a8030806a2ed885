"""Encoder-only pooling models (BERT, XLM-RoBERTa embedders and rerankers, is_causal-false decoders): vLLM keeps no
KV cache for them, runs no profiling pass and no chunked prefill (memory/no_kv.py). Parameter counts are checked by
hand from the configs' dimensions; the scheduler defaults from engine/arg_utils.py's rules."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from recommender.catalog import load_gpus
from recommender.errors import UnsupportedArchitectureError
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.memory.weights import Parallel, weight_bytes_per_gpu
from recommender.model.parse import parse_config
from recommender.sources.resolve import resolve_model
from recommender.units import GiB
from tests.conftest import invoke

L4 = resolve_gpu("l4", load_gpus())
H100 = resolve_gpu("h100", load_gpus())
V033 = VllmVersion.parse("0.33.0")

# XLM-RoBERTa-large (bge-m3, bge-reranker-v2-m3): hidden 1024, 24 layers, MLP 4096, 250,002 tokens, 8194 positions
# one layer: qkv 3 x (1024 x 1024 + 1024) + out 1024 x 1024 + 1024 + MLP 4096 x 1024 + 4096 + 1024 x 4096 + 1024
# + two LayerNorms 2 x 2048 = 3,148,800 + 1,049,600 + 4,198,400 + 4,195,328 + 4,096 = 12,596,224
XLMR_LAYER = 12_596_224
XLMR_EMBEDDINGS = 250_002 * 1024 + 8194 * 1024 + 1 * 1024  # word + position + one token type = 264,393,728
XLMR_ENCODER = XLMR_EMBEDDINGS + 2048 + 24 * XLMR_LAYER  # + the embeddings' LayerNorm = 566,705,152
POOLER_1024 = 1024 * 1024 + 1024


def test_bge_m3_parameters_by_hand() -> None:
    """567,754,752: the encoder, plus the checkpoint's pooler, which vLLM's loader drops (bert.py `pooler.` -> None)."""
    spec = resolve_model("BAAI/bge-m3")
    assert spec.params is not None and spec.params.embedding == XLMR_EMBEDDINGS == 264_393_728
    assert spec.params.total == XLMR_ENCODER + POOLER_1024 == 567_754_752
    assert spec.encoder_only and spec.pooling and spec.params.lm_head == 0
    assert spec.max_model_len == 8192  # 8194 position rows less pad_token_id 1 + 1 (RoBERTa's offset)
    # loaded in 16 bits: the encoder without the pooler, the word table padded to 250,048 rows (46 x 1024 more)
    loaded = weight_bytes_per_gpu(spec, Parallel(tp=1, pp=1), dtype_bytes=2, quant=None)
    assert loaded == (566_705_152 + 46 * 1024) * 2 == 1_133_504_512


def test_bge_reranker_classification_head_by_hand() -> None:
    """XLMRobertaForSequenceClassification: no pooler; classifier.dense 1024 x 1024 + 1024 and out_proj 1 x 1024 + 1."""
    spec = resolve_model("BAAI/bge-reranker-v2-m3")
    assert spec.params is not None and spec.classifier_labels == 1 and spec.pooling and spec.encoder_only
    assert spec.params.total == XLMR_ENCODER + POOLER_1024 + 1024 + 1 == 567_755_777
    loaded = weight_bytes_per_gpu(spec, Parallel(tp=1, pp=1), dtype_bytes=2, quant=None)
    assert loaded == (567_755_777 + 46 * 1024) * 2  # the head is loaded


@pytest.mark.parametrize(
    ("model", "total"),
    [
        # 6 layers of 384: word 30,522 x 384 + 512 positions + 2 token types + LN = 11,918,592; a layer
        # 3 x 147,840 + 147,840 + 591,360 + 590,208 + 1,536 = 1,774,464; pooler 384 x 384 + 384 = 147,840
        ("sentence-transformers/all-MiniLM-L6-v2", 11_918_592 + 6 * 1_774_464 + 147_840),
        # BERT-large: 30,522 x 1024 + 512 x 1024 + 2 x 1024 + 2,048 = 31,782,912; 24 x 12,596,224; pooler 1,049,600
        ("BAAI/bge-large-en-v1.5", 31_782_912 + 24 * XLMR_LAYER + POOLER_1024),
        # 12 layers of 384: the MiniLM embeddings and layer, twice as many layers: 33,360,000
        ("BAAI/bge-small-en-v1.5", 11_918_592 + 12 * 1_774_464 + 147_840),
    ],
)
def test_bert_parameters_by_hand(model: str, total: int) -> None:
    spec = resolve_model(model)
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 512
    assert spec.family == "BERT-style encoder" and spec.encoder_only


def test_all_minilm_total_is_the_published_figure() -> None:
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2").params.total == 22_713_216  # type: ignore[union-attr]


def test_no_kv_cache_and_the_scheduler_defaults() -> None:
    """bge-m3 on an L4 (< 70 GiB: usage default 2048 tokens, 256 sequences): chunked prefill off, so the budget is
    max(8192, 2048) = 8192, capped at 256 x 8192; no blocks, no KV lines; one step holds one 8192-token request."""
    e = explain(resolve_model("BAAI/bge-m3"), L4, EngineFlags(), V033)
    assert e.fits and e.no_kv_cache and e.num_gpu_blocks == 0 and e.kv_cache_tokens == 0
    assert (e.max_model_len, e.max_num_seqs, e.max_num_batched_tokens) == (8192, 256, 8192)
    assert e.max_concurrency == 1.0 and e.concurrency_for(512) == 16.0 and e.longest_len(4) == 2048
    assert e.fits_one_request(8192) and not e.fits_one_request(8193)
    assert e.stage.available_kv == 0 and e.has(IssueKind.NO_KV_CACHE)
    minilm = explain(resolve_model("sentence-transformers/all-MiniLM-L6-v2"), L4, EngineFlags(), V033)
    assert minilm.max_num_batched_tokens == 2048 and minilm.max_concurrency == 4.0  # max(512, 2048) // 512


def test_budget_below_the_length_is_vllms_error() -> None:
    """config/scheduler.py verify_max_model_len: without chunked prefill a budget below max_model_len is refused."""
    e = explain(resolve_model("BAAI/bge-m3"), L4, EngineFlags(max_num_batched_tokens=4096), V033)
    assert not e.fits and e.error_kinds == (IssueKind.BATCHED_BELOW_MAX_LEN,)
    ok = explain(resolve_model("BAAI/bge-m3"), L4, EngineFlags(max_num_batched_tokens=4096, max_model_len=4096), V033)
    assert ok.fits


def test_chunked_prefill_forced_warns_and_keeps_the_usage_budget() -> None:
    """--enable-chunked-prefill: vLLM's warning; the budget stays the usage default (2048), no max with the length."""
    e = explain(resolve_model("BAAI/bge-m3"), L4, EngineFlags(enable_chunked_prefill=True), V033)
    assert e.has(IssueKind.NO_KV_CHUNKED_PREFILL) and e.max_num_batched_tokens == 2048 and e.fits


def test_warmup_beyond_free_memory_is_an_oom() -> None:
    """The warm-up of 480,000 tokens: 480,000 x 47,000 bytes (the forward pass per token) = 22.56 GB, with 1.06 GiB
    of weights, 0.25 non-torch, the graphs and 0.5 GiB of CUDA context: above the L4's 21.99 GiB, whatever the
    utilization (nothing of it is budgeted)."""
    flags = EngineFlags(max_num_batched_tokens=480_000, max_num_seqs=48)
    e = explain(resolve_model("BAAI/bge-m3"), L4, flags, V033)
    st = e.stage
    assert st.activation_peak == 480_000 * 47_000 == 22_560_000_000
    oom = e.issue(IssueKind.NO_KV_WARMUP_OOM)
    assert oom is not None and not e.fits
    assert oom.needed_bytes == st.weights + st.non_torch + st.activation_peak + st.cudagraph + GiB // 2
    assert oom.available_bytes == L4.total_bytes
    low = explain(resolve_model("BAAI/bge-m3"), L4, EngineFlags(max_num_batched_tokens=480_000, max_num_seqs=48,
                                                                  gpu_memory_utilization=0.5), V033)  # fmt: skip
    assert low.has(IssueKind.NO_KV_WARMUP_OOM)  # the utilization does not bound the warm-up
    fits = explain(resolve_model("BAAI/bge-m3"), L4, EngineFlags(max_num_batched_tokens=262_144), V033)
    assert fits.fits and not fits.at_risk


def test_is_causal_false_decoder_keeps_no_kv_cache_and_a_causal_one_does() -> None:
    gte = explain(resolve_model("Alibaba-NLP/gte-Qwen2-7B-instruct"), H100, EngineFlags(max_model_len=8192), V033)
    assert gte.no_kv_cache and gte.num_gpu_blocks == 0
    qwen3 = explain(resolve_model("Qwen/Qwen3-Embedding-0.6B"), H100, EngineFlags(), V033)
    assert not qwen3.no_kv_cache and qwen3.num_gpu_blocks > 0  # causal, last-token pooling: Qwen3's KV cache


def test_other_encoders_and_task_heads_stay_refused() -> None:
    for config in (
        {"architectures": ["ModernBertModel"], "model_type": "modernbert"},
        {"architectures": ["BertForMaskedLM"], "model_type": "bert"},
    ):
        with pytest.raises(UnsupportedArchitectureError):
            parse_config(config, name="m", source="test")


def test_labels_from_num_labels_or_id2label() -> None:
    config = {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "hidden_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 128,
        "vocab_size": 100,
        "max_position_embeddings": 32,
    }
    two = parse_config(config, name="m", source="t")
    three = parse_config({**config, "id2label": {"0": "a", "1": "b", "2": "c"}}, name="m", source="t")
    assert (two.classifier_labels, three.classifier_labels) == (2, 3)
    # BERT's head: the pooler (64 x 64 + 64) and the classifier (labels x 64 + labels), both loaded
    assert three.params is not None and two.params is not None
    assert three.params.total - two.params.total == 64 + 1


def test_explain_cli_prints_no_kv_lines() -> None:
    out = invoke(["explain", "BAAI/bge-m3", "--gpu", "l4"]).stdout
    assert "no KV cache, max_model_len 8,192" in out and "GPU KV cache size:" not in out
    assert "Per step: 1 request of 8,192 tokens (--max-num-seqs 256, --max-num-batched-tokens 8,192" in out
    models = invoke(["models", "bge-m3"]).stdout
    assert "XLMRobertaModel" in models and "encoder-only" in models
    assert "Verdict: vLLM starts" in out


def test_recommend_sizes_the_token_budget_for_n_requests() -> None:
    """16 requests of 8192 tokens at once on an L4: --max-num-seqs 16, --max-num-batched-tokens 16 x 8192."""
    out = invoke(["recommend", "--model", "BAAI/bge-m3", "--gpu", "l4", "--concurrency", "16", "--format", "json"])
    doc = json.loads(out.stdout)
    joined = shlex.join(doc["command"])
    assert "--max-num-seqs 16" in joined and "--max-num-batched-tokens 131072" in joined
    assert "--max-model-len 8192" in joined and "--kv-cache-dtype" not in joined


def test_recommend_more_replicas_when_one_warm_up_cannot_hold_n() -> None:
    """64 x 8192 = 524,288 tokens a step: 24.6 GB of forward pass alone on one L4; two replicas of 32 fit."""
    out = invoke(["recommend", "--model", "BAAI/bge-m3", "--gpu", "l4", "--concurrency", "64", "--context", "8192"])
    assert "32 requests of 8,192 tokens per replica x 2" in out.stdout
    assert "--max-num-seqs 32 --max-num-batched-tokens 262144" in out.stdout


def test_perf_refuses_pooling_models_in_one_line() -> None:
    for argv in (
        ["perf", "BAAI/bge-m3", "--gpu", "l4", "--input-len", "512", "--output-len", "1"],
        ["perf", "Qwen/Qwen3-Embedding-0.6B", "--gpu", "l4", "--input-len", "512", "--output-len", "1"],
        ["recommend", "--model", "BAAI/bge-m3", "--gpu", "l4", "--input-len", "512", "--output-len", "1"],
    ):
        result = invoke(argv, exit_code=2)
        assert "pooling runner" in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_check_reads_an_embedding_server(tmp_path: Path) -> None:
    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/sh\nvllm serve BAAI/bge-m3 --max-num-batched-tokens 4096\n")
    result = invoke(["check", str(script), "--gpu", "l4"], exit_code=1)
    assert "max_num_batched_tokens (4096) is smaller than max_model_len (8192)" in result.stdout
    script.write_text("#!/bin/sh\nvllm serve BAAI/bge-m3 --max-num-batched-tokens 131072 --max-num-seqs 16\n")
    assert "PASS" in invoke(["check", str(script), "--gpu", "l4"]).stdout


def test_plan_render_and_check_round_trip(tmp_path: Path) -> None:
    """A no-KV plan writes no KV-cache-tokens annotation (0 is no claim), and its artifacts pass check."""
    plan = tmp_path / "plan.yaml"
    invoke(["recommend", "--model", "BAAI/bge-m3", "--gpu", "l4", "--concurrency", "16", "-o", str(plan)])
    out = tmp_path / "out"
    invoke(["render", str(plan), "--emit", "command,k8s,compose", "-o", str(out)])
    assert '"vllm-plan.io/kv-cache-tokens": ""' in (out / "kubernetes.yaml").read_text()
    assert (
        "# Predicted: no KV cache (encoder-only attention); a step of 131,072 tokens holds 16.0 requests of 8,192 "
        "tokens; vLLM runs at most 16 at once (--max-num-seqs).\n"
    ) in (out / "serve.sh").read_text()
    result = invoke(["check", str(plan), *sorted(str(p) for p in out.iterdir())])
    assert "FAIL" not in result.stdout and result.stdout.count("PASS") == 4


def test_check_fixes_a_warm_up_oom_with_the_largest_budget_that_fits(tmp_path: Path) -> None:
    """600,000 tokens a step do not fit an L4's 21.99 GiB; 52 x 8192 = 425,984 do with the ~1 GiB margin (53 x 8192
    = 434,176 tokens: 20.41 GB of forward pass, 1.06 + 0.25 + 0.42 + 0.5 GiB beside it, leave 0.78 GiB)."""
    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/sh\nvllm serve BAAI/bge-m3 --max-num-batched-tokens 600000 --max-num-seqs 64\n")
    out = invoke(["check", str(script), "--gpu", "l4"], exit_code=1).stdout
    assert "CUDA out of memory while warming up the model with 600,000 tokens" in out
    assert "fix: lower --max-num-batched-tokens to 425,984 (then 52 requests of 8,192 tokens a step)" in out
    assert "--kv-cache-dtype" not in out


@pytest.mark.parametrize(
    ("model", "engine_note"),
    [("BAAI/bge-m3", "on the V0 engine (SupportsV0Only)"), ("Alibaba-NLP/gte-Qwen2-7B-instruct", "causal attention")],
)
def test_before_0_10_1_these_models_kept_a_kv_cache(model: str, engine_note: str) -> None:
    """bert.py / roberta.py were SupportsV0Only and qwen2.py ignored is_causal until 0.10.1: planned with a KV cache
    (the V0 engine for the BERT-style classes); from 0.10.1 without."""
    spec = resolve_model(model)
    old = explain(spec, L4, EngineFlags(max_model_len=8192), VllmVersion.parse("0.10.0"))
    assert not old.no_kv_cache and old.num_gpu_blocks > 0
    note = old.issue(IssueKind.NO_KV_CACHE)
    assert note is not None and engine_note in note.message
    assert old.has(IssueKind.V0_ENGINE) is (spec.family == "BERT-style encoder")
    new = explain(spec, L4, EngineFlags(max_model_len=8192), VllmVersion.parse("0.10.1"))
    assert new.no_kv_cache and new.num_gpu_blocks == 0 and not new.has(IssueKind.V0_ENGINE)


def test_recommend_context_alone_fills_the_release_max_num_seqs_when_the_warm_up_allows() -> None:
    """--context 512 on an L4: the 256 default sequences x 512 = 131,072 tokens a step fit (6.16 GB of forward pass);
    at 8,192 tokens, 52 x 8,192 = 425,984 is inside the ~1 GiB margin and 51 x 8,192 = 417,792 is the most."""
    short = invoke(["recommend", "--model", "BAAI/bge-m3", "--gpu", "l4", "--context", "512"]).stdout
    assert "256 requests of 512 tokens per replica x 1" in short and "--max-num-batched-tokens 131072" in short
    long = invoke(["recommend", "--model", "BAAI/bge-m3", "--gpu", "l4", "--context", "8192"]).stdout
    assert "51.0 requests of 8,192 tokens per replica x 1" in long and "--max-num-batched-tokens 417792" in long


def test_html_report_names_no_kv_cache(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    invoke(["explain", "BAAI/bge-m3", "--gpu", "l4", "--format", "html", "-o", str(page)])
    text = page.read_text()
    assert "none (encoder-only attention)" in text and "Available KV cache memory" not in text


def test_float32_pooling_checkpoint_is_served_in_float16_from_0_9_1() -> None:
    """config/model.py _resolve_auto_dtype (vllm#18751, 0.9.1): a pooling model's float32 weights go to float16, a
    generator's to the platform's first dtype (bfloat16 here); the bytes are the same."""
    spec = resolve_model("BAAI/bge-m3")
    assert spec.dtype == "float32"
    assert explain(spec, L4, EngineFlags(), V033).weight_dtype == "float16"
    assert explain(spec, L4, EngineFlags(), VllmVersion.parse("0.9.0")).weight_dtype == "bfloat16"
    assert explain(spec, L4, EngineFlags(dtype="bfloat16"), V033).weight_dtype == "bfloat16"


def test_task_embed_loads_the_pooling_runner_before_0_13() -> None:
    """--task embed (0.6.4 to 0.12): the pooling runner, no LM head: Qwen2.5-7B-Instruct's untied 152,064 x 3,584
    head in 16 bits, 1,089,994,752 bytes, is not loaded; --task generate keeps it; 0.33's parser has no --task."""
    from recommender.serve_args import parse_serve_argv

    spec = resolve_model("Qwen/Qwen2.5-7B-Instruct")
    v092 = VllmVersion.parse("0.9.2")

    def weights(extra: list[str]) -> int:
        cmd = parse_serve_argv(["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "4096", *extra])
        return explain(spec, H100, cmd.engine_flags(), v092).stage.weights

    assert weights([]) - weights(["--task", "embed"]) == 152_064 * 3_584 * 2 == 1_089_994_752
    assert weights(["--task", "generate"]) == weights([])
    out = invoke(["explain", "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--task", "embed"],
                 exit_code=2)  # fmt: skip
    assert "--task" in out.stderr


def test_the_plan_names_a_float32_checkpoint_as_served_in_16_bits() -> None:
    # `--dtype auto` never serves float32 weights: the plan's weights say what runs, and what the checkpoint holds.
    doc = json.loads(
        invoke(["recommend", "--model", "BAAI/bge-m3", "--gpu", "l4", "--concurrency", "8", "--format", "json"]).stdout
    )
    assert doc["weights"] == "16-bit (float32 checkpoint)"
