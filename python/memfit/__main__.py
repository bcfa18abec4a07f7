"""python3 -m memfit ...: the memfit CLI, run in this process (no subprocess, no binary needed)."""

import sys

from . import _memfit


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    return _memfit.main(args)


if __name__ == "__main__":
    sys.exit(main())
