"""A worker's retry bookkeeping: backoff, the order retries fall due in, an outage mid hand-over, the one notice."""

import time

import pytest
import redis

from bot.flow.job_retries import JobRetries, Retry
from bot.store.queues.jobs import Job


def _job(number: int) -> Job:
    return Job(f"0/{number}-0", {"kind": "resume", "session_id": f"s{number}"})


def _again(retry: Retry) -> Job:
    return Job(retry.job.job_id, retry.job.fields, deliveries=retry.job.deliveries + int(retry.counted))


def test_a_job_waits_twice_as_long_after_each_failure_up_to_the_cap() -> None:
    retries = JobRetries(first_s=0.05)
    job = _job(1)
    waits = []
    for _ in range(4):
        retries.later(job, counted=True, cap_s=0.3)
        waits.append(retries.block_ms(10_000))
    # Read at once: each wait is its whole backoff, less the few milliseconds it took to read it.
    assert all(expected - 25 <= wait <= expected for wait, expected in zip(waits, (50, 100, 200, 300), strict=True))
    assert retries.due(limit=5, redeliver=_again) == []  # none due yet

    retries.forget(job.job_id)  # acknowledged: the count starts again
    retries.later(job, counted=True, cap_s=0.3)
    assert 25 <= retries.block_ms(10_000) <= 50


def test_due_retries_come_soonest_first_and_a_job_taken_over_is_forgotten() -> None:
    retries = JobRetries(first_s=0.0)
    first, second, gone = _job(1), _job(2), _job(3)
    for job in (first, gone, second):
        retries.later(job, counted=job is not second, cap_s=1)
        time.sleep(0.002)

    jobs = retries.due(limit=5, redeliver=lambda retry: None if retry.job is gone else _again(retry))

    assert [(job.job_id, job.deliveries) for job in jobs] == [(first.job_id, 2), (second.job_id, 1)]
    assert retries.take_waiting() == []
    assert retries.block_ms(700) == 700  # nothing waits any more


def test_retries_not_handed_over_when_redis_goes_away_stay_due() -> None:
    retries = JobRetries(first_s=0.0)
    jobs = [_job(number) for number in range(3)]
    for job in jobs:
        retries.later(job, counted=True, cap_s=1)
        time.sleep(0.002)
    handed: list[str] = []

    def fails_after_one(retry: Retry) -> Job:
        if handed:
            raise redis.ConnectionError("gone")
        handed.append(retry.job.job_id)
        return retry.job

    assert retries.due(limit=5, redeliver=fails_after_one) == [jobs[0]]  # what was handed over runs
    with pytest.raises(redis.ConnectionError):
        retries.due(limit=5, redeliver=fails_after_one)  # nothing handed over: the error is the caller's
    assert sorted(job.job_id for job in retries.take_waiting()) == [jobs[1].job_id, jobs[2].job_id]


def test_the_thread_is_told_once_and_a_notice_that_failed_is_owed_until_the_retry() -> None:
    retries = JobRetries()
    job = _job(1)
    told: list[str] = []
    marked: list[str] = []

    def first_notice_down(job: Job) -> bool:
        raise redis.ConnectionError("down")

    def first_notice(job: Job) -> bool:
        marked.append(job.job_id)
        return len(marked) == 1

    retries.tell_delayed(job, "redis is down", first_notice=first_notice_down, report=lambda _, text: told.append(text))
    assert told == []
    assert retries.owed_notice(job.job_id) == "redis is down"

    retries.tell_delayed(job, "retrying", first_notice=first_notice, report=lambda _, text: told.append(text))
    retries.tell_delayed(job, "retrying", first_notice=first_notice, report=lambda _, text: told.append(text))
    assert told == ["redis is down"]  # the owed notice, once
    assert retries.owed_notice(job.job_id) is None
