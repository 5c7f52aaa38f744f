"""``python -m bot policy check FILE --tool NAME [--input JSON] [--interrupt NAME]``: which rule a call gets, and why.

Loads the policy file as the bot does (the same errors, with file, line and field; exit status 2), then weighs
the rules for the sample call in order, saying for each what its condition answered, and prints the policy that
applies: its tier, who may decide, when the request expires (``DEFAULT_EXPIRY`` where the rule sets no ``expiry``)
and what a ``deny`` tells the agent. Needs nothing else (no Redis, no Slack).
"""

import argparse
import json
import re
from pathlib import Path

from agent.approval import APPROVAL_INTERRUPT
from bot.cli.exits import fail
from bot.domain.policy.policy import PolicyBook, Weighed
from bot.domain.policy.policy_file import PolicyError, load_policy
from bot.domain.policy.policy_rules import DEFAULT_POLICY_NAME, Policy
from bot.render.texts.times import for_duration
from bot.settings import ConfigError, load_policy_defaults

_MENTION = re.compile(r"<(?:@|!subteam\^)(?P<id>[A-Z0-9]+)>")
_TIERS = {
    "ask": "asked: people decide",
    "allow": "allowed: runs without asking (audited)",
    "deny": "refused: nobody is asked",
}
_OUTCOMES = {
    "deny": "it ends as expired (the agent is told so)",
    "keep": "the thread is told, and it stays pending",
    "approve": "it is approved automatically (low risk)",
}


def main(argv: list[str]) -> int:
    """Explain the policy for one call; 0 when explained, 2 for a policy file or argument that is wrong."""
    parser = argparse.ArgumentParser(prog="python -m bot policy", description="Check a policy file.")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="which rule a sample call gets, and why")
    check.add_argument("file", type=Path, help="the policy file (YAML or TOML)")
    check.add_argument("--tool", required=True, help="the tool the call runs")
    check.add_argument("--input", default="{}", help="its input, a JSON object (default: {})")
    check.add_argument("--interrupt", default=APPROVAL_INTERRUPT, help="the interrupt's name (default: approval)")
    args = parser.parse_args(argv)
    try:
        tool_input = json.loads(args.input)
    except ValueError as error:
        return fail(f"--input: not JSON ({error})")
    if not isinstance(tool_input, dict):
        return fail("--input: must be a JSON object, the call's arguments")
    try:
        book = load_policy(args.file)
        default_expiry = load_policy_defaults().default_expiry
    except (PolicyError, ConfigError) as error:
        return fail(error)
    lines = explain(
        book, tool=args.tool, tool_input=tool_input, interrupt_name=args.interrupt, default_expiry=default_expiry
    )
    for line in lines:
        print(line)
    return 0


def explain(
    book: PolicyBook, *, tool: str, tool_input: dict[str, object], interrupt_name: str, default_expiry: int
) -> list[str]:
    """The lines ``policy check`` prints for one call, ``default_expiry`` (seconds) applying where no expiry is set."""
    lines = [f"call: {tool} {json.dumps(tool_input, ensure_ascii=False)[:500]}"]
    weighed = book.weigh(tool, tool_input)
    lines += [_line(entry) for entry in weighed]
    if not weighed:
        lines.append(f"  no rule lists the tool {tool!r}")
    policy = book.for_call(tool=tool, interrupt_name=interrupt_name, tool_input=tool_input)
    if not any(entry.applies for entry in weighed):
        source = "the default" if policy.name == "default" else f"rule {policy.name!r}, by the interrupt's name"
        lines.append(f"  so {source} applies")
    lines.append(f"policy: {policy.name} ({_TIERS[policy.tier]})")
    if policy.tier == "deny":
        lines.append(f"the agent is told: {policy.message or 'refused by rule ' + repr(policy.name)}")
    elif policy.tier == "ask":
        who = _MENTION.sub(lambda mention: mention["id"], policy.approvers_text())  # the terminal shows no mrkdwn
        lines.append(f"who decides: {who}; quorum {policy.quorum}")
        effective = book.with_default_expiry(default_expiry).for_call(
            tool=tool, interrupt_name=interrupt_name, tool_input=tool_input
        )
        lines.append(_expiry_line(policy, effective))
    return lines


def _expiry_line(policy: Policy, effective: Policy) -> str:
    ends = effective.ends
    if ends is None:
        return "expiry: never (it waits until someone decides)"
    said = f"expiry: after {for_duration(ends.after)}, {_OUTCOMES[ends.outcome]}"
    if policy.expiry is not None:
        return said
    setter = "the default section" if policy.name == DEFAULT_POLICY_NAME else "the rule"
    return f"{said}: DEFAULT_EXPIRY, as {setter} sets none"


def _line(entry: Weighed) -> str:
    rule, held = entry.rule, entry.held
    if held is None:
        said = "no condition"
    elif held == "error":
        said = f"condition {rule.match.when!r} has no answer for this input"
    else:
        said = f"condition {rule.match.when!r} is {'true' if held else 'false'}"
    verdict = f"applies (tier {rule.tier})" if entry.applies else "does not apply"
    if held == "error":
        verdict += ": an allow rule never applies on no answer" if not entry.applies else ": read the stricter way"
    return f"  rule {rule.name!r}: {said}, {verdict}"
