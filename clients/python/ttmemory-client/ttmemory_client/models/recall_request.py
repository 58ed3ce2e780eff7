from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.recall_request_metadata import RecallRequestMetadata


T = TypeVar("T", bound="RecallRequest")


@_attrs_define
class RecallRequest:
    """
    Attributes:
        query (str):
        k (int | Unset):  Default: 5.
        kinds (list[str] | Unset):
        metadata (RecallRequestMetadata | Unset): Facts whose metadata has these.
    """

    query: str
    k: int | Unset = 5
    kinds: list[str] | Unset = UNSET
    metadata: RecallRequestMetadata | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        query = self.query

        k = self.k

        kinds: list[str] | Unset = UNSET
        if not isinstance(self.kinds, Unset):
            kinds = self.kinds

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "query": query,
            }
        )
        if k is not UNSET:
            field_dict["k"] = k
        if kinds is not UNSET:
            field_dict["kinds"] = kinds
        if metadata is not UNSET:
            field_dict["metadata"] = metadata

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.recall_request_metadata import RecallRequestMetadata  # noqa: PLC0415

        d = dict(src_dict)
        query = d.pop("query")

        k = d.pop("k", UNSET)

        kinds = cast(list[str], d.pop("kinds", UNSET))

        _metadata = d.pop("metadata", UNSET)
        metadata: RecallRequestMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = RecallRequestMetadata.from_dict(_metadata)

        recall_request = cls(
            query=query,
            k=k,
            kinds=kinds,
            metadata=metadata,
        )

        recall_request.additional_properties = d
        return recall_request

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
