"""kcm.checker: the checkers (explorer, proofs, lock-step fuzzing), traces, reports and diagrams."""
