from coding_env.server.environment import CodingEnvironment
from coding_env.server.rewards import GradeResult, RewardFn, all_passed, fraction_passed
from coding_env.server.settings import SandboxSettings

__all__ = [
    "CodingEnvironment",
    "GradeResult",
    "RewardFn",
    "SandboxSettings",
    "all_passed",
    "fraction_passed",
]
