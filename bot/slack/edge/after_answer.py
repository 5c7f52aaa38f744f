"""Work a request's handler leaves until its answer has left: a word to the person that the outcome does not need.

Over HTTP (``bot.slack.edge.http``) each request served collects such steps (``collected``) and the WSGI server runs
them once the answer is sent (its ``close``): a person's click is answered without waiting for them. Elsewhere (Socket
Mode, which acks on its own) a step runs at once. A server gone between the answer and the step loses only those
words: what the click recorded, and the message that shows it, are written before the answer.
"""

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Step = Callable[[], None]
_LATER: ContextVar[list[Step] | None] = ContextVar("after_answer", default=None)


def after_answer(step: Step) -> None:
    """Run ``step`` once the request being served is answered (at once when nothing collects it)."""
    later = _LATER.get()
    if later is None:
        step()
    else:
        later.append(step)


@contextmanager
def collected() -> Iterator[list[Step]]:
    """Collect the steps ``after_answer`` is given while the block runs."""
    later: list[Step] = []
    token = _LATER.set(later)
    try:
        yield later
    finally:
        _LATER.reset(token)


class ThenAfterTheAnswer(list[bytes]):
    """An answer's chunks; closing it (the WSGI server does, once they are sent) runs the steps that waited."""

    def __init__(self, answer: Iterable[bytes], steps: list[Step]) -> None:
        """The answer (closed first, if it closes), and what runs after it."""
        super().__init__(answer)
        self._answer = answer
        self._steps = steps

    def close(self) -> None:
        """Close the answer, then run the steps in order."""
        close = getattr(self._answer, "close", None)
        if close is not None:
            close()
        for step in self._steps:
            step()
