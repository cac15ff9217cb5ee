"""One module per CLI subcommand; each has add_parser(subparsers) and run(args) -> exit code.

Command modules import only argparse at module level so that `ci-eval --help` stays fast;
heavy imports happen inside run().
"""
