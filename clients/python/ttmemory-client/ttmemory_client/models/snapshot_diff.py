from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.fact import Fact
    from ..models.seq_message import SeqMessage


T = TypeVar("T", bound="SnapshotDiff")


@_attrs_define
class SnapshotDiff:
    """
    Attributes:
        remove (list[SeqMessage]): Live messages the rollback removes.
        restore (list[SeqMessage]): Messages it brings back.
        tokens_removed (int):
        tokens_restored (int):
        summary_changes (bool):
        facts_superseded (list[Fact]): Facts learned only from removed turns.
    """

    remove: list[SeqMessage]
    restore: list[SeqMessage]
    tokens_removed: int
    tokens_restored: int
    summary_changes: bool
    facts_superseded: list[Fact]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        remove = []
        for remove_item_data in self.remove:
            remove_item = remove_item_data.to_dict()
            remove.append(remove_item)

        restore = []
        for restore_item_data in self.restore:
            restore_item = restore_item_data.to_dict()
            restore.append(restore_item)

        tokens_removed = self.tokens_removed

        tokens_restored = self.tokens_restored

        summary_changes = self.summary_changes

        facts_superseded = []
        for facts_superseded_item_data in self.facts_superseded:
            facts_superseded_item = facts_superseded_item_data.to_dict()
            facts_superseded.append(facts_superseded_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "remove": remove,
                "restore": restore,
                "tokens_removed": tokens_removed,
                "tokens_restored": tokens_restored,
                "summary_changes": summary_changes,
                "facts_superseded": facts_superseded,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.fact import Fact  # noqa: PLC0415
        from ..models.seq_message import SeqMessage  # noqa: PLC0415

        d = dict(src_dict)
        remove = []
        _remove = d.pop("remove")
        for remove_item_data in _remove:
            remove_item = SeqMessage.from_dict(remove_item_data)

            remove.append(remove_item)

        restore = []
        _restore = d.pop("restore")
        for restore_item_data in _restore:
            restore_item = SeqMessage.from_dict(restore_item_data)

            restore.append(restore_item)

        tokens_removed = d.pop("tokens_removed")

        tokens_restored = d.pop("tokens_restored")

        summary_changes = d.pop("summary_changes")

        facts_superseded = []
        _facts_superseded = d.pop("facts_superseded")
        for facts_superseded_item_data in _facts_superseded:
            facts_superseded_item = Fact.from_dict(facts_superseded_item_data)

            facts_superseded.append(facts_superseded_item)

        snapshot_diff = cls(
            remove=remove,
            restore=restore,
            tokens_removed=tokens_removed,
            tokens_restored=tokens_restored,
            summary_changes=summary_changes,
            facts_superseded=facts_superseded,
        )

        snapshot_diff.additional_properties = d
        return snapshot_diff

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
