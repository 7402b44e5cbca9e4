"""Source -> cache -> analysis -> Report: for one repository (pipeline/single.py) or a team
(pipeline/team.py)."""

from prdigest.pipeline.single import make_report
from prdigest.pipeline.team import make_team_report

__all__ = ["make_report", "make_team_report"]
