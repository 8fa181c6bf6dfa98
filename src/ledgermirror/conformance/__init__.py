"""Conformance: the reference mirror node's JSON spec tests, loaded and judged against our API."""
