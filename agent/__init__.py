"""The agent runtime that raises and resumes interrupts (no Slack code here)."""

from agent.agent import Agent, AgentResult
from agent.approval import ApprovalGate, Decision, DiscussionEntry
from agent.hooks import (
    AfterInvocationEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeToolCallEvent,
    BeforeToolsEvent,
    HookProvider,
    HookRegistry,
)
from agent.models import Model, ModelError, ModelTurn, ScriptedModel
from agent.tools import AgentTool, ToolContext, tool

__all__ = [
    "AfterInvocationEvent",
    "AfterToolCallEvent",
    "Agent",
    "AgentResult",
    "AgentTool",
    "ApprovalGate",
    "BeforeInvocationEvent",
    "BeforeToolCallEvent",
    "BeforeToolsEvent",
    "Decision",
    "DiscussionEntry",
    "HookProvider",
    "HookRegistry",
    "Model",
    "ModelError",
    "ModelTurn",
    "ScriptedModel",
    "ToolContext",
    "tool",
]
