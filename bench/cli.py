"""A bench's command line: one ``--option`` a setting, of its default's type, below the docstring's first line."""

import argparse

Setting = int | float | tuple[int | float, str]
"""An option's default, or its default and its help text."""


def parse_options(doc: str | None, **settings: Setting) -> argparse.Namespace:
    """Parse the command line of a bench: ``latency_ms=5.0`` is ``--latency-ms``, a float, 5.0 unless given.

    Args:
        doc: The bench module's docstring; its first line describes the bench.
        **settings: Each option's default, or ``(default, help)``.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    for name, setting in settings.items():
        default, help_text = setting if isinstance(setting, tuple) else (setting, None)
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default, help=help_text)
    return parser.parse_args()
