"""A sample's frequency set over its population's tuples (delta-presence, k-map).

Models that know the population a released table was drawn from judge each
class of the sample by how many individuals of the *population* share its
generalized values: delta-presence bounds the share of them that is in the
sample (Nergiz, Atzori & Clifton 2007, "Hiding the presence of individuals
from shared databases", SIGMOD), k-map asks for at least k of them (Sweeney
2002; El Emam & Dankar 2008, "Protecting privacy using k-anonymity", JAMIA
15(5)). A class of the population that no sample row falls into is still a
class at higher levels, where it merges with sample classes: so the frequency
set of a sample is taken over the *population's* distinct tuples, each with
its sample rows (possibly 0) and its population rows
(:attr:`FrequencySet.population`), and both roll up together.

Every sample row must be a population row: each sample tuple must occur in
the population at least as often as in the sample, which is checked here
(one line naming the tuple when not).

Example:
    >>> import numpy as np, polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode, group_frame
    >>> h = Hierarchy("sex", (("F", "M"), ("*", "*")))
    >>> sample = encode(pl.DataFrame({"sex": ["F", "F"]}), {"sex": h})
    >>> population, _ = group_frame(pl.DataFrame({"sex": ["M", "F", "F", "M", "F"]}), ["sex"])
    >>> fs = encode_with_population(sample, population, {"sex": h}).frequency_set
    >>> fs.counts.tolist(), fs.population.tolist(), fs.row_tuple.tolist()
    ([0, 2], [2, 3], [1, 1])
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from kanonym.encode.encoding import EncodedTable, encode_grouped
from kanonym.encode.frequency import FrequencySet, IntArray, pack_codes
from kanonym.encode.grouping import Grouped
from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy


def _shown(names: tuple[str, ...], labels: list[str | None]) -> str:
    return ", ".join(
        f"{n}={'(missing)' if v is None else v}" for n, v in zip(names, labels, strict=True)
    )


def encode_with_population(
    sample: EncodedTable,
    population: Grouped,
    hierarchies: Mapping[str, Hierarchy],
    *,
    source: str = "the sample",
    population_source: str = "the population",
) -> EncodedTable:
    """The sample's frequency set over the population's tuples (see the module docstring).

    Args:
        sample: the released table, encoded (with its row index when its engine
            holds the rows).
        population: the population's distinct quasi-identifier tuples with their
            rows (an engine's grouping on the same columns, as strings).
        hierarchies: the quasi-identifiers' hierarchies, covering the
            population's values too.
        source, population_source: names for error messages.

    Returns:
        An encoded table whose dictionaries are the population's and whose
        frequency set holds every population tuple with its sample rows
        (``counts``, possibly 0), its population rows (``population``) and, for
        each sample row, its tuple (``row_tuple``).

    Raises:
        InputError: a sample row is not in the population, or the population
            holds fewer rows of some tuple than the sample.
    """
    names = sample.names
    encoded, _ = encode_grouped(population, hierarchies)
    fs = encoded.frequency_set
    # Each sample leaf code as the population's leaf code (-1: absent).
    remapped = np.empty_like(sample.frequency_set.codes)
    for j, (mine, theirs) in enumerate(zip(sample.attributes, encoded.attributes, strict=True)):
        code_of = {value: code for code, value in enumerate(theirs.level_labels[0])}
        lookup = np.array([code_of.get(v, -1) for v in mine.level_labels[0]], dtype=np.int64)
        absent = np.flatnonzero(lookup < 0)
        if len(absent):
            value = mine.level_labels[0][int(absent[0])]
            raise InputError(
                f"{source}: column '{names[j]}' holds {value!r}, which no row of "
                f"{population_source} holds: every sample row must be a population row"
            )
        remapped[:, j] = lookup[sample.frequency_set.codes[:, j]]
    radices = tuple(a.cardinality(0) for a in encoded.attributes)
    both = np.concatenate([fs.codes, remapped])
    keys, _ = pack_codes([both[:, j] for j in range(both.shape[1])], radices)
    if not names:
        keys = np.zeros(len(both), dtype=np.int64)
    population_keys, sample_keys = keys[: len(fs.codes)], keys[len(fs.codes) :]
    order = np.argsort(population_keys, kind="stable")
    position = np.searchsorted(population_keys[order], sample_keys)
    found = position < len(order)
    found[found] = population_keys[order[position[found]]] == sample_keys[found]
    if not found.all():
        t = int(np.flatnonzero(~found)[0])
        labels = [
            a.level_labels[0][c]
            for a, c in zip(sample.attributes, sample.frequency_set.codes[t], strict=True)
        ]
        raise InputError(
            f"{source}: a row with {_shown(names, labels)} is in no row of {population_source}: "
            "every sample row must be a population row"
        )
    match: IntArray = order[np.minimum(position, len(order) - 1)].astype(np.int64)
    counts = np.bincount(
        match, weights=sample.frequency_set.counts, minlength=len(fs.counts)
    ).astype(np.int64)
    over = np.flatnonzero(counts > fs.counts)
    if len(over):
        t = int(over[0])
        labels = [
            a.level_labels[0][c] for a, c in zip(encoded.attributes, fs.codes[t], strict=True)
        ]
        raise InputError(
            f"{source}: {int(counts[t])} rows hold {_shown(names, labels)} but "
            f"{population_source} only {int(fs.counts[t])}: the population must hold every "
            "sample row"
        )
    row_tuple = sample.frequency_set.row_tuple
    combined = FrequencySet(
        codes=fs.codes,
        counts=counts,
        row_tuple=None if row_tuple is None else match[row_tuple],
        population=fs.counts,
    )
    return EncodedTable(attributes=encoded.attributes, frequency_set=combined)
