"""``python -m accelbook.cli``: the same as the ``accelbook`` console script."""

from accelbook.cli.main import main

if __name__ == "__main__":      # imported (pkgutil.walk_packages in the tests), it does nothing
    raise SystemExit(main())
