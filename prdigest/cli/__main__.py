from prdigest.cli.commands import main

main()
