"""``python -m kanonym`` runs the command line."""

import sys

from kanonym.cli import main

sys.exit(main())
