"""The MakerLAB assistant: a grounded chat assistant for a university makerspace."""
