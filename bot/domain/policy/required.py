"""A model rule shared by policy-file sections: of some optional fields, at least one must be set."""

from typing import Any

from pydantic import BaseModel, model_validator
from pydantic_core import PydanticCustomError


def at_least_one(*fields: str, error_type: str, message: str) -> Any:
    """A model validator refusing a model whose ``fields`` are all unset (``None`` or empty).

    Assign it in the model's body (``_someone = at_least_one("users", "rotation", ...)``); a refused
    model raises ``PydanticCustomError(error_type, message)``.
    """

    def check(model: BaseModel) -> BaseModel:
        if all(getattr(model, name) in (None, ()) for name in fields):
            raise PydanticCustomError(error_type, message)
        return model

    return model_validator(mode="after")(check)
