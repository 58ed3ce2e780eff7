from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.fact_supersede_request_metadata import FactSupersedeRequestMetadata


T = TypeVar("T", bound="FactSupersedeRequest")


@_attrs_define
class FactSupersedeRequest:
    """
    Attributes:
        text (str):
        kind (str | Unset):
        metadata (FactSupersedeRequestMetadata | Unset):
    """

    text: str
    kind: str | Unset = UNSET
    metadata: FactSupersedeRequestMetadata | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        kind = self.kind

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "text": text,
            }
        )
        if kind is not UNSET:
            field_dict["kind"] = kind
        if metadata is not UNSET:
            field_dict["metadata"] = metadata

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.fact_supersede_request_metadata import FactSupersedeRequestMetadata  # noqa: PLC0415

        d = dict(src_dict)
        text = d.pop("text")

        kind = d.pop("kind", UNSET)

        _metadata = d.pop("metadata", UNSET)
        metadata: FactSupersedeRequestMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = FactSupersedeRequestMetadata.from_dict(_metadata)

        fact_supersede_request = cls(
            text=text,
            kind=kind,
            metadata=metadata,
        )

        fact_supersede_request.additional_properties = d
        return fact_supersede_request

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
