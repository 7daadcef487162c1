"""Search step: one module per algorithm behind :class:`SearchAlgorithm`."""

from kanonym.search.base import Progress, SearchAlgorithm, SearchControl, SearchOutcome, run_search
from kanonym.search.datafly import DataflySearch
from kanonym.search.greedy import GreedySearch
from kanonym.search.incognito import IncognitoSearch
from kanonym.search.minimal import MinimalSearch
from kanonym.search.muargus import MuArgusSearch
from kanonym.search.optimal import OptimalSearch
from kanonym.search.policies import DEFAULT_POLICY, POLICIES, rank
from kanonym.search.samarati import SamaratiSearch

ALGORITHMS: dict[str, SearchAlgorithm] = {
    "optimal": OptimalSearch(),
    "incognito": IncognitoSearch(),
    "minimal": MinimalSearch(),
    "samarati": SamaratiSearch(),
    "datafly": DataflySearch(),
    "greedy": GreedySearch(),
    "mu-argus": MuArgusSearch(),
}
DEFAULT_ALGORITHM = "optimal"

__all__ = [
    "ALGORITHMS",
    "DEFAULT_ALGORITHM",
    "DEFAULT_POLICY",
    "POLICIES",
    "DataflySearch",
    "GreedySearch",
    "IncognitoSearch",
    "MinimalSearch",
    "MuArgusSearch",
    "OptimalSearch",
    "Progress",
    "SamaratiSearch",
    "SearchAlgorithm",
    "SearchControl",
    "SearchOutcome",
    "rank",
    "run_search",
]
