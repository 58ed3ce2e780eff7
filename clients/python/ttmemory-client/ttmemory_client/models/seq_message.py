from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.seq_message_message import SeqMessageMessage


T = TypeVar("T", bound="SeqMessage")


@_attrs_define
class SeqMessage:
    """
    Attributes:
        seq (int):
        message (SeqMessageMessage):
    """

    seq: int
    message: SeqMessageMessage
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        seq = self.seq

        message = self.message.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "seq": seq,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.seq_message_message import SeqMessageMessage  # noqa: PLC0415

        d = dict(src_dict)
        seq = d.pop("seq")

        message = SeqMessageMessage.from_dict(d.pop("message"))

        seq_message = cls(
            seq=seq,
            message=message,
        )

        seq_message.additional_properties = d
        return seq_message

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
