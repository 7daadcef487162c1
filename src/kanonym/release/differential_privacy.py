"""A differentially private release: SafePub's sample, its k, its scheme (the pipeline's part).

With :class:`~kanonym.models.DifferentialPrivacy` among a job's models, the
release is SafePub's (Bild, Kuhn & Prasser 2018, PoPETs; after Li, Qardaji &
Su 2012, ASIACCS):

1. every input row is drawn independently with probability beta
   (:func:`draw_sample`), with kanonym's seeded PCG64 generator (the job's
   ``seed``; without one, a seed from the operating system, recorded) or,
   for reproducing ARX, ARX's ``java.util.Random(0xDEADBEEF)``;
2. only the drawn rows go on: they are the table the pipeline encodes,
   releases and re-checks;
3. the generalization is the scheme's node (:func:`private_search`), chosen
   without looking at the data, or SafePub's search
   (:func:`kanonym.search.safepub.safepub_search`), a walk down the lattice
   drawing each step with the exponential mechanism on the search budget,
   scored on the sample by the job's metric's SafePub score;
4. every class of fewer than k drawn rows is suppressed, however many rows
   that is: the suppression limit is every drawn row (as ARX's
   ``absMaxOutliers``). A job that sets a smaller limit is refused: honouring
   it would void the guarantee, ignoring it would release something else
   than asked for.

The report records beta, k, epsilon and delta, the split with a search
budget, and the sample's generator, seed and size (the model's ``describe()``).
The seed lets anyone holding the input redraw which rows were sampled: the
report is for the data custodian, not for publication with the release.

Only the embedded engine serves it (a population table is refused before:
no model reads it), with no other privacy model than k-anonymity (whose k,
if larger, suppresses more: d(k) only falls as k grows).

Example:
    >>> from kanonym.config import AnonymizationConfig
    >>> job = AnonymizationConfig(quasi_identifiers={"zip": "mask"}, k=1,
    ...                           models=(DifferentialPrivacy(1.0, 1e-6),))
    >>> private_model(job).k, private_model(dataclasses.replace(job, models=()))
    (75, None)
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kanonym.config import AnonymizationConfig, SuppressionLimit
from kanonym.differential_privacy import (
    ARX_DETERMINISTIC_SEED,
    JAVA_GENERATOR,
    PCG64_GENERATOR,
    JavaRandom,
    bernoulli_sample,
    bernoulli_sample_java,
    check_delta,
    record_of_randomness,
)
from kanonym.engine import EmbeddedEngine
from kanonym.errors import InputError, VerificationError
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Lattice
from kanonym.metrics import DEFAULT_METRIC
from kanonym.models import DifferentialPrivacy, PrivacyModel
from kanonym.release.steps import declare_models
from kanonym.search import SearchControl, SearchOutcome
from kanonym.search.safepub import safepub_search
from kanonym.search.safepub_scores import METRIC_SCORES
from kanonym.verify.differential_privacy import scheme_levels


@dataclass(frozen=True, eq=False)
class PrivateSample:
    """The drawn rows and the job that releases them.

    Attributes:
        engine: the drawn rows, in input order (what the pipeline releases from).
        seed: the seed the sample was drawn with (the search draws from it too).
        config: the job with the suppression limit at every drawn row and the
            model replaced by its copy that reports the sample.
        model: that copy.
        input_rows: the rows of the input, before drawing.
    """

    engine: EmbeddedEngine
    seed: int
    config: AnonymizationConfig
    model: DifferentialPrivacy
    input_rows: int

    @property
    def models(self) -> tuple[PrivacyModel, ...]:
        """The release's models as the report lists them (the copy that reports the sample)."""
        return tuple(declare_models(self.config))


def private_model(
    job: AnonymizationConfig | Sequence[PrivacyModel],
) -> DifferentialPrivacy | None:
    """The :class:`DifferentialPrivacy` among a job's (or a list's) models, or None."""
    models = job.models if isinstance(job, AnonymizationConfig) else job
    found = [m for m in models if isinstance(m, DifferentialPrivacy)]
    return found[0] if found else None


