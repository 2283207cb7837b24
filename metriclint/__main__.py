from metriclint.cli import main

main()
