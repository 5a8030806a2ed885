"""When nothing serves the target: the message cites the closest option and what would serve it (more nodes), or
says the prompt is longer than the model takes, not that nothing fits in memory."""

from __future__ import annotations

from .conftest import invoke

R1 = ["recommend", "--model", "deepseek-ai/DeepSeek-R1", "--gpu", "h100"]


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
