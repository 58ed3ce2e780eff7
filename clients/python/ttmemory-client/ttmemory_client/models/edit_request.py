from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.edit_request_message import EditRequestMessage


T = TypeVar("T", bound="EditRequest")


@_attrs_define
class EditRequest:
    """
    Attributes:
        seq (int): The message to replace in the new branch.
        message (EditRequestMessage): The edited message (Chat Completions).
        key (str | Unset): The new branch's session key (default: the parent's key with a suffix).
    """

    seq: int
    message: EditRequestMessage
    key: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        message = self.message.to_dict()

        key = self.key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "message": message,
            }
        )
        if key is not UNSET:
            field_dict["key"] = key

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.edit_request_message import EditRequestMessage  # noqa: PLC0415

        d = dict(src_dict)
        seq = d.pop("seq")

        message = EditRequestMessage.from_dict(d.pop("message"))

        key = d.pop("key", UNSET)

        edit_request = cls(
            seq=seq,
            message=message,
            key=key,
        )

        edit_request.additional_properties = d
        return edit_request

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
