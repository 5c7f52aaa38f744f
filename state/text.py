"""Text from Redis replies: redis-py hands back bytes unless told otherwise; these turn them into ``str``."""


def as_text(value: bytes | str) -> str:
    """``value`` as text (UTF-8 bytes decoded; raises ``UnicodeDecodeError`` for bytes that are not)."""
    return value.decode() if isinstance(value, bytes) else value


def shown(value: bytes | str) -> str:
    r"""Text for logs, audit exports and operators even when the bytes are not UTF-8 (``\xff`` for a bad byte)."""
    return value.decode(errors="backslashreplace") if isinstance(value, bytes) else value


def lossless_text(value: object) -> str:
    """Text that keeps every byte: one that is not UTF-8 becomes a lone surrogate (``bytes_of`` gives it back).

    Readers of many entries use it so that one bad entry does not stop the batch; the entry's owner
    refuses it when it parses it.
    """
    return value.decode(errors="surrogateescape") if isinstance(value, bytes) else str(value)


def bytes_of(text: str) -> bytes:
    """The bytes behind ``text`` as ``lossless_text`` returned it (bad bytes included)."""
    return text.encode(errors="surrogateescape")
