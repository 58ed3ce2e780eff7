"""The fact generation also changes with ``term_count``: recall keeps BM25 statistics per
namespace and generation (``ttmemory.longterm.vector_cache``)."""

from django.db import migrations

from ttmemory.models.generation import FactGenerationTriggers


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0019_fact_generation")]

    operations = [FactGenerationTriggers(version=2, previous=1)]
