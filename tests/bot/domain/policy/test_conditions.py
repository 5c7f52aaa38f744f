"""Conditions on a call's arguments (``match.when``, CEL) and risk tiers in the policy file: what loads, what is
refused at start (with the file, line and field), and which rule a call gets."""

from pathlib import Path

import pytest

from bot.domain.policy import conditions
from bot.domain.policy.policy import PolicyBook
from bot.domain.policy.policy_file import load_policy
from tests.bot.support.policy_files import TIERED, load_error, problem_cases, write


def _loaded(tmp_path: Path, text: str) -> PolicyBook:
    """The policy book of ``text``, written as a policy file in ``tmp_path``."""
    return load_policy(write(tmp_path, text))


@pytest.fixture
def book(tmp_path: Path) -> PolicyBook:
    return _loaded(tmp_path, TIERED)


@pytest.mark.parametrize(
    ("tool_input", "rule", "tier"),
    [
        ({"replicas": 12}, "big-scale", "deny"),
        ({"replicas": 2}, "small-scale", "allow"),
        ({"replicas": 5}, "scaling", "ask"),
        # No answer (no such field, or not a number): an allow rule never applies on it, a deny rule does.
        ({}, "big-scale", "deny"),
        ({"replicas": "many"}, "big-scale", "deny"),
        (None, "big-scale", "deny"),
    ],
)
def test_the_first_rule_whose_condition_holds_applies(
    book: PolicyBook, tool_input: object, rule: str, tier: str
) -> None:
    policy = book.for_call(tool="scale_service", interrupt_name="approval", tool_input=tool_input)
    assert (policy.name, policy.tier) == (rule, tier)


def test_a_condition_with_no_answer_does_not_apply_an_allow_rule(tmp_path: Path) -> None:
    small = (
        "rules:\n  - name: small\n    match: {tools: [scale_service], when: 'args.replicas <= 3'}\n    tier: allow\n"
    )
    book = _loaded(tmp_path, small)
    assert book.for_call(tool="scale_service", interrupt_name="approval", tool_input={}).name == "default"
    assert book.for_call(tool="scale_service", interrupt_name="approval", tool_input={"replicas": 1}).tier == "allow"


def test_a_batch_is_refused_if_any_call_is_and_runs_unasked_only_if_every_call_may(book: PolicyBook) -> None:
    def batch(*replicas: int) -> tuple[str, str]:
        policy = book.for_call(
            tool=None,
            interrupt_name="approval",
            batch=["scale_service"] * len(replicas),
            batch_inputs=[{"replicas": count} for count in replicas],
        )
        return policy.tier, policy.name

    assert batch(1, 2) == ("allow", "small-scale")
    assert batch(1, 5) == ("ask", "small-scale + scaling")
    assert batch(1, 5, 30) == ("deny", "big-scale + small-scale + scaling")
    refused = book.for_call(
        tool=None, interrupt_name="approval", batch=["scale_service", "scale_service"], batch_inputs=[{}, {}]
    )
    assert refused.message == "Past 10 replicas needs a capacity review."


@pytest.mark.parametrize(("text", "expected"), problem_cases("conditions"))
def test_a_condition_or_tier_error_names_the_file_line_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    assert str(load_error(path)).startswith(f"{path}, {expected}")


def test_conditions_read_json_values_and_macros_but_nothing_else() -> None:
    args = {"env": "prod", "hosts": ["a", "b", "c"], "limits": {"cpu": 2.5}}
    assert conditions.holds('args.hosts.exists(h, h == "b") && args.limits.cpu > 2', tool="t", args=args) is True
    assert conditions.holds("size(args.hosts) > 5", tool="t", args=args) is False
    assert conditions.holds("args.env", tool="t", args=args) == "error"  # not a boolean
    assert conditions.checked("args.hosts.all(host, host != tool)") == "args.hosts.all(host, host != tool)"


