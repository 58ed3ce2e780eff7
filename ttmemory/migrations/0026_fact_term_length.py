"""Each fact posting carries its fact's length (``term_count``), and the postings index covers
everything BM25 needs, so recall ranks a word's postings from the index alone and reads a fact
row only for the facts ranked first (docs/benchmarks.md, "Repetitive vocabulary"). The existing
postings are filled from their facts; the new index is built before the old one is dropped
(both read every posting once: a large index takes a while, and writes to it wait meanwhile)."""

from typing import Any

from django.db import migrations, models


def fill_lengths(apps: Any, schema_editor: Any) -> None:
    fact_table = schema_editor.quote_name(apps.get_model("ttmemory", "Fact")._meta.db_table)
    term_table = schema_editor.quote_name(apps.get_model("ttmemory", "FactTerm")._meta.db_table)
    if schema_editor.connection.vendor == "postgresql":
        sql = (
            f"UPDATE {term_table} p SET length = f.term_count FROM {fact_table} f "
            "WHERE f.id = p.fact_id AND p.length <> f.term_count"
        )
    else:
        sql = (
            f"UPDATE {term_table} SET length = (SELECT f.term_count FROM {fact_table} f "
            f"WHERE f.id = {term_table}.fact_id)"
        )
    schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("ttmemory", "0025_message_term_newest_first"),
    ]

    operations = [
        migrations.AddField(
            model_name="factterm",
            name="length",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(fill_lengths, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="factterm",
            index=models.Index(
                fields=["namespace", "term", "fact", "tf", "length"],
                name="ttm_factterm_ns_term_cov_idx",
            ),
        ),
        migrations.RemoveIndex(
            model_name="factterm",
            name="ttm_factterm_ns_term_idx",
        ),
    ]
