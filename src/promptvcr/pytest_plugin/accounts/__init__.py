"""The run's accounts: what each test did with its cassettes, summed up, and what the run decides from it."""
