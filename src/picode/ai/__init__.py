"""picode.ai: messages, the streaming contract and the providers behind it.

Import the pieces from their modules (``picode.ai.types``, ``picode.ai.stream``, ...);
this package itself imports nothing heavy.
"""
