"""Secrets the bot keeps in Redis (each installation's bot token), sealed with keys only the bot's processes hold.

A Redis dump, a replica, a backup or a ``MONITOR`` then shows no usable token. The keys are Fernet keys (AES-128 in
CBC mode with an HMAC-SHA256, from ``cryptography``) given in ``INSTALLATION_KEYS``, comma-separated: the first
seals, every one opens, so a new key goes first, ``python -m bot installations rotate`` seals every record with it,
and the old key is removed after. A value written before sealing existed (no ``fernet:`` prefix) is read as it is;
``rotate`` seals it.
"""

from collections.abc import Sequence
from typing import Final

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from bot.domain.errors import SignoffError

SEALED_PREFIX: Final = "fernet:"
"""How a sealed value begins (a Slack token never does)."""


class UnopenableSecret(SignoffError):
    """A sealed value none of the given keys opens (sealed with a key since removed, or damaged)."""


def new_key() -> str:
    """A fresh key for ``INSTALLATION_KEYS``."""
    return Fernet.generate_key().decode("ascii")


def key_problem(keys_text: str) -> str | None:
    """Why ``INSTALLATION_KEYS`` cannot be used, or ``None`` (never quoting a key: each is a secret)."""
    keys = [key.strip() for key in keys_text.split(",")]
    if not any(keys):
        return "INSTALLATION_KEYS is blank"
    for index, key in enumerate(keys, start=1):
        try:
            Fernet(key)
        except ValueError:
            return (
                f"INSTALLATION_KEYS: key {index} of {len(keys)} is not a Fernet key (32 url-safe base64-encoded "
                "bytes; python -m bot installations new-key makes one)"
            )
    return None


class TokenSeal:
    """Seals and opens secrets with the keys of ``INSTALLATION_KEYS``. Thread-safe (it holds no state but keys)."""

    def __init__(self, keys: Sequence[str]) -> None:
        """``keys``: the newest first (it seals); every one opens.

        Raises:
            ValueError: No key, or one is not a Fernet key (check ``key_problem`` first for a message).
        """
        if not keys:
            raise ValueError("no key")
        self._keys = MultiFernet([Fernet(key) for key in keys])
        self._sealer = Fernet(keys[0])

    @classmethod
    def from_setting(cls, keys_text: str) -> "TokenSeal":
        """From ``INSTALLATION_KEYS``: keys separated by commas."""
        return cls([key.strip() for key in keys_text.split(",") if key.strip()])

    def seal(self, secret: str) -> str:
        """``secret`` sealed with the first key."""
        return SEALED_PREFIX + self._keys.encrypt(secret.encode("utf-8")).decode("ascii")

    def open(self, stored: str) -> str:
        """The secret ``stored`` holds (a value written before sealing is its own secret).

        Raises:
            UnopenableSecret: No key opens it.
        """
        if not stored.startswith(SEALED_PREFIX):
            return stored
        try:
            return self._keys.decrypt(stored.removeprefix(SEALED_PREFIX).encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError) as error:
            raise UnopenableSecret("sealed with a key INSTALLATION_KEYS does not hold, or damaged") from error

    def sealed_with_first(self, stored: str) -> bool:
        """Whether ``stored`` is sealed, and with the first key (``rotate`` leaves it alone)."""
        if not stored.startswith(SEALED_PREFIX):
            return False
        try:
            self._sealer.decrypt(stored.removeprefix(SEALED_PREFIX).encode("ascii"))
        except (InvalidToken, UnicodeError):
            return False
        return True
