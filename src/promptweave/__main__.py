from promptweave.cli.app import main

main()
