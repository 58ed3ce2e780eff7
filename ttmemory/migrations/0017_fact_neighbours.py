"""Index of a namespace's facts in the order they were remembered (recall's neighbour context)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0016_recall_speed")]

    operations = [
        migrations.AddIndex(
            model_name="fact",
            index=models.Index(fields=["namespace", "id"], name="ttm_fact_ns_id_idx"),
        ),
    ]
