"""Report step: the JSON record a reviewer files with every release."""

from kanonym.report.json_report import SCHEMA_VERSION, render_json

__all__ = ["SCHEMA_VERSION", "render_json"]
