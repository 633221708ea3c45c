"""What a server's answer asks of a crawler: to wait (``Retry-After`` on a 429 or 503). Pure: no I/O, no
clock."""

from __future__ import annotations

from email.utils import parsedate_to_datetime

HOLD_STATUSES = (429, 503)  # the answers whose Retry-After holds a server group (RFC 9110 §10.2.3, RFC 6585)


def retry_after(value: bytes | str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait at ``now`` (Unix time): a count of seconds or an HTTP
    date (RFC 9110 §10.2.3), never below 0; None if there is none or it is neither."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None  # an HTTP date is in GMT; a date without a zone is not one
    return max(when.timestamp() - now, 0.0)
