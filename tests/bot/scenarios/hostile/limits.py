"""Slack's published Block Kit limits, checked where the fake Slack does not check them."""

from typing import Any


def _text(obj: Any) -> str:
    return str(obj.get("text", "")) if isinstance(obj, dict) else ""


def view_problems(view: dict[str, Any], *, max_blocks: int) -> list[str]:
    """Every limit ``view`` (a modal or home view) or a message's blocks break."""
    problems: list[str] = []
    for name, limit in (("title", 24), ("submit", 24), ("close", 24)):
        if name in view and len(_text(view[name])) > limit:
            problems.append(f"{name} longer than {limit}")
    if len(str(view.get("private_metadata", ""))) > 3000:
        problems.append("private_metadata longer than 3000")
    problems += block_problems(view.get("blocks", []), max_blocks=max_blocks)
    return problems


def block_problems(blocks: list[dict[str, Any]], *, max_blocks: int) -> list[str]:  # noqa: PLR0912 (one check per limit)
    problems: list[str] = []
    if len(blocks) > max_blocks:
        problems.append(f"{len(blocks)} blocks (max {max_blocks})")
    for index, block in enumerate(blocks):
        kind = block.get("type")
        if len(str(block.get("block_id", ""))) > 255:
            problems.append(f"block {index}: block_id longer than 255")
        if kind == "header" and len(_text(block.get("text"))) > 150:
            problems.append(f"block {index}: header longer than 150")
        if kind == "section" and len(_text(block.get("text"))) > 3000:
            problems.append(f"block {index}: section text longer than 3000")
        if kind == "context":
            elements = block.get("elements", [])
            if len(elements) > 10:
                problems.append(f"block {index}: context with {len(elements)} elements")
            for element in elements:
                if len(_text(element)) > 3000:
                    problems.append(f"block {index}: context text longer than 3000")
        if kind == "actions":
            for element in block.get("elements", []):
                if len(_text(element.get("text"))) > 75:
                    problems.append(f"block {index}: button text longer than 75")
                if len(str(element.get("value", ""))) > 2000:
                    problems.append(f"block {index}: button value longer than 2000")
        if kind == "input" and len(_text(block.get("label"))) > 2000:
            problems.append(f"block {index}: input label longer than 2000")
    return problems
