"""Search step: one module per algorithm behind :class:`SearchAlgorithm`."""

from kanonym.search.base import SearchAlgorithm, SearchOutcome, run_search
from kanonym.search.evaluation import NodeClasses, NodeEvaluation, NodeEvaluator
from kanonym.search.minimal import MinimalSearch
from kanonym.search.policies import DEFAULT_POLICY, POLICIES, rank
from kanonym.search.samarati import SamaratiSearch

ALGORITHMS: dict[str, SearchAlgorithm] = {
    "minimal": MinimalSearch(),
    "samarati": SamaratiSearch(),
}
DEFAULT_ALGORITHM = "minimal"

__all__ = [
    "ALGORITHMS",
    "DEFAULT_ALGORITHM",
    "DEFAULT_POLICY",
    "POLICIES",
    "MinimalSearch",
    "NodeClasses",
    "NodeEvaluation",
    "NodeEvaluator",
    "SamaratiSearch",
    "SearchAlgorithm",
    "SearchOutcome",
    "rank",
    "run_search",
]
