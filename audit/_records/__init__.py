"""The record line and what it is made of: wire primitives, canonical JSON, the events' data
models, the record and its registry of events, the hash chain, and reading a log's records
back.

The bottom floor of ``audit``: imports only ``audit._errors``. Everything else in ``audit``
builds on it; nothing here imports upward.
"""
