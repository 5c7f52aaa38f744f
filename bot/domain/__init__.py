"""The bot's vocabulary: records, the policy and its file, the ladder, durations, on-call, the clock.

Imports nothing else of ``bot``.
"""
