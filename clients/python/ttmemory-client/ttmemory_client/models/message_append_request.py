from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.message_append_request_message import MessageAppendRequestMessage
    from ..models.message_append_request_messages_item import MessageAppendRequestMessagesItem


T = TypeVar("T", bound="MessageAppendRequest")


@_attrs_define
class MessageAppendRequest:
    """
    Attributes:
        message (MessageAppendRequestMessage | Unset): One message.
        messages (list[MessageAppendRequestMessagesItem] | Unset): Several, in order.
    """

    message: MessageAppendRequestMessage | Unset = UNSET
    messages: list[MessageAppendRequestMessagesItem] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message: dict[str, Any] | Unset = UNSET
        if not isinstance(self.message, Unset):
            message = self.message.to_dict()

        messages: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.messages, Unset):
            messages = []
            for messages_item_data in self.messages:
                messages_item = messages_item_data.to_dict()
                messages.append(messages_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if message is not UNSET:
            field_dict["message"] = message
        if messages is not UNSET:
            field_dict["messages"] = messages

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.message_append_request_message import MessageAppendRequestMessage  # noqa: PLC0415
        from ..models.message_append_request_messages_item import MessageAppendRequestMessagesItem  # noqa: PLC0415

        d = dict(src_dict)
        _message = d.pop("message", UNSET)
        message: MessageAppendRequestMessage | Unset
        if isinstance(_message, Unset):
            message = UNSET
        else:
            message = MessageAppendRequestMessage.from_dict(_message)

        _messages = d.pop("messages", UNSET)
        messages: list[MessageAppendRequestMessagesItem] | Unset = UNSET
        if _messages is not UNSET:
            messages = []
            for messages_item_data in _messages:
                messages_item = MessageAppendRequestMessagesItem.from_dict(messages_item_data)

                messages.append(messages_item)

        message_append_request = cls(
            message=message,
            messages=messages,
        )

        message_append_request.additional_properties = d
        return message_append_request

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
