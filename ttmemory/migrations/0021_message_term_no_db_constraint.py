"""``MessageTerm.session`` without a database foreign-key constraint: the deferred check ran once
per posting at commit, as costly as the postings' COPY (``ttmemory.models.episode``)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0020_fact_generation_term_count")]

    operations = [
        migrations.AlterField(
            model_name="messageterm",
            name="session",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="ttmemory.memorysession",
            ),
        ),
    ]
