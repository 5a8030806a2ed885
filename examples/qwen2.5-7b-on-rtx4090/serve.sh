#!/bin/sh
# Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 served by vLLM 0.33.0: planned by vllm-plan 0.1.0.
# Predicted: 577696 KV-cache tokens, 70.52x concurrency at 8192 tokens per request.
exec vllm serve Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 --kv-cache-dtype fp8 --gpu-memory-utilization 0.92 --max-model-len 8192 --max-num-seqs 60 --max-num-batched-tokens 2048 --host 0.0.0.0 --port 8000
