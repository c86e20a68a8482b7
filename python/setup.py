"""Build hook: record where the repository's libtool build puts libmpemu.so, so that an
installed package finds the library of the tree it was installed from (after MPEMU_LIB and
before the system's dynamic linker paths; see mpemu/_lib.py)."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def run(self):
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        libs = os.path.join(os.path.dirname(here), ".libs")
        target = os.path.join(self.build_lib, "mpemu", "_where.py")
        with open(target, "w") as f:
            f.write("# written by setup.py at install time\n")
            f.write(f"BUILD_LIBDIR = {libs!r}\n")


setup(cmdclass={"build_py": BuildPy})
