"""Fingerprints the ledger records: of tables, of released rows, of hierarchies, of record keys.

A fingerprint lets the ledger tell, without keeping a copy, whether a table
is one it has seen (:func:`table_fingerprint`), which rows a release
published (:func:`row_fingerprints`), and whether a hierarchy was rebuilt or
edited (:func:`hierarchy_fingerprint`). Record keys (an SSN, a patient number)
are never kept in clear: the ledger keeps their keyed BLAKE2b hash
(:func:`key_hash`, RFC 7693) under a secret of its own.

Example:
    >>> frame = pl.DataFrame({"zip": ["02138", "02139"]})
    >>> table_fingerprint(frame) == table_fingerprint(frame.clone())
    True
    >>> len(key_hash(b"secret", "123-45-6789")), key_hash(b"s", None) != key_hash(b"s", "")
    (32, True)
"""

from __future__ import annotations

import hashlib

import polars as pl

from kanonym.hierarchy import Hierarchy

KEY_HASH = "key_hash"
"""Column of a record key's keyed hash (32 bytes), as the ledger stores it."""
KEY_TEXT = "__kanonym_key"
"""Column of a record key as text, beside its hash in :func:`hash_keys`."""


def table_fingerprint(frame: pl.DataFrame) -> str:
    """SHA-256 (hex) of a table's content: its CSV with Polars' defaults.

    The same table has the same fingerprint whether it was read from CSV,
    gzip, Parquet or given as a DataFrame, as long as its values are the same.

    Example:
        >>> table_fingerprint(pl.DataFrame({"a": ["1"]})) == hashlib.sha256(b"a\\n1\\n").hexdigest()
        True
    """
    return hashlib.sha256(frame.write_csv().encode("utf-8")).hexdigest()


def row_fingerprints(frame: pl.DataFrame) -> pl.DataFrame:
    """SHA-256 of each distinct row of ``frame`` and how many rows have it.

    A row is hashed as its values' text joined by the unit separator (0x1F),
    a missing value written as 0x00, so that it can be recomputed from any copy
    of the release: columns ``row_sha256`` (32 bytes) and ``occurrences``.

    Example:
        >>> rows = row_fingerprints(pl.DataFrame({"a": ["x", "x", None]}))
        >>> rows.get_column("occurrences").to_list()
        [2, 1]
        >>> rows.get_column("row_sha256")[0] == hashlib.sha256(b"x").digest()
        True
    """
    distinct = frame.cast(pl.String).group_by(frame.columns, maintain_order=True).len()
    digests = [
        hashlib.sha256(
            "\x1f".join("\x00" if value is None else value for value in row).encode("utf-8")
        ).digest()
        for row in distinct.drop("len").iter_rows()
    ]
    return pl.DataFrame(
        {
            "row_sha256": pl.Series(digests, dtype=pl.Binary),
            "occurrences": distinct.get_column("len").cast(pl.Int64),
        }
    )


def hierarchy_fingerprint(hierarchy: Hierarchy) -> str:
    """SHA-256 (hex) of a resolved hierarchy in ARX format.

    Example:
        >>> h = Hierarchy("sex", (("F", "M"), ("*", "*")))
        >>> hierarchy_fingerprint(h) == hashlib.sha256(h.to_arx_csv().encode()).hexdigest()
        True
    """
    return hashlib.sha256(hierarchy.to_arx_csv().encode("utf-8")).hexdigest()


def key_hash(secret: bytes, value: str | None) -> bytes:
    """Keyed BLAKE2b (RFC 7693) of a record key; a tag byte keeps the missing key apart."""
    data = b"\x00" if value is None else b"\x01" + value.encode("utf-8")
    return hashlib.blake2b(data, key=secret, digest_size=32).digest()


def hash_keys(secret: bytes, keys: pl.Series) -> pl.DataFrame:
    """Each record key as text (:data:`KEY_TEXT`) beside its :func:`key_hash` (:data:`KEY_HASH`).

    Example:
        >>> hashed = hash_keys(b"secret", pl.Series([7, None]))
        >>> hashed.columns, hashed.get_column(KEY_TEXT).to_list()
        (['__kanonym_key', 'key_hash'], ['7', None])
        >>> hashed.get_column(KEY_HASH)[0] == key_hash(b"secret", "7")
        True
    """
    text = keys.cast(pl.String)
    # A cryptographic hash that stays the same in every version is needed,
    # which Polars' hash is not: one C call per record, once per release.
    hashes = [key_hash(secret, value) for value in text.to_list()]
    return pl.DataFrame({KEY_TEXT: text, KEY_HASH: pl.Series(hashes, dtype=pl.Binary)})
