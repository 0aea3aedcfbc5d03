"""The evidence core: fingerprint, keys, envelope, the consumer's check and the ledger.

``models`` holds the wire shapes, ``fingerprint`` binds an action, ``keys`` signs and
verifies, ``envelope`` mints and parses evidence, ``consume`` runs the seven checks and
``ledger`` makes consumption single-use. Public names are re-exported by :mod:`guard`.
"""
