"""Build hook: build libmpemu and libmpemu-analysis with the repository's own autotools build
and ship them inside the package (mpemu/_libs/), where mpemu/_lib.py finds them relative to
itself.

The C sources are those of the repository this directory sits in (``pip install ./python``,
``python -m build --wheel python``), or the copy an sdist of this package carries in
``_csrc/`` (``python -m build python`` builds the wheel from the sdist), or the tree named by
the environment variable MPEMU_SRCDIR. They are copied to a temporary folder (the source tree
is left as it is, configured or not) and built there with

    autoreconf -fi
    ./configure --prefix=/usr --libdir=/usr/lib --without-cuda --without-mpi --without-plplot \
                --disable-static LDFLAGS=-Wl,--as-needed
    make libmpemu.la libmpemu-analysis.la
    libtool --mode=install (into a staging folder: libtool relinks libmpemu-analysis without the
                            build tree's run path)

and the two shared objects are shipped under their sonames (libmpemu.so.0, libmpemu-analysis.so.0).

CC and CFLAGS are passed through; MPEMU_BUILD_JOBS sets make's -j (default: the CPU count).
The build needs a C compiler, autoconf, automake, libtool, pkg-config and the -dev packages
configure asks for (see the top-level README.md); the wheel needs their runtime libraries
(python/README.md lists them).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:   # setuptools < 70.1: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = ("libmpemu", "libmpemu-analysis")
# build outputs of an in-tree build, left out when a tree without git is copied
_IGNORE = shutil.ignore_patterns(".git", ".libs", ".deps", "*.o", "*.lo", "*.la", "*.so", "*.so.*", "*.a",
                                 "autom4te.cache", "config.status", "config.log", "*.log", "*.trs",
                                 "*.egg-info", "__pycache__", "_csrc", "Makefile", "config.h", "libtool",
                                 "stamp-h1")


def _ignore(d, names):
    """_IGNORE, and python/build, python/dist (setuptools' and build's outputs)"""
    skip = set(_IGNORE(d, names))
    if os.path.basename(d) == "python":
        skip |= {"build", "dist"} & set(names)
    return skip


def _is_tree(d):
    return os.path.isfile(os.path.join(d, "configure.ac")) and os.path.isfile(os.path.join(d, "lib", "mpemu", "tc.h"))


def source_tree():
    """the C source tree to build from"""
    for d in (os.environ.get("MPEMU_SRCDIR"), os.path.join(HERE, "_csrc"), os.path.dirname(HERE)):
        if d and _is_tree(d):
            return os.path.abspath(d)
    sys.exit("mpemu: the C sources are not found: build from the repository's python/ folder, from an sdist "
             "made there, or set MPEMU_SRCDIR to the repository")


def copy_tree(top, dest):
    """the tracked files of top (git ls-files), or all its files less build outputs, into dest"""
    files = None
    if os.path.isdir(os.path.join(top, ".git")) or os.path.isfile(os.path.join(top, ".git")):
        try:
            out = subprocess.run(["git", "-C", top, "ls-files", "-z"], check=True, capture_output=True).stdout
            files = [f for f in out.decode().split("\0") if f]
        except (OSError, subprocess.CalledProcessError):
            files = None
    if files is None:
        shutil.copytree(top, dest, ignore=_ignore, symlinks=True, dirs_exist_ok=True)
        return
    for f in files:
        src = os.path.join(top, f)
        if not os.path.lexists(src):   # deleted in the work tree
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, f)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, f), follow_symlinks=False)


def build_c(out_dir):
    """configure and make the two libraries in a copy of the tree; copy the shared objects
    (under their sonames) into out_dir"""
    top = source_tree()
    with tempfile.TemporaryDirectory(prefix="mpemu-build-") as tmp:
        src = os.path.join(tmp, "src")
        copy_tree(top, src)

        def run(*cmd):
            print("mpemu build:", " ".join(cmd), flush=True)
            subprocess.run(cmd, cwd=src, check=True)

        run("autoreconf", "-fi")
        ldflags = (os.environ.get("LDFLAGS", "") + " -Wl,--as-needed").strip()   # only the libraries used
        run("./configure", "-q", "--prefix=/usr", "--libdir=/usr/lib", "--without-cuda", "--without-mpi",
            "--without-plplot", "--disable-static", "LDFLAGS=" + ldflags)
        jobs = os.environ.get("MPEMU_BUILD_JOBS") or str(os.cpu_count() or 1)
        run("make", "-s", "-j" + jobs, "libmpemu.la", "libmpemu-analysis.la")
        stage = os.path.join(tmp, "stage", "usr", "lib")
        os.makedirs(stage)
        for name in LIBS:   # libtool relinks libmpemu-analysis against the staged libmpemu
            run("./libtool", "--quiet", "--mode=install", "install", "-c", name + ".la", stage)
        os.makedirs(out_dir, exist_ok=True)
        for name in LIBS:
            so = os.path.join(stage, name + ".so.0")
            if not os.path.exists(so):
                sys.exit(f"mpemu: the build made no {so}")
            shutil.copyfile(os.path.realpath(so), os.path.join(out_dir, name + ".so.0"))


class BuildPy(build_py):
    def run(self):
        super().run()
        build_c(os.path.join(self.build_lib, "mpemu", "_libs"))


class SDist(sdist):
    """an sdist that carries the C sources (in _csrc/), so that a wheel can be built from it"""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        top = source_tree()
        copy_tree(top, os.path.join(base_dir, "_csrc"))
        for junk in glob.glob(os.path.join(base_dir, "_csrc", "python", "_csrc")):
            shutil.rmtree(junk)


class BdistWheel(bdist_wheel):
    """the libraries are loaded with ctypes: any Python 3, this platform"""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPy, "sdist": SDist, "bdist_wheel": BdistWheel}, distclass=BinaryDistribution)
