from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="FactSource")


@_attrs_define
class FactSource:
    """
    Attributes:
        session (int | None): Null: no source session.
        seqs (list[int]):
    """

    session: int | None
    seqs: list[int]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        session: int | None
        session = self.session

        seqs = self.seqs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "session": session,
                "seqs": seqs,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_session(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        session = _parse_session(d.pop("session"))

        seqs = cast(list[int], d.pop("seqs"))

        fact_source = cls(
            session=session,
            seqs=seqs,
        )

        fact_source.additional_properties = d
        return fact_source

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
