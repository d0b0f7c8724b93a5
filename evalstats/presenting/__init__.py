"""Presenting: the text and JSON report, the HTML page, figures and human review."""
