"""The schedule routes: the schedules list and one schedule."""
