"""A batch's lanes: one that is slow (stuck on its Redis master) no longer holds back the next batch; it leaves its
lane on its own when it ends; a batch of one lane is waited for."""

import threading
import time
from concurrent.futures import Future

from bot.slack.outbound.lane_runs import LANE_WAIT_S, LaneRuns


def test_a_slow_lane_is_left_running_and_finishes_on_its_own() -> None:
    runs = LaneRuns(2)
    release = threading.Event()
    finished: list[tuple[int, str]] = []

    def slow() -> str:
        release.wait(10)
        return "slow"

    def finish_late(index: int, late: "Future[str]") -> None:
        time.sleep(0.2)  # leaving the lane takes a round trip
        finished.append((index, late.result()))

    started = time.monotonic()
    outcomes = runs.run([slow, lambda: "fast"], finish_late=finish_late)
    assert outcomes == {1: "fast"}
    assert time.monotonic() - started < LANE_WAIT_S + 0.5  # the batch went on without it
    assert finished == []
    threading.Timer(0.3, release.set).start()
    assert runs.settle()  # waits for it to end and to leave its lane
    assert finished == [(0, "slow")]
    assert not runs.settle()
    runs.close()


def test_a_batch_of_one_lane_waits_for_it() -> None:
    runs = LaneRuns(2)
    started = time.monotonic()

    def slow() -> str:
        time.sleep(LANE_WAIT_S * 2)
        return "slow"

    assert runs.run([slow], finish_late=lambda _index, _late: None) == {0: "slow"}
    assert time.monotonic() - started >= LANE_WAIT_S * 2
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

    outcomes = runs.run([broken, broken_later], finish_late=finish_late)  # an error ends a lane too
    assert [str(error) for error in outcomes.values()] == ["lost"]
    release.set()
    assert ended.wait(5)
    assert [str(error) for error in errors] == ["lost later"]
    runs.close()
