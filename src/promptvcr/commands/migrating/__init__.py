"""Commands that bring another tool's cassettes and suites onto promptvcr: `import-vcr`, `migrate`."""
