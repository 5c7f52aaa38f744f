"""When and how long, as the bot's texts say it: Slack date tokens (in each reader's time zone), spoken durations."""

from datetime import UTC, datetime, timedelta


def slack_date(at: datetime) -> str:
    """A Slack date token: short pretty date and time in the reader's zone, UTC text as fallback.

    A naive ``at`` is taken as UTC.
    """
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    fallback = at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} {{time}}|{fallback}>"


def age(waited: timedelta) -> str:
    """How long something waited, to the minute: ``5 min``, ``2 h``, ``2 h 5 min``."""
    minutes = int(waited.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def for_duration(seconds: int) -> str:
    """A duration as a person says it: ``15 min``, ``1 h``, ``1 h 30 min``, ``2 d``."""
    if seconds >= 86_400 and seconds % 86_400 == 0:
        return f"{seconds // 86_400} d"
    if seconds < 60:
        return f"{seconds} s"
    return age(timedelta(seconds=seconds))
