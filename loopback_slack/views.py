"""``views.*``: modals opened and updated, App Home tabs published (``hash`` checked as Slack does).

The input elements a person fills in (``plain_text_input``, ``number_input``, ``static_select``, ``checkboxes``) are
checked against Slack's published limits, and ``submitted_state`` turns what a person chose into the ``state.values``
Slack sends with a ``view_submission``.
"""

import copy
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from loopback_slack.calls import SlackError
from loopback_slack.methods import JsonDict, MethodTable
from loopback_slack.state import WorkspaceState

ID_MAX: Final = 255  # a block_id or an action_id
LABEL_MAX: Final = 2_000  # an input block's label and hint
PLACEHOLDER_MAX: Final = 150
TEXT_INPUT_LENGTH_MAX: Final = 3_000  # plain_text_input's min_length and max_length
SELECT_OPTIONS_MAX: Final = 100  # options of a static_select, and option groups
CHECKBOX_OPTIONS_MAX: Final = 10
OPTION_TEXT_MAX: Final = 75  # an option's text and description; an option group's label
OPTION_VALUE_MAX: Final = 150


def open_view(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``views.open``: store the modal (a ``trigger_id`` is required) and answer with it."""
    if not args.get("trigger_id"):
        raise SlackError("invalid_arguments")
    return {"view": copy.deepcopy(state.store_view(_checked(args.get("view"))))}


def update(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``views.update``: replace the view named by ``view_id`` or ``external_id``, unless its ``hash`` is stale."""
    previous: JsonDict | None = None
    if args.get("view_id"):
        previous = state.views.get(str(args["view_id"]))
    elif args.get("external_id"):
        previous = next((v for v in state.views.values() if v["external_id"] == args["external_id"]), None)
    if previous is None:
        raise SlackError("not_found")
    if args.get("hash") and args["hash"] != previous["hash"]:
        raise SlackError("hash_conflict")
    return {
        "view": copy.deepcopy(state.store_view(_checked(args.get("view")), view_id=previous["id"], previous=previous))
    }


def publish(state: WorkspaceState, args: JsonDict) -> JsonDict:
    """``views.publish``: set ``user_id``'s App Home view, unless the ``hash`` given is stale."""
    user_id = str(args.get("user_id") or "")
    if user_id not in state.users:
        raise SlackError("user_not_found")
    previous_id = state.home_views.get(user_id)
    previous = state.views.get(previous_id) if previous_id else None
    if previous is not None and args.get("hash") and args["hash"] != previous["hash"]:
        raise SlackError("hash_conflict")
    view = state.store_view(_checked(args.get("view")), view_id=previous_id, previous=previous)
    state.home_views[user_id] = view["id"]
    return {"view": copy.deepcopy(view)}


def submitted_state(view: Mapping[str, Any], chosen: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The ``state.values`` of ``view`` once a person has filled it in: one entry for every input it has.

    Args:
        view: The view as stored.
        chosen: block_id -> action_id -> what the person chose: the text of a ``plain_text_input`` (kept a plain
            string, as ``slack_requests.view_submission`` takes it) or of a ``number_input``, the value of a
            ``static_select``'s option, the values of the ticked ``checkboxes``; ``None`` or empty for nothing.

    Raises:
        ValueError: An input the view does not have, or a choice it does not offer.
    """
    inputs = {
        (str(block["block_id"]), str(block["element"]["action_id"])): block["element"]
        for block in view.get("blocks") or []
        if isinstance(block, dict)
        and block.get("type") == "input"
        and block.get("block_id")
        and isinstance(block.get("element"), dict)
        and block["element"].get("action_id")
        and block["element"].get("type") in _STATES
    }
    unknown = next((f"{b}/{a}" for b, actions in chosen.items() for a in actions if (b, a) not in inputs), None)
    if unknown is not None:
        raise ValueError(f"input={unknown} | no such input in that modal")
    state: dict[str, dict[str, Any]] = {}
    for (block_id, action_id), element in inputs.items():
        try:
            entry = _STATES[element["type"]](element, chosen.get(block_id, {}).get(action_id))
        except ValueError as error:
            raise ValueError(f"input={block_id}/{action_id} {error}") from error
        state.setdefault(block_id, {})[action_id] = entry
    return state


def _text_state(_element: JsonDict, chosen: object) -> str | None:
    return _chosen_text(chosen) or None


def _number_state(element: JsonDict, chosen: object) -> JsonDict:
    text = _chosen_text(chosen)
    if text:
        number = _number(text)
        low, high = _number(element.get("min_value")), _number(element.get("max_value"))
        if (
            number is None
            or (not element.get("is_decimal_allowed") and number != number.to_integral_value())
            or (low is not None and number < low)
            or (high is not None and number > high)
        ):
            raise ValueError(f"value={text!r} | not a number this input takes")  # Slack's client would not send it
    return {"type": "number_input", "value": text or None}


def _select_state(element: JsonDict, chosen: object) -> JsonDict:
    value = _chosen_text(chosen)
    return {"type": "static_select", "selected_option": _option(element, value) if value else None}


def _checkboxes_state(element: JsonDict, chosen: object) -> JsonDict:
    values = [] if chosen is None else chosen
    if not isinstance(values, list):
        raise ValueError(f"value={chosen!r} | expected a list of option values")
    for value in values:
        _option(element, value)
    return {
        "type": "checkboxes",
        "selected_options": [copy.deepcopy(o) for o in element["options"] if o["value"] in values],
    }


_STATES: Final[dict[str, Callable[[JsonDict, object], Any]]] = {
    "plain_text_input": _text_state,
    "number_input": _number_state,
    "static_select": _select_state,
    "checkboxes": _checkboxes_state,
}


def _chosen_text(chosen: object) -> str:
    if chosen is None or isinstance(chosen, str):
        return chosen or ""
    raise ValueError(f"value={chosen!r} | expected text")


def _option(element: JsonDict, value: object) -> JsonDict:
    found = next((o for o in _options(element) if o.get("value") == value), None)
    if found is None:
        raise ValueError(f"value={value!r} | not one of its options")
    return copy.deepcopy(found)


def _options(element: JsonDict) -> list[JsonDict]:
    """A select's or checkboxes' options (a select's option groups flattened)."""
    if isinstance(element.get("option_groups"), list):
        return [o for group in element["option_groups"] for o in group.get("options") or []]
    return list(element.get("options") or [])


def _number(value: object) -> Decimal | None:
    """``value`` (a string, as Slack takes numbers) as a finite number, else ``None``."""
    if not isinstance(value, str):
        return None
    try:
        number = Decimal(value)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


# ------------------------------------------------------------------ Slack's rules for the elements


def _checked(spec: object) -> object:
    """``spec`` itself, unless an input element of its blocks breaks Slack's rules (``invalid_arguments``)."""
    blocks = spec.get("blocks") if isinstance(spec, dict) else None
    if isinstance(blocks, list) and any(_block_problem(block) for block in blocks if isinstance(block, dict)):
        raise SlackError("invalid_arguments")
    return spec


def _block_problem(block: JsonDict) -> bool:
    if block.get("type") == "input":
        element = block.get("element")
        # Slack requires the label too; the fake lets a label-less input through, as tests of other parts seed them.
        return (
            _text_problem(block.get("label"), LABEL_MAX)
            or _text_problem(block.get("hint"), LABEL_MAX)
            or len(str(block.get("block_id", ""))) > ID_MAX
            or not isinstance(element, dict)
            or _element_problem(element)
        )
    if block.get("type") == "actions" and isinstance(block.get("elements"), list):
        return any(_element_problem(element) for element in block["elements"])
    return block.get("type") == "section" and "accessory" in block and _element_problem(block["accessory"])


def _element_problem(element: object) -> bool:
    if not isinstance(element, dict):
        return True
    if len(str(element.get("action_id", ""))) > ID_MAX or _text_problem(element.get("placeholder"), PLACEHOLDER_MAX):
        return True
    check = _CHECKS.get(str(element.get("type")))
    return check is not None and check(element)


def _text_input_problem(element: JsonDict) -> bool:
    lengths = [element[name] for name in ("min_length", "max_length") if name in element]
    if any(type(n) is not int or not 0 <= n <= TEXT_INPUT_LENGTH_MAX for n in lengths):
        return True
    crossed = element.get("min_length", 0) > element.get("max_length", TEXT_INPUT_LENGTH_MAX)
    return crossed or not isinstance(element.get("initial_value", ""), str)


def _number_input_problem(element: JsonDict) -> bool:
    if not isinstance(element.get("is_decimal_allowed"), bool):
        return True
    names = ("initial_value", "min_value", "max_value")
    if any(_number(element[name]) is None for name in names if name in element):
        return True
    low, high = _number(element.get("min_value")), _number(element.get("max_value"))
    return low is not None and high is not None and low > high


def _select_problem(element: JsonDict) -> bool:
    groups = element.get("option_groups")
    if ("options" in element) == (groups is not None):
        return True  # one or the other
    if groups is not None:
        if not isinstance(groups, list) or not 0 < len(groups) <= SELECT_OPTIONS_MAX:
            return True
        if any(
            not isinstance(group, dict)
            or _text_problem(group.get("label"), OPTION_TEXT_MAX, required=True)
            or _options_problem(group.get("options"), SELECT_OPTIONS_MAX, _PLAIN)
            for group in groups
        ):
            return True
    elif _options_problem(element["options"], SELECT_OPTIONS_MAX, _PLAIN):
        return True
    return "initial_option" in element and element["initial_option"] not in _options(element)


def _checkboxes_problem(element: JsonDict) -> bool:
    if _options_problem(element.get("options"), CHECKBOX_OPTIONS_MAX, _ANY_TEXT):
        return True
    initial = element.get("initial_options", [])
    return not isinstance(initial, list) or any(option not in element["options"] for option in initial)


_CHECKS: Final[dict[str, Callable[[JsonDict], bool]]] = {
    "plain_text_input": _text_input_problem,
    "number_input": _number_input_problem,
    "static_select": _select_problem,
    "checkboxes": _checkboxes_problem,
}
_PLAIN: Final = frozenset({"plain_text"})
_ANY_TEXT: Final = frozenset({"plain_text", "mrkdwn"})


def _options_problem(options: object, most: int, kinds: frozenset[str]) -> bool:
    if not isinstance(options, list) or not 0 < len(options) <= most:
        return True
    return any(
        not isinstance(option, dict)
        or _text_problem(option.get("text"), OPTION_TEXT_MAX, required=True, kinds=kinds)
        or _text_problem(option.get("description"), OPTION_TEXT_MAX, kinds=kinds)
        or not isinstance(option.get("value"), str)
        or len(option["value"]) > OPTION_VALUE_MAX
        for option in options
    )


def _text_problem(text: object, limit: int, *, required: bool = False, kinds: frozenset[str] = _PLAIN) -> bool:
    """Whether ``text`` is not a text object of ``kinds`` with 1 to ``limit`` characters (or absent when allowed)."""
    if text is None:
        return required
    if not isinstance(text, dict) or text.get("type") not in kinds:
        return True
    content = text.get("text")
    return not isinstance(content, str) or not 0 < len(content) <= limit


METHODS: MethodTable = {"views.open": open_view, "views.update": update, "views.publish": publish}
