# python/: the Python package over the library (shipped in the tarball; tests/check_python.sh runs its tests)
EXTRA_DIST += python/pyproject.toml python/setup.py python/README.md python/mpemu/__init__.py python/mpemu/_lib.py \
	python/mpemu/py.typed python/tests/test_mpemu.py
