"""Offline stand-ins for AI assistants whose true quality is known."""
