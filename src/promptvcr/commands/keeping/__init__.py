"""Commands that keep cassettes honest: `prune`, `scan` for credentials, `learn` rules, `drift`."""
