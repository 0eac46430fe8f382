"""`kcm sweep`: a grid of small scopes, each explored completely, one run per process or Spark task.

Bugs live in small scopes, but in many of them: one large configuration reaches some and not
others. A sweep explores many small ones instead, each to the end, and reports per property which
scopes break it (docs/sweep.md). One concept per module:

- `grid`: grid files (`kcm/grids/*.toml`) and their expansion into named scopes;
- `run`: the exploration of one scope, within its budget;
- `farm`: scopes over local processes or Spark tasks;
- `results`: the results folder, one record per finished scope, and resume;
- `report`: `sweep.json`, `junit.xml` and the terminal summary.
"""
