"""The base of ttmemory's own migration operations: they change the database, never model state."""

from __future__ import annotations

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.operations.base import Operation
from django.db.migrations.state import ProjectState

#: Short names, so a signature of Django's fits one line.
Editor = BaseDatabaseSchemaEditor
State = ProjectState


class DatabaseOperation(Operation):
    """An operation on the database alone (an extension, triggers, indexes, a table's layout):
    no model state changes; reversible, and reversing does nothing unless a subclass says so.
    Deconstructs to its class name and no arguments unless a subclass has some."""

    reversible = True

    def state_forwards(self, app_label: str, state: ProjectState) -> None:
        pass

    def database_backwards(
        self, app_label: str, schema_editor: Editor, from_state: State, to_state: State
    ) -> None:
        pass

    def deconstruct(self) -> tuple[str, list[Any], dict[str, Any]]:
        return (self.__class__.__name__, [], {})


class StatementsOperation(DatabaseOperation):
    """A ``DatabaseOperation`` that runs ``statements(connection, forwards=...)`` one by one,
    forwards and backwards (so ``sqlmigrate`` shows them)."""

    reduces_to_sql = True

    def statements(self, connection: BaseDatabaseWrapper, *, forwards: bool) -> list[str]:
        raise NotImplementedError

    def _run(self, schema_editor: BaseDatabaseSchemaEditor, *, forwards: bool) -> None:
        for sql in self.statements(schema_editor.connection, forwards=forwards):
            schema_editor.execute(sql, params=None)

    def database_forwards(
        self, app_label: str, schema_editor: Editor, from_state: State, to_state: State
    ) -> None:
        self._run(schema_editor, forwards=True)

    def database_backwards(
        self, app_label: str, schema_editor: Editor, from_state: State, to_state: State
    ) -> None:
        self._run(schema_editor, forwards=False)
