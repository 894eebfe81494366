"""Analysis and teaching tools: well-formedness by search, explanations of atoms,
dependency graphs, minimal models of logic programs."""
