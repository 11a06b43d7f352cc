"""Strategies (coming) and the helpers they use to read model output."""

from refinelab.strategies._parsing import (
    Critique,
    Parsed,
    RedraftCritique,
    Suggestion,
    extract_code,
    extract_confidence,
    parse_critique_json,
    parse_critique_xml,
    strip_reasoning,
)

__all__ = [
    "Critique",
    "Parsed",
    "RedraftCritique",
    "Suggestion",
    "extract_code",
    "extract_confidence",
    "parse_critique_json",
    "parse_critique_xml",
    "strip_reasoning",
]
