"""The log formats: text by default; JSON one object a line, carrying the ids of ``log_context`` and ``extra=``."""

import io
import json
import logging
from collections.abc import Iterator

import pytest

from bot.observe import logs
from bot.observe.logs import LogFormat, log_context


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("tests.logs")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def _use(captured: tuple[logging.Logger, io.StringIO], log_format: LogFormat) -> None:
    captured[0].handlers[0].setFormatter(logs.formatter(log_format))


def test_text_lines_are_for_people(captured: tuple[logging.Logger, io.StringIO]) -> None:
    _use(captured, "text")
    logger, stream = captured
    with log_context(session_id="s1"):
        logger.info("job_id=<%s> | done", "j1")
    line = stream.getvalue().strip()
    assert line.endswith("INFO tests.logs job_id=<j1> | done")
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


def test_json_lines_carry_the_context_and_extra_ids_and_exceptions_on_one_line(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    _use(captured, "json")
    logger, stream = captured
    with log_context(session_id="s1", approval_id=None):
        with log_context(approval_id="0-a1"):
            logger.info("decided %s", "approve")
        logger.warning("outside", extra={"job_id": "j9"})
    try:
        raise ValueError("bad\nrecord")
    except ValueError:
        logger.exception("failed")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 3
    first, second, third = lines
    assert {key: first[key] for key in ("level", "logger", "message", "session_id", "approval_id")} == {
        "level": "INFO",
        "logger": "tests.logs",
        "message": "decided approve",
        "session_id": "s1",
        "approval_id": "0-a1",
    }
    assert first["time"].endswith("+00:00")
    assert (second["session_id"], second["job_id"], "approval_id" in second) == ("s1", "j9", False)
    assert "session_id" not in third
    assert "ValueError: bad\nrecord" in third["exception"]
