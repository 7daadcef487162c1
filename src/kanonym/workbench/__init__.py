"""``kanonym serve``: a local web workbench from a raw table to a filed release.

A privacy officer loads a table, gives every column a role (suggested by the
quasi-identifier scan), chooses hierarchies, models and limits, picks k from
a sweep of utility against risk, runs the release with live progress, reads
its figures and files it: the release, its reports and the TOML job that
``kanonym anonymize --config`` runs to reproduce it byte for byte.

It needs the ``web`` extra (``pip install 'kanonym[web]'``). The server
listens on 127.0.0.1 and admits only the holder of the token in the URL it
prints (:mod:`kanonym.workbench.security`).
"""

from kanonym.workbench.app import create_app

__all__ = ["create_app"]
