"""Model architecture as the memory model needs it: parsed from config.json, counted to the tensor."""
