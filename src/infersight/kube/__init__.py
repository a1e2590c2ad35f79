"""Kubernetes as evidence: which pod runs where (`pods.py`), so that a pod's series meet its
node's GPU and host series, and what changed in the cluster before an incident
(`changes.py`: rollouts, images, scaling, restarts, readiness, nodes, pending pods).

Everything is read from kube-state-metrics' series in the same Prometheus (or the same raw
samples): no Kubernetes API access is needed or used.
"""
