"""ttmemory: memory for LLM agents in a Django project; the public face is ``ttmemory.memory``."""
