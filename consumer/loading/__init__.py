"""Stage 1, loading: a plan's bytes (binary, JSON, textproto, old spec versions) into a checked `LoadedPlan`, with
its producer's quirks and its extension declarations."""
