"""Recall speed: BM25 statistics from an index, pgvector's HnswIndex per shipped dimension.

The HNSW indexes exist only where fact vectors are pgvector's (``HnswIndexesIfAvailable``);
on a table that already holds many vectors of those dimensions, building them takes a while
(see docs/benchmarks.md for the build time at 1 M facts).
"""

from django.db import migrations, models

import ttmemory.models.vectors


class Migration(migrations.Migration):
    dependencies = [
        ("ttmemory", "0015_llm_rate_bucket"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="fact",
            name="ttm_fact_ns_kind_idx",
        ),
        migrations.AddIndex(
            model_name="fact",
            index=models.Index(
                fields=["namespace", "kind", "term_count"], name="ttm_fact_ns_kind_len_idx"
            ),
        ),
        ttmemory.models.vectors.HnswIndexesIfAvailable(dimensions=[384, 1536]),
    ]