# One condition per function and macro a condition may call, true where the evaluator runs it.
_ARGS = {"env": "prod", "hosts": ["a", "bb", "ccc"], "at": "2024-03-05T06:07:08.009Z", "limits": {"cpu": 2}}
_EACH_CALL = {
    "all": "args.hosts.all(h, size(h) > 0)",
    "bool": 'bool("true")',
    "bytes": 'bytes("a") == b"a"',
    "contains": 'args.env.contains("ro")',
    "double": "double(args.limits.cpu) == 2.0",
    "duration": 'duration("90s").getSeconds() == 90',
    "dyn": "dyn(args.limits.cpu) == 2",
    "endsWith": 'args.env.endsWith("od")',
    "exists": 'args.hosts.exists(h, h == "bb")',
    "exists_one": "args.hosts.exists_one(h, size(h) == 2)",
    "filter": "size(args.hosts.filter(h, size(h) > 1)) == 2",
    "getDate": "timestamp(args.at).getDate() == 5",
    "getDayOfMonth": "timestamp(args.at).getDayOfMonth() == 4",
    "getDayOfWeek": "timestamp(args.at).getDayOfWeek() == 2",
    "getDayOfYear": "timestamp(args.at).getDayOfYear() == 64",
    "getFullYear": "timestamp(args.at).getFullYear() == 2024",
    "getHours": "timestamp(args.at).getHours() == 6",
    "getMilliseconds": "timestamp(args.at).getMilliseconds() == 9",
    "getMinutes": "timestamp(args.at).getMinutes() == 7",
    "getMonth": "timestamp(args.at).getMonth() == 2",
    "getSeconds": "timestamp(args.at).getSeconds() == 8",
    "has": "has(args.env) && !has(args.region)",
    "int": 'int("3") == 3',
    "list": "list(args.hosts) == args.hosts",
    "map": 'args.hosts.map(h, size(h)) == [1, 2, 3] && map(args.limits) == {"cpu": 2}',
    "matches": 'args.env.matches("^pr")',
    "min": "args.hosts.map(h, size(h)).min() == 1",
    "null_type": "null_type() == null",
    "reduce": "args.hosts.reduce(total, h, 0, total + size(h)) == 6",
    "size": "size(args.hosts) == 3 && args.env.size() == 4",
    "startsWith": 'args.env.startsWith("pr")',
    "string": 'string(args.limits.cpu) == "2"',
    "timestamp": 'timestamp(args.at) > timestamp("2024-01-01T00:00:00Z")',
    "type": "type(args.hosts) == type([])",
    "uint": "uint(args.limits.cpu) == 2u",
}


def test_a_condition_may_call_exactly_the_functions_and_macros_cel_python_runs() -> None:
    assert conditions.FUNCTIONS | set(conditions.MACROS) == set(_EACH_CALL)


@pytest.mark.parametrize("name", sorted(_EACH_CALL))
def test_each_function_and_macro_a_condition_may_call_evaluates(name: str) -> None:
    source = conditions.checked(_EACH_CALL[name])
    assert conditions.holds(source, tool="t", args=_ARGS) is True


def test_a_request_is_routed_by_the_first_rule_without_a_condition(tmp_path: Path) -> None:
    book = _loaded(
        tmp_path,
        """
        rules:
          - name: big
            match: {tools: [deploy], when: 'args.replicas > 10'}
            tier: deny
          - name: deploys
            match: {tools: [deploy]}
            channel: C0DEPLOYS
        """,
    )
    assert book.channel_for("deploy", "approval") == "C0DEPLOYS"
    assert book.channel_for("other", "approval") is None
    assert book.for_call(tool="deploy", interrupt_name="approval", tool_input={"replicas": 12}).name == "big"


def test_an_input_shaped_to_leave_a_condition_unanswered_never_escapes_a_deny_rule_after_it(tmp_path: Path) -> None:
    book = _loaded(
        tmp_path,
        """
        rules:
          - name: big-scale
            match: {tools: [scale_service], when: 'args.replicas > 10'}
          - name: prod-frozen
            match: {tools: [scale_service], when: 'args.env == "prod"'}
            tier: deny
          - name: scaling
            match: {tools: [scale_service]}
        """,
    )

    def rule(tool_input: dict[str, object]) -> str:
        return book.for_call(tool="scale_service", interrupt_name="approval", tool_input=tool_input).name

    assert rule({"env": "prod", "replicas": 5}) == "prod-frozen"
    assert rule({"env": "prod", "replicas": "50"}) == "prod-frozen"  # "50" is no number: big-scale has no answer
    assert rule({"env": "dev", "replicas": "50"}) == "big-scale"  # no deny holds: the unanswered ask rule applies
    assert rule({"env": "dev", "replicas": 50}) == "big-scale"
    assert rule({"env": "dev", "replicas": 5}) == "scaling"


def test_an_input_over_the_bound_gets_no_answer_rather_than_seconds_of_evaluation() -> None:
    hosts = [f"host-{index}" for index in range(50_000)]  # ~700 KiB as JSON: over MAX_INPUT_BYTES
    assert conditions.holds('args.hosts.exists(h, h == "nope")', tool="t", args={"hosts": hosts}) == "error"
    assert conditions.holds('args.hosts.exists(h, h == "host-3")', tool="t", args={"hosts": hosts[:10]}) is True
