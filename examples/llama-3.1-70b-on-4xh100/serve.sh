#!/bin/sh
# nvidia/Llama-3.1-70B-Instruct-FP8 served by vLLM 0.33.0: planned by vllm-plan 0.1.0.
# Predicted: 1310544 KV-cache tokens, 39.99x concurrency at 32768 tokens per request.
exec vllm serve nvidia/Llama-3.1-70B-Instruct-FP8 --tensor-parallel-size 4 --gpu-memory-utilization 0.92 --max-model-len 32768 --max-num-seqs 32 --max-num-batched-tokens 8192 --host 0.0.0.0 --port 8000
