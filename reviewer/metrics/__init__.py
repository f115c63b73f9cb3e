"""Reliability metrics: pass@k / pass^k, distributions, run comparison, trajectory rules."""
