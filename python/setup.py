"""The wheel of the module memfit, packed from a built package directory (scripts/build-python.sh
copies <build>/python/memfit beside this file): the extension is built by CMake with the rest of
memfit, not by setuptools. MEMFIT_VERSION is the CMake project's version."""

import os

from setuptools import setup
from setuptools.dist import Distribution


class BinaryDistribution(Distribution):
    """A platform wheel (cp311-cp311-linux_x86_64): the package holds a compiled extension."""

    def has_ext_modules(self):
        return True


setup(
    name="memfit",
    version=os.environ["MEMFIT_VERSION"],
    description="How much memory an ML model needs to load, serve and train",
    long_description=open("README.md", encoding="utf-8").read()
    if os.path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    packages=["memfit"],
    package_data={"memfit": ["_memfit*.so", "__init__.pyi", "py.typed"]},
    include_package_data=False,
    python_requires=">=3.11,<3.12",
    distclass=BinaryDistribution,
    zip_safe=False,
)
