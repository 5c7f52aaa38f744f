"""The model protocol of ``agent.models.base``, which every provider keeps alike, run against each
(``tests.agent.providers``): answers read into turns, stop reasons mapped, failures and malformed answers turned into
``ModelError`` with the cause chained, and an approval round trip that calls the model once before the interrupt and
once after it.

What differs between providers (the exact request each SDK sends) stays in ``test_<provider>.py`` beside this file.
"""

from collections.abc import Iterator
from typing import Any

import pytest

from agent import Agent, ApprovalGate
from agent.models.base import ModelError
from tests.agent.providers import DOUBLES, HTTP_DOUBLES, HttpDouble, ProviderDouble
from tests.agent.support import Recorder, decision, respond, restart_checkout_asked, tool_results

HI: Any = [{"role": "user", "content": [{"text": "hi"}]}]


@pytest.fixture(params=DOUBLES, ids=[double.name for double in DOUBLES])
def provider(request: pytest.FixtureRequest) -> Iterator[ProviderDouble]:
    with request.param.serving() as double:
        yield double


@pytest.fixture(params=HTTP_DOUBLES, ids=[double.name for double in HTTP_DOUBLES])
def http_provider(request: pytest.FixtureRequest) -> Iterator[HttpDouble]:
    with request.param.serving() as double:
        yield double


def _each(cases: str) -> list[Any]:
    """``(double, case)`` parameters: every case of ``ProviderDouble.<cases>`` of every provider."""
    return [
        pytest.param(double, case, id=f"{double.name}-{_case_id(case, index)}")
        for double in DOUBLES
        for index, case in enumerate(getattr(double, cases))
    ]


def _case_id(case: Any, index: int) -> str:
    if isinstance(case, tuple):
        return str(case[0])
    return case if isinstance(case, str) else str(index)


def test_a_text_answer_without_tools_or_system_is_the_end_of_the_turn(provider: ProviderDouble) -> None:
    provider.answer_text("All good.")

    turn = provider.model().converse([{"role": "user", "content": [{"text": "status?"}]}], [], None)

    assert turn.stop_reason == "end_turn"
    assert turn.message == {"role": "assistant", "content": [{"text": "All good."}]}
    assert provider.sent_count() == 1
    assert provider.sent_system(0) is None
    assert provider.sent_tool_names(0) is None


@pytest.mark.parametrize(("double", "reasons"), _each("stop_reasons"))
def test_stop_reasons_are_mapped(double: type[ProviderDouble], reasons: tuple[str, str]) -> None:
    reported, expected = reasons
    with double.serving() as provider:
        provider.answer_text("x", reported)

        assert provider.model().converse(HI, [], None).stop_reason == expected


@pytest.mark.parametrize(("double", "failure"), _each("failures"))
def test_provider_failures_become_model_errors_with_the_sdk_error_as_cause(
    double: type[ProviderDouble], failure: str
) -> None:
    with double.serving() as provider:
        cause = provider.fail(failure)

        with pytest.raises(ModelError, match=provider.error_names) as raised:
            provider.model().converse(HI, [], None)

        assert isinstance(raised.value.__cause__, cause)
        assert provider.sent_count() == 1  # no retries


@pytest.mark.parametrize(("double", "answer"), _each("malformed"))
def test_a_malformed_answer_becomes_a_model_error(double: type[ProviderDouble], answer: Any) -> None:
    with double.serving() as provider:
        model = provider.malformed_model(answer)

        with pytest.raises(ModelError, match=provider.error_names) as raised:
            model.converse(HI, [], None)

        assert raised.value.__cause__ is not None


def test_an_answer_that_is_not_json_becomes_a_model_error(http_provider: HttpDouble) -> None:
    http_provider.server.reply(raw=b"<html>gateway</html>", headers={"Content-Type": "text/html"})

    with pytest.raises(ModelError, match=http_provider.error_names) as raised:
        http_provider.model().converse(HI, [], None)

    assert raised.value.__cause__ is not None


def test_an_unreachable_provider_is_a_model_error(http_provider: HttpDouble) -> None:
    with pytest.raises(ModelError, match=http_provider.error_names) as raised:
        http_provider.unreachable_model().converse(HI, [], None)

    assert isinstance(raised.value.__cause__, http_provider.sdk.APIConnectionError)


def test_a_block_the_provider_cannot_take_is_a_model_error(http_provider: HttpDouble) -> None:
    image: Any = [{"role": "user", "content": [{"image": {"format": "png"}}]}]

    with pytest.raises(ModelError, match="not supported"):
        http_provider.model().converse(image, [], None)

    assert http_provider.sent_count() == 0


def test_an_approval_round_trip_calls_the_model_once_before_the_interrupt_and_once_after(
    provider: ProviderDouble,
) -> None:
    provider.answer_tool_call("call_1", "restart_service", {"service": "checkout"})
    provider.answer_text("restarted")
    recorder = Recorder()
    gate = ApprovalGate(["restart_service"])
    agent = Agent(provider.model(), recorder.tools(), hooks=[gate], system_prompt="Be careful.")

    stopped = agent("restart checkout")

    assert stopped.stop_reason == "interrupt"
    [interrupt] = stopped.interrupts
    assert interrupt.reason.pop("inputSchema")["required"] == ["service"]
    assert interrupt.reason == restart_checkout_asked("call_1")
    assert recorder.calls == []
    assert provider.sent_count() == 1

    done = agent([respond(interrupt.id, decision("approve"))])

    assert (done.stop_reason, str(done)) == ("end_turn", "restarted")
    assert recorder.calls == [("restart_service", "checkout")]
    assert tool_results(agent.messages[-2])["call_1"]["status"] == "success"
    assert provider.sent_count() == 2  # the resume ran the tool and called the model once, not twice
    assert provider.sent_system(1) == "Be careful."
    assert provider.sent_tool_names(1) == ["restart_service", "read_logs", "delete_volume"]
    assert provider.sent_last_tool_result(1) == ("call_1", "restarted checkout")
