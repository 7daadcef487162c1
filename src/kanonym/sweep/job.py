"""A configuration written as the TOML job file ``kanonym anonymize --config`` runs.

The inverse of :func:`kanonym.config.job_from_options` for the configurations
a sweep picks (full-domain generalization by the optimal search): the keys are
the job-file keys of docs/job-files.md, hierarchies are written as their spec
(a builder's ``interval:5,10``, or the absolute path of the ARX file a
hierarchy was read from) and privacy models as their ``--model`` spec
(:func:`kanonym.models.spec.model_spec`).

Example:
    >>> from kanonym.config import AnonymizationConfig
    >>> config = AnonymizationConfig(quasi_identifiers={"zip": "mask"}, k=3, seed=1)
    >>> print(job_toml(config, input="t.csv", output="r.csv", report=None))
    input = "t.csv"
    output = "r.csv"
    k = 3
    algorithm = "optimal"
    metric = "loss"
    technique = "AG_TS"
    seed = 1
    <BLANKLINE>
    [qi]
    zip = "mask"
    <BLANKLINE>
"""

from __future__ import annotations

from pathlib import Path

from kanonym.config import AnonymizationConfig, HierarchyLike
from kanonym.errors import InputError, echo
from kanonym.hierarchy import Hierarchy, load_arx, parse_hierarchy
from kanonym.io.toml import toml_document
from kanonym.models.spec import model_spec


def _given(value: object) -> bool:
    """Whether an optional key differs from its default (None, false, empty); 0 is given."""
    return value is not None and value is not False and value != [] and value != {}


def hierarchy_spec(hierarchy: HierarchyLike, owner: str, duplicates: str = "error") -> str:
    """The spec a job file gives ``hierarchy`` by: a builder's own, or the ARX file it was
    read from (its absolute path).

    A builder's spec is written only if it reads back as the same builder
    (:func:`kanonym.hierarchy.parse_hierarchy`). An order builder's explicit
    order does not when it is a single value naming an order (``text``,
    ``numeric``, ``date``, ``auto``), when its first value starts with
    ``date:``, or when a value holds a comma.

    Example:
        >>> from kanonym.hierarchy import OrderBuilder
        >>> hierarchy_spec(OrderBuilder(fanouts=2, order=("low", "high")), "'level'")
        'order:2:low,high'
        >>> hierarchy_spec(OrderBuilder(fanouts=2, order=("a,b", "c")), "'level'")
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: the hierarchy of 'level' has the spec 'order:2:a,b,c', ...

    Raises:
        InputError: the hierarchy was built in Python (no file holds it), its
            file no longer holds it, or its builder's spec reads back as another.
    """
    if not isinstance(hierarchy, Hierarchy):
        spec = hierarchy.spec
        try:
            same = parse_hierarchy(spec) == hierarchy
        except InputError:
            same = False
        if not same:
            raise InputError(
                f"the hierarchy of {owner} has the spec {echo(spec)}, which a job file reads "
                "as another: give the order values without commas (and not a single order "
                "name, nor a first value starting with 'date:'), or write the built "
                "hierarchy with Hierarchy.to_arx_csv() and give that file's path"
            )
        return spec
    file = Path(hierarchy.name)
    fix = (
        f"write it to a file with Hierarchy.to_arx_csv() and give {owner} that file's path "
        "(or a builder spec such as 'interval:5,10')"
    )
    if not file.is_file():
        raise InputError(
            f"the hierarchy of {owner} was built in Python, not read from a file: {fix}"
        )
    if load_arx(file, duplicates="last" if duplicates == "last" else "error") != hierarchy:
        raise InputError(f"the hierarchy of {owner} differs from its file {echo(str(file))}: {fix}")
    return str(file.resolve())


def job_toml(
    config: AnonymizationConfig,
    *,
    input: str | Path,
    output: str | Path,
    report: str | Path | None,
    delimiter: str | None = None,
    comment: str = "",
) -> str:
    """``config`` as a TOML job file reading ``input`` and writing ``output`` and ``report``.

    ``comment`` becomes the file's first lines (``#`` added). Keys holding
    their default are left out.

    Raises:
        InputError: a hierarchy or privacy model has no text form (see
            :func:`hierarchy_spec`; ordered t-closeness with an explicit order).
    """
    duplicates = config.hierarchy_duplicates
    keys: dict[str, object] = {"input": str(input), "output": str(output)}
    if report is not None:
        keys["report"] = str(report)
    if delimiter is not None:
        keys["delimiter"] = delimiter
    keys["k"] = config.k
    limit = config.suppression
    if limit.fraction is not None:
        keys["max-suppression"] = float(limit.fraction)
    if limit.rows is not None:
        keys["max-suppressed-rows"] = limit.rows
    keys["algorithm"] = config.algorithm
    keys["metric" if config.metric is not None else "policy"] = config.metric or config.policy
    keys["technique"] = config.technique
    specs: list[str] = []
    sensitive = list(config.sensitive)
    for model in config.models:
        spec = model_spec(model)
        if spec is None:
            raise InputError(f"model {model.name} has no --model spec to write in a job file")
        specs.append(spec)
        hierarchy = getattr(model, "hierarchy", None)
        if isinstance(hierarchy, Hierarchy):
            name = model.sensitive_attributes[0]
            given = hierarchy_spec(hierarchy, f"sensitive attribute '{name}'", duplicates)
            sensitive[sensitive.index(name)] = f"{name}={given}"
    optional: dict[str, object] = {
        "identifying": list(config.identifying),
        "sensitive": sensitive,
        "insensitive": list(config.insensitive),
        "keep-unlisted": config.keep_unlisted,
        "models": specs,
        "seed": config.seed,
        "time-limit": config.time_limit,
        "hierarchy-duplicates": None if duplicates == "error" else duplicates,
        "weight": dict(config.weights),
        "min-level": dict(config.min_levels),
        "max-level": dict(config.max_levels),
    }
    keys.update({key: value for key, value in optional.items() if _given(value)})
    keys["qi"] = {
        name: hierarchy_spec(hierarchy, f"quasi-identifier {name!r}", duplicates)
        for name, hierarchy in config.hierarchies.items()
    }
    return toml_document(keys, comment=comment)
