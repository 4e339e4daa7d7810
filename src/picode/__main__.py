"""``python -m picode``."""

import sys

from picode.cli import main

sys.exit(main())
