"""Each namespace's fact generation, kept current by triggers (recall's in-memory vectors)."""

from django.db import migrations, models

from ttmemory.models.generation import FactGenerationTriggers


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0018_message_term_composite_key")]

    operations = [
        migrations.CreateModel(
            name="FactGeneration",
            fields=[
                (
                    "namespace",
                    models.CharField(max_length=255, primary_key=True, serialize=False),
                ),
                ("generation", models.BigIntegerField()),
            ],
            options={"verbose_name": "fact generation"},
        ),
        FactGenerationTriggers(),
    ]