def draw_sample(engine: object, config: AnonymizationConfig) -> PrivateSample | None:
    """SafePub's sample of ``engine``'s rows, or None when the job is not differentially private.

    kanonym's draw uses its own stream, derived from the job's seed (drawn
    from the operating system without one): the 128 bits of
    ``SeedSequence([seed, 0]).generate_state(2, uint64)``, recorded as the
    sample's ``seed`` beside the ``job_seed``.

    Raises:
        InputError: (one line, naming the option) the engine is not the
            embedded one, another privacy model, local recoding or a
            technique other than AG_TS is asked for, a suppression limit is
            set, the search's metric has no SafePub score, delta is not below
            1/n, or no row is drawn.
    """
    model = private_model(config)
    if model is None:
        return None
    _refuse_unserved(engine, config, model)
    assert isinstance(engine, EmbeddedEngine)
    rows = engine.rows
    try:
        check_delta(model.delta, rows)
    except InputError as error:
        # Named plainly: delta is a field of the model, not an option of the command line.
        raise InputError(f"differential-privacy: {str(error).replace('`', '')}") from None
    if model.randomness == "arx":
        seed = ARX_DETERMINISTIC_SEED
        drawn = bernoulli_sample_java(rows, model.beta, seed)
        record = record_of_randomness(
            drawn, probability=model.beta, seed=seed, generator=JAVA_GENERATOR
        )
    else:
        seed = config.seed if config.seed is not None else secrets.randbits(63)
        # A stream of its own: the row shuffle draws from the job's seed itself
        # (transform.generalize.shuffled), and its order must not follow the sample.
        words = np.random.SeedSequence([seed, 0]).generate_state(2, np.uint64)
        stream = (int(words[0]) << 64) | int(words[1])
        drawn = bernoulli_sample(rows, model.beta, stream)
        record = record_of_randomness(drawn, probability=model.beta, seed=stream)
        record["job_seed"] = seed
        record["seed_derivation"] = (
            "SeedSequence([job_seed, 0]).generate_state(2, uint64), high first"
        )
    table = engine.table
    sample = dataclasses.replace(table, frame=table.frame.filter(drawn))
    if sample.frame.height == 0:
        raise InputError(
            f"{table.source}: no row was drawn (beta = {model.beta:.6g} of {rows:,} rows): "
            "nothing to release"
        )
    bound = model.with_sample(record)
    models = tuple(bound if m is model else m for m in config.models)
    # Every drawn row may be suppressed (ARX: absMaxOutliers = the sample's size).
    limit = SuppressionLimit(rows=sample.frame.height)
    job = dataclasses.replace(config, models=models, suppression=limit)
    return PrivateSample(EmbeddedEngine(sample), seed, job, bound, rows)


def _refuse_unserved(
    engine: object, config: AnonymizationConfig, model: DifferentialPrivacy
) -> None:
    source = getattr(engine, "source", "the input")
    if not isinstance(engine, EmbeddedEngine):
        name = getattr(engine, "name", type(engine).__name__)
        raise InputError(
            f"{source}: differential privacy is served by the embedded engine only, "
            f"not {name}: read the table into memory (`engine='embedded'`)"
        )
    others = [m.name for m in config.models if m is not model]
    if others:
        raise InputError(
            f"`models`: differential privacy (SafePub) is not combined with {others[0]}: "
            "its guarantee covers suppressing classes below k only"
        )
    if config.local_recoding or config.technique != "AG_TS":
        what = (
            f"algorithm={config.algorithm!r}"
            if config.local_recoding
            else f"technique={config.technique!r}"
        )
        raise InputError(
            f"`{what.partition('=')[0]}`: differential privacy releases a full-domain "
            f"generalization with tuple suppression (AG_TS), not {what}"
        )
    limit = config.suppression
    if limit.rows is not None or (limit.fraction is not None and limit.fraction != 1):
        name = "max_suppressed_rows" if limit.rows is not None else "max_suppression"
        raise InputError(
            f"`{name}`: differential privacy suppresses every class below its k however many "
            "rows that is; leave the suppression limit unset"
        )
    if model.data_dependent and (config.metric or DEFAULT_METRIC) not in METRIC_SCORES:
        raise InputError(
            f"`metric`: SafePub's search scores by one of {', '.join(METRIC_SCORES)}, "
            f"not {config.metric!r}"
        )


