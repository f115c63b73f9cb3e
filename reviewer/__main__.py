from reviewer.cli import main

main()
