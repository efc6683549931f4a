"""Not test modules: Streamlet programs run by ``compat_tests/test_heronpy_streamlet.py``
through ``heron run``."""

collect_ignore_glob = ["*"]
