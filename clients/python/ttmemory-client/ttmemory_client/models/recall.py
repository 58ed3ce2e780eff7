from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.mode_enum import ModeEnum, check_mode_enum

if TYPE_CHECKING:
    from ..models.recall_hit import RecallHit


T = TypeVar("T", bound="Recall")


@_attrs_define
class Recall:
    """
    Attributes:
        mode (ModeEnum): * `hybrid` - hybrid
            * `keyword` - keyword
            * `vector` - vector
        fallback_reason (str):
        hits (list[RecallHit]):
    """

    mode: ModeEnum
    fallback_reason: str
    hits: list[RecallHit]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        mode: str = self.mode

        fallback_reason = self.fallback_reason

        hits = []
        for hits_item_data in self.hits:
            hits_item = hits_item_data.to_dict()
            hits.append(hits_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "mode": mode,
                "fallback_reason": fallback_reason,
                "hits": hits,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.recall_hit import RecallHit  # noqa: PLC0415

        d = dict(src_dict)
        mode = check_mode_enum(d.pop("mode"))

        fallback_reason = d.pop("fallback_reason")

        hits = []
        _hits = d.pop("hits")
        for hits_item_data in _hits:
            hits_item = RecallHit.from_dict(hits_item_data)

            hits.append(hits_item)

        recall = cls(
            mode=mode,
            fallback_reason=fallback_reason,
            hits=hits,
        )

        recall.additional_properties = d
        return recall

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
