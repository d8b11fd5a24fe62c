"""`python -m regrag.cli …`: the same as the `regrag` command (deploy.sh runs `doctor` this way)."""

import sys

from regrag.cli import main

sys.exit(main())
