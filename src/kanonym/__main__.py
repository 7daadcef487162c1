"""``python -m kanonym`` runs the command line."""

from kanonym.cli.main import run

run()
