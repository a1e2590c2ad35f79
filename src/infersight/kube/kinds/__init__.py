"""The kinds of cluster change, one module each: `QUERIES` (name → PromQL over
kube-state-metrics' series), `read(rows, window) -> list[ClusterChange]` and `ORDER` (where the
report lists it among changes at the same moment). `changes.kinds()` finds them."""
