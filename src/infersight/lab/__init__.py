"""Lab: simulated fleets (sim/) and real processes (live/)."""
