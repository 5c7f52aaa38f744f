"""Modal inputs of every type the bot uses (text, number, select, checkboxes): the stand-in checks them as Slack's
``views.*`` does, the page renders and fills them, and a submission reaches the bot in Slack's state shapes."""

import copy
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from playwright.sync_api import expect
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.sandbox.people import CHANNEL
from bot.sandbox.workspace import PageError, SandboxSlack
from loopback_slack import submitted_state
from tests.sandbox.bot_stand_in import BotStandIn
from tests.sandbox.browser import Steps
from tests.sandbox.client import APPROVER

JsonDict = dict[str, Any]
TOKEN = "xoxb-sandbox-inputs"
EDIT_ACTION = "edit_call"


def _plain(text: str) -> JsonDict:
    return {"type": "plain_text", "text": text}


def _option(text: str, value: str) -> JsonDict:
    return {"text": _plain(text), "value": value}


SIZES = [_option("Small", "s"), _option("Medium", "m"), _option("Large", "l")]
NOTIFY = [_option("The requester", "requester"), _option("On-call", "oncall"), _option("The channel", "channel")]


def edit_call_view() -> JsonDict:
    """An "Edit call" modal with one input of each type (and an optional multiline text); a fresh copy each time."""
    return copy.deepcopy(
        {
            "type": "modal",
            "callback_id": "edit_call_modal",
            "title": _plain("Edit call"),
            "submit": _plain("Save"),
            "close": _plain("Cancel"),
            "blocks": [
                {
                    "type": "input",
                    "block_id": "service",
                    "label": _plain("Service"),
                    "element": {
                        "type": "plain_text_input",
                        "action_id": "service_input",
                        "initial_value": "checkout",
                        "max_length": 64,
                    },
                },
                {
                    "type": "input",
                    "block_id": "replicas",
                    "label": _plain("Replicas"),
                    "hint": _plain("Between 1 and 10."),
                    "element": {
                        "type": "number_input",
                        "action_id": "replicas_input",
                        "is_decimal_allowed": False,
                        "initial_value": "3",
                        "min_value": "1",
                        "max_value": "10",
                    },
                },
                {
                    "type": "input",
                    "block_id": "size",
                    "label": _plain("Size"),
                    "element": {
                        "type": "static_select",
                        "action_id": "size_input",
                        "options": SIZES,
                        "initial_option": SIZES[1],
                        "placeholder": _plain("Pick a size"),
                    },
                },
                {
                    "type": "input",
                    "block_id": "notify",
                    "optional": True,
                    "label": _plain("Tell"),
                    "element": {
                        "type": "checkboxes",
                        "action_id": "notify_input",
                        "options": NOTIFY,
                        "initial_options": [NOTIFY[0]],
                    },
                },
                {
                    "type": "input",
                    "block_id": "note",
                    "optional": True,
                    "label": _plain("Note"),
                    "element": {
                        "type": "plain_text_input",
                        "action_id": "note_input",
                        "multiline": True,
                        "placeholder": _plain("Why the change"),
                    },
                },
            ],
        }
    )


@pytest.fixture
def stand_in(redis_client: redis.Redis) -> Iterator[SandboxSlack]:
    with SandboxSlack(token=TOKEN, redis_client=redis_client) as slack:
        yield slack


@pytest.fixture
def client(stand_in: SandboxSlack) -> WebClient:
    return WebClient(token=TOKEN, base_url=stand_in.url)


@pytest.fixture
def bot(stand_in: SandboxSlack, client: WebClient) -> Iterator[BotStandIn]:
    """The bot's part: a click on "Edit call" opens the modal with the click's trigger, through the Web API."""

    def open_modal(payload: JsonDict) -> None:
        client.views_open(trigger_id=payload["trigger_id"], view=edit_call_view())

    with BotStandIn(on_click=open_modal) as stand_in_bot:
        stand_in.connect(stand_in_bot.poster())
        yield stand_in_bot


def _post_edit_button(stand_in: SandboxSlack) -> JsonDict:
    button = {"type": "button", "action_id": EDIT_ACTION, "text": _plain("Edit call"), "value": "call-1"}
    blocks = [{"type": "actions", "block_id": "call", "elements": [button]}]
    return stand_in.add_message(CHANNEL, user=stand_in.identity.bot_user_id, text="restart checkout", blocks=blocks)


def _open_modal(stand_in: SandboxSlack) -> str:
    """A person clicks "Edit call"; the id of the modal the bot opened for them."""
    message = _post_edit_button(stand_in)
    stand_in.click(APPROVER, CHANNEL, message["ts"], EDIT_ACTION)
    modal = stand_in.state(APPROVER)["modal"]
    assert modal is not None
    return str(modal["id"])


