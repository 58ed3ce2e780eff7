from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.session_detail import SessionDetail
    from ..models.snapshot import Snapshot


T = TypeVar("T", bound="Rollback")


@_attrs_define
class Rollback:
    """
    Attributes:
        safety_snapshot (None | Snapshot):
        removed_seqs (list[int]):
        restored_seqs (list[int]):
        facts_superseded (list[int]):
        session (SessionDetail): A session's counters (what an append answers with).
        undo (None | str): POST here (the safety snapshot's rollback) to undo.
    """

    safety_snapshot: None | Snapshot
    removed_seqs: list[int]
    restored_seqs: list[int]
    facts_superseded: list[int]
    session: SessionDetail
    undo: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.snapshot import Snapshot  # noqa: PLC0415

        safety_snapshot: dict[str, Any] | None
        if isinstance(self.safety_snapshot, Snapshot):
            safety_snapshot = self.safety_snapshot.to_dict()
        else:
            safety_snapshot = self.safety_snapshot

        removed_seqs = self.removed_seqs

        restored_seqs = self.restored_seqs

        facts_superseded = self.facts_superseded

        session = self.session.to_dict()

        undo: None | str
        undo = self.undo

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "safety_snapshot": safety_snapshot,
                "removed_seqs": removed_seqs,
                "restored_seqs": restored_seqs,
                "facts_superseded": facts_superseded,
                "session": session,
                "undo": undo,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.session_detail import SessionDetail  # noqa: PLC0415
        from ..models.snapshot import Snapshot  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_safety_snapshot(data: object) -> None | Snapshot:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                safety_snapshot_type_1 = Snapshot.from_dict(data)

                return safety_snapshot_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Snapshot, data)

        safety_snapshot = _parse_safety_snapshot(d.pop("safety_snapshot"))

        removed_seqs = cast(list[int], d.pop("removed_seqs"))

        restored_seqs = cast(list[int], d.pop("restored_seqs"))

        facts_superseded = cast(list[int], d.pop("facts_superseded"))

        session = SessionDetail.from_dict(d.pop("session"))

        def _parse_undo(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        undo = _parse_undo(d.pop("undo"))

        rollback = cls(
            safety_snapshot=safety_snapshot,
            removed_seqs=removed_seqs,
            restored_seqs=restored_seqs,
            facts_superseded=facts_superseded,
            session=session,
            undo=undo,
        )

        rollback.additional_properties = d
        return rollback

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
