from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

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
        evidence_similarity (float | None): The evidence floor in force: every hit shares a keyword with the query, is
            at least this similar to it, or sits in a passage about it.
        unpadded (int): Facts next to a match that neighbour context would have padded the hits with, left out (fewer
            than k hits instead).
        hits (list[RecallHit]):
    """

    mode: ModeEnum
    fallback_reason: str
    evidence_similarity: float | None
    unpadded: int
    hits: list[RecallHit]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        mode: str = self.mode

        fallback_reason = self.fallback_reason

        evidence_similarity: float | None
        evidence_similarity = self.evidence_similarity

        unpadded = self.unpadded

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
                "evidence_similarity": evidence_similarity,
                "unpadded": unpadded,
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

        def _parse_evidence_similarity(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        evidence_similarity = _parse_evidence_similarity(d.pop("evidence_similarity"))

        unpadded = d.pop("unpadded")

        hits = []
        _hits = d.pop("hits")
        for hits_item_data in _hits:
            hits_item = RecallHit.from_dict(hits_item_data)

            hits.append(hits_item)

        recall = cls(
            mode=mode,
            fallback_reason=fallback_reason,
            evidence_similarity=evidence_similarity,
            unpadded=unpadded,
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
