"""The `kcm` subcommands, one module each; `kcm.cli.COMMANDS` lists them."""
