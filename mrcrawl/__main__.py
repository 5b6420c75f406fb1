"""`python -m mrcrawl COMMAND ...`: the same as the `mrcrawl` command (cli.py)."""
import sys

from mrcrawl.cli import main

if __name__ == "__main__":
    sys.exit(main())
