"""Griffe extension for the API reference: render kanonym's doctests as code.

kanonym's docstrings introduce their doctests with ``Example:``, which Griffe's
Google-style parser reads as an admonition of Markdown text (so ``>>>`` lines
become quotes). Only ``Examples:`` opens a section whose ``>>>`` lines are shown
as Python code, so every ``Example:`` header is read as ``Examples:``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

HEADER = re.compile(r"^(\s*)Example:\s*$", flags=re.MULTILINE)


class ExamplesSection(griffe.Extension):
    """Reads each docstring's ``Example:`` headers as ``Examples:``."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = HEADER.sub(r"\1Examples:", obj.docstring.value)
