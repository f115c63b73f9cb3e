"""Failure clustering: error signatures, embeddings of failure text, clusters with names and ranks.

``signature`` is pure and light (stdlib only); ``embed``, ``cluster`` and ``naming`` import
scikit-learn and numpy inside the functions that need them.
"""