# ------------------------------------------------------------------ what the bot receives


def test_a_submission_carries_every_input_in_slacks_state_shapes(stand_in: SandboxSlack, bot: BotStandIn) -> None:
    view_id = _open_modal(stand_in)
    answer = stand_in.submit(
        APPROVER,
        view_id,
        {
            "service": {"service_input": "checkout-eu"},
            "replicas": {"replicas_input": "5"},
            "size": {"size_input": "l"},
            "notify": {"notify_input": ["channel", "requester"]},
        },
    )
    assert answer == {"status": 200, "errors": {}}
    [submission] = bot.submissions()
    assert submission["view"]["id"] == view_id
    assert submission["view"]["callback_id"] == "edit_call_modal"
    assert submission["view"]["state"]["values"] == {
        "service": {"service_input": {"type": "plain_text_input", "value": "checkout-eu"}},
        "replicas": {"replicas_input": {"type": "number_input", "value": "5"}},
        "size": {"size_input": {"type": "static_select", "selected_option": SIZES[2]}},
        # In the options' order, whatever order they were ticked in.
        "notify": {"notify_input": {"type": "checkboxes", "selected_options": [NOTIFY[0], NOTIFY[2]]}},
        "note": {"note_input": {"type": "plain_text_input", "value": None}},  # not sent by the page: still there
    }
    assert stand_in.state(APPROVER)["modal"] is None  # answered {}: closed


def test_nothing_chosen_is_null_or_empty_and_an_errors_answer_keeps_the_modal_open(
    stand_in: SandboxSlack, bot: BotStandIn
) -> None:
    view_id = _open_modal(stand_in)
    bot.answers.append({"response_action": "errors", "errors": {"replicas": "Say how many replicas"}})
    answer = stand_in.submit(
        APPROVER,
        view_id,
        {
            "service": {"service_input": ""},
            "replicas": {"replicas_input": ""},
            "size": {"size_input": None},
            "notify": {"notify_input": []},
        },
    )
    assert answer == {"status": 200, "errors": {"replicas": "Say how many replicas"}}
    assert bot.submissions()[0]["view"]["state"]["values"] == {
        "service": {"service_input": {"type": "plain_text_input", "value": None}},
        "replicas": {"replicas_input": {"type": "number_input", "value": None}},
        "size": {"size_input": {"type": "static_select", "selected_option": None}},
        "notify": {"notify_input": {"type": "checkboxes", "selected_options": []}},
        "note": {"note_input": {"type": "plain_text_input", "value": None}},
    }
    assert stand_in.state(APPROVER)["modal"]["id"] == view_id


@pytest.mark.parametrize(
    ("values", "refusal"),
    [
        ({"size": {"size_input": "xl"}}, "input=size/size_input value='xl' | not one of its options"),
        ({"notify": {"notify_input": ["oncall", "boss"]}}, "value='boss' | not one of its options"),
        ({"notify": {"notify_input": "oncall"}}, "expected a list of option values"),
        ({"replicas": {"replicas_input": "2.5"}}, "value='2.5' | not a number this input takes"),
        ({"replicas": {"replicas_input": "11"}}, "value='11' | not a number this input takes"),
        ({"replicas": {"replicas_input": "many"}}, "not a number this input takes"),
        ({"service": {"service_input": ["checkout"]}}, "expected text"),
        ({"service": {"other_input": "x"}}, "input=service/other_input | no such input in that modal"),
        ({"elsewhere": {"service_input": "x"}}, "input=elsewhere/service_input | no such input in that modal"),
    ],
)
def test_a_choice_the_modal_does_not_offer_is_refused_before_the_bot_hears_of_it(
    stand_in: SandboxSlack, bot: BotStandIn, values: JsonDict, refusal: str
) -> None:
    view_id = _open_modal(stand_in)
    with pytest.raises(PageError, match=refusal.replace("|", r"\|").replace(".", r"\.")):
        stand_in.submit(APPROVER, view_id, values)
    assert bot.submissions() == []
    assert stand_in.state(APPROVER)["modal"]["id"] == view_id


