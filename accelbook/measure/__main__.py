"""``python -m accelbook.measure``: the measurement kit's command line."""

import sys

from accelbook.measure import main

if __name__ == "__main__":      # a module walker (the wheel test) imports this file without running a measurement
    sys.exit(main())
