"""refinelab: generate code with LLMs under test-time strategies, and measure what each buys."""

__version__ = "0.1.0"
