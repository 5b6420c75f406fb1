"""`python -m mrcrawl COMMAND ...`: the same as the `mrcrawl` command (cli.py)."""
import sys

from mrcrawl.cli import main

sys.exit(main())
