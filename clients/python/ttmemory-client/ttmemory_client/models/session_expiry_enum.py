from typing import Literal

SessionExpiryEnum = Literal["archive", "delete"]

SESSION_EXPIRY_ENUM_VALUES: set[SessionExpiryEnum] = {
    "archive",
    "delete",
}


def check_session_expiry_enum(value: str) -> SessionExpiryEnum:
    if value in SESSION_EXPIRY_ENUM_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {SESSION_EXPIRY_ENUM_VALUES!r}")
