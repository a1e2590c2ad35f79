"""The PromQL subset catalog mappings are written in: parsed here, sent verbatim to a server,
or evaluated locally over raw samples when there is no server (imports, the simulator)."""

from infersight.promql.ast import Expr, metric_names
from infersight.promql.parser import PromQLSyntaxError, parse, parse_duration

__all__ = ["Expr", "PromQLSyntaxError", "metric_names", "parse", "parse_duration"]
