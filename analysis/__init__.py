"""Analysis and teaching tools: well-formedness by search, explanations, dependency graphs, minimal models."""
