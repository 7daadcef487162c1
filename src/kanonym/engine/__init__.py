"""Engines: where the rows live (:mod:`kanonym.engine.base` states the contract)."""

from kanonym.engine.base import (
    Engine,
    Expected,
    Generalization,
    Released,
    ServerEngine,
    ServerRelease,
    TupleRecoding,
)
from kanonym.engine.embedded import EmbeddedEngine

__all__ = [
    "EmbeddedEngine",
    "Engine",
    "Expected",
    "Generalization",
    "Released",
    "ServerEngine",
    "ServerRelease",
    "TupleRecoding",
]
