"""Keeping each test honest: off the network, its patches held, its hidden misses found, its failures told."""
