"""A batch's lanes: one that is slow (stuck on its Redis master) no longer holds back the next batch; it leaves its
lane on its own when it ends, and the lanes of earlier batches never take more threads than there are."""

import threading
import time
from concurrent.futures import Future

from bot.slack.lane_runs import LANE_WAIT_S, LaneRuns


def test_a_slow_lane_is_left_running_and_finishes_on_its_own() -> None:
    runs = LaneRuns(2)
    release = threading.Event()
    finished: list[tuple[int, str]] = []
    ended = threading.Event()

    def slow() -> str:
        release.wait(10)
        return "slow"

    def finish_late(index: int, late: "Future[str]") -> None:
        finished.append((index, late.result()))
        ended.set()

    started = time.monotonic()
    outcomes = runs.run([slow, lambda: "fast"], finish_late=finish_late)
    assert outcomes == {1: "fast"}
    assert time.monotonic() - started < LANE_WAIT_S + 0.5  # the batch went on without it
    assert finished == []
    release.set()
    assert ended.wait(5)
    assert finished == [(0, "slow")]
    runs.close()


def test_an_error_is_an_outcome_and_a_late_lanes_error_is_handed_to_finish_late() -> None:
    runs = LaneRuns(2)
    release = threading.Event()
    errors: list[BaseException | None] = []
    ended = threading.Event()

    def broken() -> str:
        raise RuntimeError("lost")

    def broken_later() -> str:
        release.wait(10)
        raise RuntimeError("lost later")

    def finish_late(_index: int, late: "Future[str]") -> None:
        errors.append(late.exception())
        ended.set()

    outcomes = runs.run([broken, broken_later], finish_late=finish_late)
    assert [str(error) for error in outcomes.values()] == ["lost"]
    release.set()
    assert ended.wait(5)
    assert [str(error) for error in errors] == ["lost later"]
    runs.close()


def test_a_batch_waits_for_a_thread_when_late_lanes_hold_them_all() -> None:
    runs = LaneRuns(1)
    release = threading.Event()

    def slow() -> str:
        release.wait(10)
        return "slow"

    assert runs.run([slow], finish_late=lambda _index, _late: None) == {}
    threading.Timer(0.5, release.set).start()
    started = time.monotonic()
    assert runs.run([lambda: "next"], finish_late=lambda _index, _late: None) == {0: "next"}
    assert time.monotonic() - started >= 0.4  # no thread was free until the slow lane ended
    runs.close()
