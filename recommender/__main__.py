from recommender.console import main

main()
