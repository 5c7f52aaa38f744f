"""The approval policy and its file: rules, conditions, the ladder over time, on-call rotations."""
