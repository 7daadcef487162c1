"""A writable place for numba's compile cache, found before kanonym's kernels are defined.

kanonym's kernels are compiled with ``cache=True``, so numba stores their
machine code beside the sources (``__pycache__``) or in the user's cache
folder. When it can write to neither (a package installed where its user
cannot write, run without a usable HOME), numba refuses to *define* the
kernels: every import of kanonym died with ``RuntimeError: cannot cache
function``. :func:`ensure_cache_dir` asks numba's own cache locators, in
numba's order, whether they find a place for every module holding kernels;
when one does not, it points numba at a private folder under the system's
temporary directory (``NUMBA_CACHE_DIR``) and says so in one line on stderr.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_KERNEL_MODULES = (
    _PACKAGE / "encode" / "grouping.py",
    _PACKAGE / "encode" / "frequency.py",
    _PACKAGE / "differential_privacy" / "java_random.py",
    _PACKAGE / "lattice" / "kernels.py",
    _PACKAGE / "metrics" / "base.py",
    _PACKAGE / "models" / "distribution.py",
    _PACKAGE / "evaluation" / "kernels.py",
)
"""The modules that define functions with ``@njit(cache=True)``."""


def _probe() -> None:
    """Stands for a kernel: numba's locators read only its first line number."""


def _every_kernel_cacheable() -> bool:
    """Whether numba's cache locators find a writable place for every kernel module."""
    from numba.core import caching, config

    if getattr(config, "CACHE_LOCATOR_CLASSES", ""):
        return True  # whoever named the locators chose the places
    # numba's own list, in its order: NUMBA_CACHE_DIR, __pycache__, the user's cache.
    locators = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not locators:
        return True  # another numba than the one this was written for: leave it be
    for module in _KERNEL_MODULES:
        found = False
        for locator in locators:
            try:
                found = locator.from_function(_probe, str(module)) is not None
            except Exception:  # a locator's own failure means it has no place
                found = False
            if found:
                break
        if not found:
            return False
    return True


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _private_folder() -> Path | None:
    """A folder under the temporary directory only this user can write, kept between runs.

    Reusing it spares later runs the compilation. A folder of that name that
    another user owns or could write to (cached code is loaded and run) is
    never used; a fresh one is made instead.
    """
    try:
        base = Path(tempfile.gettempdir())
    except OSError:
        return None
    if hasattr(os, "getuid"):
        folder = base / f"kanonym-numba-cache-{os.getuid()}"
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            info = folder.lstat()
            if (
                stat.S_ISDIR(info.st_mode)
                and info.st_uid == os.getuid()
                and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
                and _writable(folder)
            ):
                return folder
        except OSError:
            pass
    try:
        return Path(tempfile.mkdtemp(prefix="kanonym-numba-cache-"))
    except OSError:
        return None


def ensure_cache_dir() -> Path | None:
    """Point numba at a temporary cache folder when it has no writable one; the folder or None.

    Must run before the first kernel is defined: it runs when this module is
    imported, which ``kanonym/__init__`` does first. Prints one note on stderr
    when it changes anything.
    """
    if _every_kernel_cacheable():
        return None
    folder = _private_folder()
    if folder is None:
        return None  # nowhere to write at all: numba reports it
    from numba.core import config

    # The environment too, so that numba's reload of its configuration keeps it.
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    setattr(config, "CACHE_DIR", str(folder))  # noqa: B010 (set at run time, untyped)
    print(
        "kanonym: note: no writable place for compiled code beside the package or in the "
        f"user's cache folder; caching it in {folder} (set NUMBA_CACHE_DIR to choose)",
        file=sys.stderr,
    )
    return folder


CACHE_FALLBACK = ensure_cache_dir()
"""The temporary folder numba caches in, when it had no writable place of its own; else None."""
