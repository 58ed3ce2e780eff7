"""Per-language rule files of the offline fact learner (data: one ``<language>.toml`` each)."""
