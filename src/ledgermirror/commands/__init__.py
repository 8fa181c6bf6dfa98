"""One module per command of ``ledgermirror`` that needs more than its arguments, each with
``run(args, settings, log_format) -> exit status``. ``cli.py`` declares the command line and imports a command's
module only when that command runs (``cli.COMMANDS``), so ``ledgermirror --help`` loads no database driver,
server, SDK or generator."""
