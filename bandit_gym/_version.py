"""The package's version, one place: ``bandit_gym.__version__`` re-exports it, the build reads it
(``pyproject.toml``), and every cell's provenance records it. Kept in a module of its own, below everything, so that
the provenance reads it without importing the package's top (which registers the envs)."""

__version__ = "0.3.0"
