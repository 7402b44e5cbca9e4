from prdigest.cli import main

main()
