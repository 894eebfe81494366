"""``python -m gdl2pl.cli``: the command line."""

import sys

from gdl2pl.cli.main import main

sys.exit(main())
