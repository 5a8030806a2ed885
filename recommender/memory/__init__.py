"""GPU-free model of vLLM's startup memory accounting (pure: no I/O)."""
