"""Encode step: quasi-identifiers to integer codes, once, and the frequency set."""

from kanonym.encode.encoding import EncodedAttribute, EncodedTable, encode
from kanonym.encode.frequency import FrequencySet, pack_codes

__all__ = ["EncodedAttribute", "EncodedTable", "FrequencySet", "encode", "pack_codes"]
