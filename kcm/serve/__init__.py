"""`kcm serve`: a web page a reviewer steps through the model with, on loopback only.

Like the Toolbox's trace explorer for TLC and stateright's `checker.serve(...)`, it starts from an
initial state of a config (the cold start and, in presets with overlapping runs, the settled
cluster of each) or from a step of a counterexample (an ITF file, replayed through the model it
names), shows the whole state with what the last step changed, the enabled actions as links, the
properties judged at that state, the goals the path has met and the sequence diagram so far.

The server keeps no session: a page is addressed by its start and the path of choices that leads
to it (`paths`), so back, branch and bookmarks are plain links. The parts:

- `paths`: the URL of a page <-> (start, choices), and the walk that rebuilds its states;
- `origins`: what pages start from (the model, its initial states with their labels, the trace);
- `fields`: a decoded state as its leaves, grouped as a reviewer of the controller reads it;
- `verdicts`: the properties and goals judged on a walk;
- `pages`: the HTML, with the renderers of report.html (`kcm.checker.html_report`);
- `server`: the HTTP shell (`http.server`), loopback only.
"""
