"""`python -m apshim ...` and the `apshim` console script: the bundled command line tool."""
import os
import sys

from apshim import cli_path


def main():
    cli = cli_path()
    os.execv(cli, [cli] + sys.argv[1:])


if __name__ == "__main__":
    main()
