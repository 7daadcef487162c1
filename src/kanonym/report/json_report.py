"""Serializing release reports.

The report is a plain JSON object whose keys are documented on the documentation site
(Reports, "JSON report"); ``schema_version`` (:data:`kanonym.result.SCHEMA_VERSION`)
changes whenever a key changes meaning or disappears, so reviewers' tooling can rely on it.

Example:
    >>> render_json({"schema_version": 2, "k": 5})[:1]
    b'{'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping


def _finite(value: object) -> object:
    # JSON has no NaN or infinity; a measure that is undefined is reported as null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def render_json(report: Mapping[str, object]) -> bytes:
    """The report as indented UTF-8 JSON with a final newline."""
    return (json.dumps(_finite(report), indent=2, ensure_ascii=False) + "\n").encode("utf-8")
