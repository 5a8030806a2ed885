"""Where model configs come from: a local directory, the bundled catalog, or the Hugging Face hub."""
