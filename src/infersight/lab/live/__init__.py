"""Real processes: Prometheus-compatible servers and exporters on loopback ports."""
