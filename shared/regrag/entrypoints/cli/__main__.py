"""`python -m regrag.entrypoints.cli …`: the same as the `regrag` command (deploy.sh runs `doctor` this way)."""

import sys

from regrag.entrypoints.cli import main

sys.exit(main())
