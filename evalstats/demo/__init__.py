"""The offline stand-ins whose true quality is known, the notes assistant, and the demos."""
