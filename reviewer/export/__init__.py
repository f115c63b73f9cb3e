"""Labeled failures -> regression eval tasks: native task JSONL (schemas/task.schema.json) or an
Inspect AI dataset JSONL.

``select`` chooses the trials, ``tasks`` builds one record per trial, ``redact`` masks secrets
(what it looks for: ``detectors``), ``files`` writes atomically, and ``run.export_tasks`` ties them
together. The task format's check (``reviewer.ingest.task_schema``) lives below, where the importer
reads task lists back.
"""
