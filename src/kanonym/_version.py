"""The package version, read by the build and by ``kanonym --version``."""

__version__ = "0.1.0"
