"""Seed 000's section 4 tables: PT, GT1 and GT3 (Figures 4 and 5) and the t1 additions.

Transcribed from L. Sweeney, "k-anonymity: a model for protecting privacy"
(2002), Example 6 and Example 7. The text extraction keeps the figures'
tables intact; two choices are ours and stated here:

* the rows added at t1 are written ``9/7/65`` and ``11/4/65`` in Example 7;
  they are spelled ``9/7/1965`` and ``11/4/1965`` like the other birth dates;
* the paper has no record identifier; ``KEYED_PT`` adds one (``id``, 1 to 14)
  for the ledger's temporal releases, which never release it.

The hierarchies are the ones the figures use: race -> person, birth date ->
year -> 1960-69 -> *, gender -> human, ZIP -> 0213* / 0214* -> 021** -> *.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

COLUMNS = ("Race", "BirthDate", "Gender", "ZIP", "Problem")
QUASI_IDENTIFIERS = ("Race", "BirthDate", "Gender", "ZIP")

PT = [
    ("black", "9/20/1965", "male", "02141", "short of breath"),
    ("black", "2/14/1965", "male", "02141", "chest pain"),
    ("black", "10/23/1965", "female", "02138", "painful eye"),
    ("black", "8/24/1965", "female", "02138", "wheezing"),
    ("black", "11/7/1964", "female", "02138", "obesity"),
    ("black", "12/1/1964", "female", "02138", "chest pain"),
    ("white", "10/23/1964", "male", "02138", "short of breath"),
    ("white", "3/15/1965", "female", "02139", "hypertension"),
    ("white", "8/13/1964", "male", "02139", "obesity"),
    ("white", "5/5/1964", "male", "02139", "fever"),
    ("white", "2/13/1967", "male", "02138", "vomiting"),
    ("white", "3/21/1967", "male", "02138", "back pain"),
]

T1_ADDITIONS = [
    ("black", "9/7/1965", "male", "02139", "headache"),
    ("black", "11/4/1965", "male", "02139", "rash"),
]

GT1 = [
    ("black", "1965", "male", "02141", "short of breath"),
    ("black", "1965", "male", "02141", "chest pain"),
    ("person", "1965", "female", "0213*", "painful eye"),
    ("person", "1965", "female", "0213*", "wheezing"),
    ("black", "1964", "female", "02138", "obesity"),
    ("black", "1964", "female", "02138", "chest pain"),
    ("white", "1964", "male", "0213*", "short of breath"),
    ("person", "1965", "female", "0213*", "hypertension"),
    ("white", "1964", "male", "0213*", "obesity"),
    ("white", "1964", "male", "0213*", "fever"),
    ("white", "1967", "male", "02138", "vomiting"),
    ("white", "1967", "male", "02138", "back pain"),
]

GT3 = [
    ("black", "1965", "male", "02141", "short of breath"),
    ("black", "1965", "male", "02141", "chest pain"),
    ("black", "1965", "female", "02138", "painful eye"),
    ("black", "1965", "female", "02138", "wheezing"),
    ("black", "1964", "female", "02138", "obesity"),
    ("black", "1964", "female", "02138", "chest pain"),
    ("white", "1960-69", "male", "02138", "short of breath"),
    ("white", "1960-69", "human", "02139", "hypertension"),
    ("white", "1960-69", "human", "02139", "obesity"),
    ("white", "1960-69", "human", "02139", "fever"),
    ("white", "1960-69", "male", "02138", "vomiting"),
    ("white", "1960-69", "male", "02138", "back pain"),
]

GT1_T1_BASED = [
    *GT1,
    ("black", "1965", "male", "02139", "headache"),
    ("black", "1965", "male", "02139", "rash"),
]
"""Example 7's remedy: GT1 plus the t1 rows generalized like GT1."""

GT_T1 = [
    *GT3,
    ("black", "1965", "male", "02139", "headache"),
    ("black", "1965", "male", "02139", "rash"),
]
"""Example 7's attackable release at t1: GT3 plus the t1 rows."""

LT = {
    ("black", "1965", "male", "02141"): 2,
    ("black", "1965", "female", "02138"): 2,
    ("black", "1964", "female", "02138"): 2,
    ("white", "1964", "male", "02138"): 1,
    ("white", "1965", "female", "02139"): 1,
    ("white", "1964", "male", "02139"): 2,
    ("white", "1967", "male", "02138"): 2,
}
"""Figure 4's linked table LT as classes -> rows."""


def frame(rows: list[tuple[str, ...]]) -> pl.DataFrame:
    """A table of the figures' five columns."""
    return pl.DataFrame(rows, schema=list(COLUMNS), orient="row")


def keyed(rows: list[tuple[str, ...]], first_id: int = 1) -> pl.DataFrame:
    """The rows with a record identifier ``id`` in front (first_id, first_id + 1, ...)."""
    ids = [str(first_id + i) for i in range(len(rows))]
    return frame(rows).insert_column(0, pl.Series("id", ids))


def write_hierarchies(folder: Path) -> dict[str, str]:
    """ARX hierarchy files for the four quasi-identifiers; returns column -> path."""
    dates = sorted({row[1] for row in PT + T1_ADDITIONS})
    texts = {
        "Race": "black;person\nwhite;person\n",
        "BirthDate": "".join(f"{d};{d[-4:]};1960-69;*\n" for d in dates),
        "Gender": "male;human\nfemale;human\n",
        "ZIP": "02138;0213*;021**;*\n02139;0213*;021**;*\n02141;0214*;021**;*\n",
    }
    paths = {}
    for name, text in texts.items():
        path = folder / f"{name.lower()}.csv"
        path.write_text(text)
        paths[name] = str(path)
    return paths


def write_table(folder: Path, name: str, table: pl.DataFrame) -> Path:
    """Write ``table`` as CSV in ``folder``."""
    path = folder / name
    table.write_csv(path)
    return path
