"""Encode step: quasi-identifiers to integer codes, once, and the frequency set."""

from kanonym.encode.encoding import EncodedAttribute, EncodedTable, encode
from kanonym.encode.frequency import FrequencySet, pack_codes
from kanonym.encode.sensitive import SensitiveAttribute, encode_sensitive

__all__ = [
    "EncodedAttribute",
    "EncodedTable",
    "FrequencySet",
    "SensitiveAttribute",
    "encode",
    "encode_sensitive",
    "pack_codes",
]
