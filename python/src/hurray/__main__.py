"""python -m hurray: the hurray command (hurray.cli)."""
import sys

from .cli import main

sys.exit(main())
