"""Episodic postings with two B-trees instead of three (the write path of issue 16).

``MessageTerm`` loses its surrogate ``id``: the primary key becomes ``(session, seq, term)``
(the unique constraint it replaces), and the ``(namespace, term)`` index becomes ``(term)``
(term hashes are keyed per namespace; queries still filter by namespace). Existing postings
are kept: on PostgreSQL the table is altered in place (dropping ``id`` is a catalogue change;
the primary key and the term index are built once), on SQLite it is copied into a new table.
"""

from typing import Any

from django.db import migrations, models

TABLE = "ttmemory_messageterm"
OLD = "ttmemory_messageterm__0017"


def rebuild_postings(apps: Any, schema_editor: Any) -> None:
    """Lay the table out as the model now says (the state changed above, the rows did not)."""
    quote = schema_editor.quote_name
    model = apps.get_model("ttmemory", "MessageTerm")
    if schema_editor.connection.vendor == "postgresql":
        for sql in (
            f"ALTER TABLE {quote(TABLE)} DROP CONSTRAINT ttm_msgterm_session_seq_term_uniq",
            "DROP INDEX ttm_msgterm_ns_term_idx",
            f"ALTER TABLE {quote(TABLE)} DROP COLUMN id",
            f"ALTER TABLE {quote(TABLE)} ADD CONSTRAINT {quote(TABLE + '_pkey')} "
            '  PRIMARY KEY ("session_id", "seq", "term")',
            f'CREATE INDEX ttm_msgterm_term_idx ON {quote(TABLE)} ("term")',
        ):
            schema_editor.execute(sql)
        return
    # Any other database: a new table as the model says, the postings copied over.
    schema_editor.execute("DROP INDEX ttm_msgterm_ns_term_idx")
    schema_editor.execute(f"ALTER TABLE {quote(TABLE)} RENAME TO {quote(OLD)}")
    schema_editor.create_model(model)
    columns = ", ".join(quote(c) for c in ("session_id", "namespace", "seq", "term", "tf"))
    schema_editor.execute(
        f"INSERT INTO {quote(TABLE)} ({columns}) SELECT {columns} FROM {quote(OLD)}"
    )
    schema_editor.execute(f"DROP TABLE {quote(OLD)}")


class Migration(migrations.Migration):
    dependencies = [("ttmemory", "0017_fact_neighbours")]

    operations = [
        # Django cannot migrate a table to a composite primary key by itself: the state moves
        # here, the table in rebuild_postings (which reads the new state).
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name="messageterm", name="ttm_msgterm_session_seq_term_uniq"
                ),
                migrations.RemoveIndex(model_name="messageterm", name="ttm_msgterm_ns_term_idx"),
                migrations.RemoveField(model_name="messageterm", name="id"),
                migrations.AddField(
                    model_name="messageterm",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "session",
                        "seq",
                        "term",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                migrations.AddIndex(
                    model_name="messageterm",
                    index=models.Index(fields=["term"], name="ttm_msgterm_term_idx"),
                ),
            ],
        ),
        migrations.RunPython(rebuild_postings, elidable=False),
    ]
