"""The shared policy layer: risk rules, confirmation, out-of-band approvals and the audit log.

It knows tools only by their canonical `namespace.method` names and declared metadata.
"""
