"""The conformance flow of tools/conformance, run by the Python SDK against the same sandbox."""
