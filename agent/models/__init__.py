"""Models behind one small protocol; the scripted one ships for tests and demonstrations."""

from agent.models.base import Model, ModelError, ModelTurn
from agent.models.scripted import ScriptedModel

__all__ = ["Model", "ModelError", "ModelTurn", "ScriptedModel"]