def test_the_pages_submit_endpoint_answers_a_refusal_with_http_400(stand_in: SandboxSlack, bot: BotStandIn) -> None:
    view_id = _open_modal(stand_in)
    body = {"user": APPROVER, "view_id": view_id, "values": {"size": {"size_input": "xl"}}}
    request = urllib.request.Request(
        f"http://127.0.0.1:{stand_in.port}/sandbox/submit",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400
    assert "not one of its options" in json.loads(refused.value.read())["error"]
    assert bot.submissions() == []


# ------------------------------------------------------------------ what views.* takes


def _element(view: JsonDict, block_id: str) -> JsonDict:
    element: JsonDict = next(b for b in view["blocks"] if b["block_id"] == block_id)["element"]
    return element


def _block(view: JsonDict, block_id: str) -> JsonDict:
    block: JsonDict = next(b for b in view["blocks"] if b["block_id"] == block_id)
    return block


Change = Callable[[JsonDict], None]
REFUSED: dict[str, Change] = {
    "101 select options": lambda v: _element(v, "size").update(
        options=[_option(f"o{n}", f"v{n}") for n in range(101)], initial_option=_option("o0", "v0")
    ),
    "11 checkboxes": lambda v: _element(v, "notify").update(
        options=[_option(f"o{n}", f"v{n}") for n in range(11)], initial_options=[]
    ),
    "no checkboxes": lambda v: _element(v, "notify").update(options=[], initial_options=[]),
    "option text of 76": lambda v: _element(v, "size")["options"].append(_option("x" * 76, "x")),
    "option value of 151": lambda v: _element(v, "size")["options"].append(_option("x", "x" * 151)),
    "option text not plain": lambda v: _element(v, "size")["options"].append(
        {"text": {"type": "mrkdwn", "text": "*x*"}, "value": "x"}
    ),
    "option without a value": lambda v: _element(v, "notify")["options"].append({"text": _plain("x")}),
    "initial option not offered": lambda v: _element(v, "size").update(initial_option=_option("Huge", "xl")),
    "initial option differs in text": lambda v: _element(v, "size").update(initial_option=_option("Mid", "m")),
    "initial checkbox not offered": lambda v: _element(v, "notify").update(initial_options=[_option("Boss", "b")]),
    "select without options": lambda v: _element(v, "size").pop("options"),
    "number without is_decimal_allowed": lambda v: _element(v, "replicas").pop("is_decimal_allowed"),
    "is_decimal_allowed not a boolean": lambda v: _element(v, "replicas").update(is_decimal_allowed="false"),
    "number bound not a number": lambda v: _element(v, "replicas").update(min_value="one"),
    "number bound not a string": lambda v: _element(v, "replicas").update(max_value=10),
    "min above max": lambda v: _element(v, "replicas").update(min_value="11"),
    "text max_length of 3001": lambda v: _element(v, "service").update(max_length=3001),
    "placeholder of 151": lambda v: _element(v, "size").update(placeholder=_plain("x" * 151)),
    "label of 2001": lambda v: _block(v, "service").update(label=_plain("x" * 2001)),
    "empty label": lambda v: _block(v, "service").update(label=_plain("")),
    "hint of 2001": lambda v: _block(v, "replicas").update(hint=_plain("x" * 2001)),
    "no element": lambda v: _block(v, "size").pop("element"),
    "action_id of 256": lambda v: _element(v, "service").update(action_id="a" * 256),
}


@pytest.mark.parametrize("change", REFUSED.values(), ids=REFUSED.keys())
def test_views_open_refuses_an_input_slack_refuses(stand_in: SandboxSlack, client: WebClient, change: Change) -> None:
    view = edit_call_view()
    change(view)
    with pytest.raises(SlackApiError) as refused:
        client.views_open(trigger_id=stand_in._trigger(APPROVER), view=view)
    assert refused.value.response["error"] == "invalid_arguments"
    assert stand_in.views() == []


def test_views_open_takes_inputs_at_slacks_limits(stand_in: SandboxSlack, client: WebClient) -> None:
    view = edit_call_view()
    widest = [_option(f"{n:02d}" + "x" * 73, f"{n:03d}" + "v" * 147) for n in range(100)]
    _element(view, "size").update(options=widest, initial_option=widest[99], placeholder=_plain("p" * 150))
    _element(view, "notify").update(options=widest[:10], initial_options=widest[:10])
    _element(view, "replicas").update(is_decimal_allowed=True, min_value="-0.5", max_value="-0.5", initial_value="7")
    _element(view, "service").update(max_length=3000, min_length=3000, action_id="a" * 255)
    _block(view, "replicas").update(hint=_plain("h" * 2000), label=_plain("l" * 2000))
    checkbox = {"text": {"type": "mrkdwn", "text": "*tick*"}, "value": "t", "description": _plain("d" * 75)}
    _element(view, "notify")["options"][0] = _element(view, "notify")["initial_options"][0] = checkbox
    opened = client.views_open(trigger_id=stand_in._trigger(APPROVER), view=view)
    assert opened["view"]["blocks"] == view["blocks"]


def test_views_update_and_publish_check_inputs_too(stand_in: SandboxSlack, client: WebClient) -> None:
    opened = client.views_open(trigger_id=stand_in._trigger(APPROVER), view=edit_call_view())
    bad = edit_call_view()
    _element(bad, "replicas").pop("is_decimal_allowed")
    with pytest.raises(SlackApiError) as refused:
        client.views_update(view_id=opened["view"]["id"], view=bad)
    assert refused.value.response["error"] == "invalid_arguments"
    select = {"type": "static_select", "action_id": "pick", "options": [_option("x" * 76, "x")]}
    home = {"type": "home", "blocks": [{"type": "actions", "elements": [select]}]}
    with pytest.raises(SlackApiError) as refused:
        client.views_publish(user_id=APPROVER, view=home)
    assert refused.value.response["error"] == "invalid_arguments"
    select["options"] = [_option("x" * 75, "x")]
    assert client.views_publish(user_id=APPROVER, view=home)["ok"]


def test_submitted_state_skips_blocks_that_are_not_inputs_it_knows() -> None:
    view = edit_call_view()
    view["blocks"] += [
        {"type": "section", "text": {"type": "mrkdwn", "text": "restart *checkout*"}},
        {"type": "input", "block_id": "day", "label": _plain("Day"), "element": {"type": "datepicker"}},
    ]
    assert set(submitted_state(view, {})) == {"service", "replicas", "size", "notify", "note"}


# ------------------------------------------------------------------ the page


def test_the_page_renders_fills_and_submits_every_input_type(
    stand_in: SandboxSlack, bot: BotStandIn, steps: Steps
) -> None:
    page = steps.page
    _post_edit_button(stand_in)
    page.goto(f"http://127.0.0.1:{stand_in.port}/?as={APPROVER}")
    page.get_by_test_id(f"button-{EDIT_ACTION}").click()
    modal = page.get_by_test_id("modal")
    expect(modal).to_be_visible()
    service, replicas, size = (modal.get_by_test_id(f"input-{name}") for name in ("service", "replicas", "size"))
    notify, note = modal.get_by_test_id("input-notify"), modal.get_by_test_id("input-note")
    expect(service).to_have_value("checkout")  # initial values shown
    expect(replicas).to_have_value("3")
    expect(replicas).to_have_attribute("step", "1")
    expect(size).to_have_value("m")
    expect(notify.get_by_label("The requester")).to_be_checked()
    expect(notify.get_by_label("On-call")).not_to_be_checked()
    expect(note).to_have_attribute("placeholder", "Why the change")
    expect(modal.locator('[data-block-id="replicas"] .hint')).to_have_text("Between 1 and 10.")
    expect(modal.locator('[data-block-id="notify"] > label')).to_contain_text("(optional)")
    steps.shot("edit-call-modal")

    service.fill("checkout-eu")
    replicas.fill("12")  # over max_value: the browser, like Slack's client, does not send it
    size.select_option("l")
    notify.get_by_label("On-call").check()
    note.fill("traffic spike")
    page.get_by_test_id("modal-submit").click()
    assert replicas.evaluate("field => field.validity.rangeOverflow") is True

    replicas.fill("5")
    bot.answers.append({"response_action": "errors", "errors": {"replicas": "At most 4 replicas in business hours"}})
    page.get_by_test_id("modal-submit").click()
    error = modal.locator('[data-block-id="replicas"] [data-testid="input-error"]')
    expect(error).to_have_text("At most 4 replicas in business hours")
    expect(modal.get_by_test_id("input-error")).to_have_count(1)
    expect(replicas).to_have_value("5")  # what the person chose survives the re-render
    expect(size).to_have_value("l")
    expect(notify.get_by_label("On-call")).to_be_checked()
    expect(note).to_have_value("traffic spike")
    steps.shot("error-under-replicas")
    [submission] = bot.submissions()  # the one with 12 was never sent
    assert submission["view"]["state"]["values"] == {
        "service": {"service_input": {"type": "plain_text_input", "value": "checkout-eu"}},
        "replicas": {"replicas_input": {"type": "number_input", "value": "5"}},
        "size": {"size_input": {"type": "static_select", "selected_option": SIZES[2]}},
        "notify": {"notify_input": {"type": "checkboxes", "selected_options": [NOTIFY[0], NOTIFY[1]]}},
        "note": {"note_input": {"type": "plain_text_input", "value": "traffic spike"}},
    }

    replicas.fill("4")
    notify.get_by_label("The requester").uncheck()
    page.get_by_test_id("modal-submit").click()
    expect(modal).to_be_hidden()
    last = bot.submissions()[-1]["view"]["state"]["values"]
    assert last["replicas"] == {"replicas_input": {"type": "number_input", "value": "4"}}
    assert last["notify"] == {"notify_input": {"type": "checkboxes", "selected_options": [NOTIFY[1]]}}
    steps.shot("saved")
