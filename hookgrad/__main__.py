"""``python -m hookgrad ...`` runs the command line (see `hookgrad.cli`)."""

import sys

from hookgrad.cli import main

sys.exit(main())
