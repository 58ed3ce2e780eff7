from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.fact import Fact


T = TypeVar("T", bound="RecallHit")


@_attrs_define
class RecallHit:
    """
    Attributes:
        fact (Fact):
        score (float):
    """

    fact: Fact
    score: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        fact = self.fact.to_dict()

        score = self.score

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "fact": fact,
                "score": score,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.fact import Fact  # noqa: PLC0415

        d = dict(src_dict)
        fact = Fact.from_dict(d.pop("fact"))

        score = d.pop("score")

        recall_hit = cls(
            fact=fact,
            score=score,
        )

        recall_hit.additional_properties = d
        return recall_hit

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
