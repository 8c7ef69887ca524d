"""Packaging beyond pyproject.toml: the top-level ``fixtures/`` ship inside the wheel.

``fixtures/<CODE>/{bad,good}.py`` stay at the top of the repository (the linter tests and
`amplint verify` in a checkout read them there) and are installed as the package data
``amplint/fixtures``, which `amplint verify` runs when amplint is installed from a wheel.
pyproject.toml cannot both find the packages and map one of them to another folder.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["amplint", "amplint.*"]), "amplint.fixtures"],
    package_dir={"amplint.fixtures": "fixtures"},
    package_data={"amplint": ["data/*.json"], "amplint.fixtures": ["README.md", "AMP[0-9][0-9][0-9]/*.py"]},
)
