"""Benchmark suites: what belongs to one benchmark family (its evaluators, postprocessors, loaders), one module or
folder per family. They are listed in, and reached only through, ``promptweave.compat.suites``: nothing in the
engine imports a suite."""
