"""Labeled failures -> regression eval tasks: native task JSONL (schemas/task.schema.json) or an
Inspect AI dataset JSONL.

``select`` chooses the trials, ``tasks`` builds one record per trial, ``redact`` masks secrets,
``files`` writes atomically, and ``run.export_tasks`` ties them together. This module imports nothing,
so the importer can read ``schema`` without pulling in the store.
"""
