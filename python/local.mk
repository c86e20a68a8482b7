# python/: the Python package over the library (shipped in the tarball; tests/check_python.sh runs its tests;
# `pip install ./python` builds the library itself through setup.py)
EXTRA_DIST += python/pyproject.toml python/setup.py python/README.md python/mpemu/__init__.py python/mpemu/_lib.py \
	python/mpemu/torch.py python/mpemu/py.typed python/tests/test_mpemu.py python/tests/test_attack.py \
	python/tests/test_torch.py python/tests/test_codecs.py python/tests/test_fnuz.py python/tests/test_scaled.py python/bench_linear.py \
	examples/torch_lab.py examples/torch_lab.md
