"""`kcm serve`: a web page to step through the model, on loopback (docs/explorer.md).

Everything the command line can get wrong is checked before the server starts, each as one line
on stderr and exit code 2: a non-loopback `--host`, an unknown preset or config, a missing or
corrupt `--trace`, a trace of another model or of another config than the one named, a port in
use. Then the page's address is the first line on stdout, and the server runs until Ctrl-C or
SIGTERM, which end it with exit code 0: stopping is how a server's work ends, not an interruption.
"""

from __future__ import annotations

from pathlib import Path

import click

from kcm import config
from kcm.exploration import VARIANT_HELP, load_config
from kcm.serve.origins import from_config, from_trace
from kcm.serve.server import check_host, make_server, url_of


@click.command(name="serve")
@click.option("--preset", default=None, help=f"Preset name (default: {config.DEFAULT_PRESET}, or the trace's own "
                                             "config with --trace); see `kcm list presets`.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML config file instead of a preset.")
@click.option("--variant", default=None, metavar="NAME", help=VARIANT_HELP)
@click.option("--trace", "trace_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A counterexample (.itf.json from kcm explore or kcm check) to start from, replayed through "
                   "the model it names.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port; 0 takes a free one (the address printed says which).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="A loopback address to listen on (127.0.0.1, ::1 or localhost); no other is accepted.")
def command(preset, config_file, variant, trace_file, port, host) -> int:
    """Serve a web page that steps through the model: start from an initial state or a
    counterexample's step, see the whole state and what the last step changed, follow any enabled
    action, go back or branch, and see the properties, goals and sequence diagram at each step.

    Prints the page's address as the first line on stdout and serves until Ctrl-C or SIGTERM
    (exit code 0). Exit code 2: bad usage or input, found before the server starts."""
    check_host(host)
    if trace_file is not None:
        named = preset or config_file or variant
        cfg = load_config(preset, config_file, variant)[2] if named else None
        origins = from_trace(trace_file, cfg)
    else:
        origins = from_config(load_config(preset, config_file, variant)[2])
    server = make_server(host, port, origins)
    click.echo(url_of(server))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
