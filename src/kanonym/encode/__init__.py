"""Encode step: distinct raw tuples to integer codes, and the frequency set."""

from kanonym.encode.dictionary import DictionaryCodes, dictionary_codes, distinct_strings
from kanonym.encode.encoding import EncodedAttribute, EncodedTable, encode, encode_grouped
from kanonym.encode.frequency import FrequencySet, pack_codes
from kanonym.encode.grouping import Grouped, group_frame
from kanonym.encode.population import encode_with_population
from kanonym.encode.sensitive import (
    GroupedSensitiveAttribute,
    SensitiveAttribute,
    encode_grouped_sensitive,
    encode_sensitive,
    sensitive_labels,
)

__all__ = [
    "DictionaryCodes",
    "EncodedAttribute",
    "EncodedTable",
    "FrequencySet",
    "Grouped",
    "GroupedSensitiveAttribute",
    "SensitiveAttribute",
    "dictionary_codes",
    "distinct_strings",
    "encode",
    "encode_grouped",
    "encode_grouped_sensitive",
    "encode_sensitive",
    "encode_with_population",
    "group_frame",
    "pack_codes",
    "sensitive_labels",
]
