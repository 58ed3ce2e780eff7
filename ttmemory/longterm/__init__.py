"""Long-term memory rules: terms and blind index, recall scoring, embedding calls, vector index,
extraction. Reads no session and writes nothing but what its callers (services) ask."""
