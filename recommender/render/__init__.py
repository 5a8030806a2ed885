"""Deployment artifacts from a plan document: `vllm serve` command, systemd, Kubernetes, Helm values, compose."""
