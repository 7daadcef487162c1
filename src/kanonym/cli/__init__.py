"""Command-line interface: ``kanonym COMMAND`` (``kanonym --help`` lists them).

anonymize, check, apply and demo make and check releases; release and audit
keep and link a series of them (the ledger); risk, qi-scan, link and
disclosure measure what a table gives away.
"""

from kanonym.cli.main import main

__all__ = ["main"]