def private_search(
    private: PrivateSample,
    evaluator: NodeEvaluator,
    hierarchies: Mapping[str, Hierarchy],
    lower: tuple[int, ...],
    upper: tuple[int, ...],
    control: SearchControl,
) -> tuple[SearchOutcome, tuple[int, ...], tuple[int, ...], PrivateSample]:
    """The release's generalization: the scheme's node (no search), or SafePub's search.

    Returns the outcome, the lattice box searched (the scheme's one node, or
    the whole box) and the sample with the model reporting the search. The
    scheme's node is re-checked against the verifier's own reading of the
    scheme.
    """
    model = private.model
    generalization = model.generalization
    if generalization is None:
        return _searched(private, evaluator, lower, upper, control)
    heights = [h.height for h in hierarchies.values()]
    node = model.levels(heights, lower, upper)
    expected = tuple(
        min(max(level, lo), hi)
        for level, lo, hi in zip(scheme_levels(generalization, heights), lower, upper, strict=True)
    )
    if node != expected:
        raise VerificationError(
            f"differential privacy: the scheme {generalization!r} gives levels {expected}, "
            f"not {node}"
        )
    evaluation = evaluator.evaluate(node)
    outcome = SearchOutcome(
        solutions=(evaluation,),
        nodes_checked=evaluator.checks,
        algorithm=f"scheme {generalization}",
        proven_optimal=False,
    )
    return outcome, node, node, private


def _searched(
    private: PrivateSample,
    evaluator: NodeEvaluator,
    lower: tuple[int, ...],
    upper: tuple[int, ...],
    control: SearchControl,
) -> tuple[SearchOutcome, tuple[int, ...], tuple[int, ...], PrivateSample]:
    """SafePub's walk on the sample, its budget the model's search budget."""
    model, config = private.model, private.config
    if model.randomness == "arx":
        random: np.random.Generator | JavaRandom = JavaRandom(ARX_DETERMINISTIC_SEED)
        generator = f"{JAVA_GENERATOR}({ARX_DETERMINISTIC_SEED})"
    else:
        # A stream of its own, derived from the sample's seed (recorded with the sample).
        random = np.random.Generator(np.random.PCG64(np.random.SeedSequence([private.seed, 1])))
        generator = f"{PCG64_GENERATOR} of SeedSequence([job_seed, 1])"
    walk = safepub_search(
        evaluator,
        Lattice(upper, lower),
        k=max(model.k, config.k),
        steps=model.search_steps,
        epsilon=model.search_budget,
        score=METRIC_SCORES[config.metric or DEFAULT_METRIC],
        random=random,
        input_rows=private.input_rows,
        control=control,
    )
    evaluation = evaluator.evaluate(walk.node)
    outcome = SearchOutcome(
        solutions=(evaluation,),
        # The walk scores nodes on their classes without the evaluator's cache.
        nodes_checked=max(evaluator.checks, walk.nodes_scored),
        algorithm="safepub",
        proven_optimal=False,
    )
    assert model.sample is not None
    bound = model.with_sample(model.sample, {**walk.describe(), "generator": generator})
    models = tuple(bound if m is model else m for m in config.models)
    searched = dataclasses.replace(
        private, model=bound, config=dataclasses.replace(config, models=models)
    )
    return outcome, lower, upper, searched
