"""The attacks' default settings, in one module light enough for the command
line to read when it builds its options.

Example:
    >>> DEFAULT_THRESHOLD
    0.2
"""

DEFAULT_THRESHOLD = 0.2
"""Records whose risk exceeds this are at risk: classes smaller than five."""

DEFAULT_MAX_SIZE = 3
"""The largest column combination ``qi-scan`` tries."""

DEFAULT_K = 2
"""``link`` counts identities matching 1 to k-1 records."""

DEFAULT_DOMINANCE = 0.5
"""A class is dominated when one sensitive value's share exceeds this."""

DEFAULT_LIMIT = 20
"""Dominated classes listed per sensitive attribute."""
