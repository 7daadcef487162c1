"""Command-line interface: ``kanonym anonymize | check | demo``."""

from kanonym.cli.main import main

__all__ = ["main"]
