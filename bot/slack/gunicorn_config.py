"""gunicorn's settings for the web process (the Procfile: ``gunicorn -c python:bot.slack.gunicorn_config ...``).

Its own log lines (the arbiter's, the workers', the access log) come out in ``LOG_FORMAT`` like the bot's,
so a JSON log pipeline gets nothing but JSON. A malformed ``LOG_FORMAT`` or ``LOG_LEVEL`` ends gunicorn at
once with one message naming it (exit 2), before any worker boots.
"""

import sys

from bot.observe import logs
from bot.settings import ConfigError, load_log_settings

try:
    _log_settings = load_log_settings()
except ConfigError as _error:
    print(f"signoff: {_error}", file=sys.stderr)
    sys.exit(2)

logconfig_dict = logs.logging_config(_log_settings.log_format, _log_settings.log_level)
