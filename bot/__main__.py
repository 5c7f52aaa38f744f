"""Entry point: ``python -m bot`` (see ``bot.cli.main``)."""

import sys

from bot.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
