"""When nothing serves the target: the message cites the closest option and what would serve it (more nodes), or
says the prompt is longer than the model takes, not that nothing fits in memory."""

from __future__ import annotations

from .conftest import invoke

# --quantization fp8: its own FP8 weights only (NVIDIA's NVFP4 release, a variant, fits one node of H100s)
R1 = ["recommend", "--model", "deepseek-ai/DeepSeek-R1", "--gpu", "h100", "--quantization", "fp8"]


def test_latency_path_cites_the_closest_option_and_more_nodes() -> None:
    err = invoke([*R1, "--input-len", "2000", "--output-len", "500"], exit_code=3).stderr
    # TP=8 holds 79.3 GiB of FP8 weights per GPU (626.9 GiB at TP=1, the option cited before): the closest.
    assert "even the closest option (TP=8 PP=1, FP8 block 128x128, KV auto) needs 79.3 GiB of weights per GPU" in err
    assert "626.9" not in err
    assert "try --gpus-per-node 8 --nodes 2 (pipeline parallelism across nodes)" in err
    # The hint serves: two nodes of eight plan with pipeline parallelism.
    out = invoke([*R1, "--input-len", "2000", "--output-len", "500", "--gpus-per-node", "8", "--nodes", "2"]).stdout
    assert "TP=8 PP=2" in out


def test_memory_path_hints_more_nodes_too() -> None:
    err = invoke([*R1, "--context", "8k"], exit_code=3).stderr
    assert "(TP=8 PP=1, FP8 block 128x128, KV auto)" in err and "--nodes 2" in err


def test_an_over_long_prompt_is_said() -> None:
    err = invoke([*R1, "--input-len", "200000", "--output-len", "500"], exit_code=3).stderr
    assert "--input-len 200,000 + --output-len 500 = 200,500 tokens exceed" in err
    assert "limit of 163,840 tokens (max_position_embeddings)" in err and "fits in memory" not in err


def test_the_extrapolation_divides_what_several_engines_hold_by_all_their_gpus() -> None:
    """Qwen3.6-27B-FP8 on 8 x H100 at 1,000 x 8,192 tokens: the nearest option is 2 engines of TP 4 holding 814
    (407 each, the Mamba state blocks' cap; 816 before the MRotaryEmbedding's 4 x cache was counted). 814 on 8 GPUs
    is about 102 a GPU, so 1,000 requests need about 10 GPUs, not
    the 5 it printed when the two engines' figure was divided by one engine's 4 GPUs (more than the 8 it rejected)."""
    args = ["recommend", "--model", "Qwen/Qwen3.6-27B-FP8", "--gpu", "h100", "--gpus-per-node", "8"]
    err = invoke([*args, "--concurrency", "1000", "--context", "8192"], exit_code=3).stderr
    assert "2 engines on 8 GPUs hold 814, below 1,000; at that rate 1,000 requests need about 10 GPUs" in err
