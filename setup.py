"""Package discovery (the rest of the metadata is in pyproject.toml).

Every package under ``accelbook/`` is found, so a new sub-package ships without being listed by hand;
the catalogue in ``data/`` ships as ``accelbook.data`` (its
``validation/`` folder as ``accelbook.data.validation``, data only). ``tests/test_wheel.py`` builds the wheel and
checks both.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["accelbook", "accelbook.*"]) + ["accelbook.data", "accelbook.data.validation"],
    package_dir={"accelbook.data": "data"},
)
