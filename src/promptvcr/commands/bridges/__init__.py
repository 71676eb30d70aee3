"""Commands that serve cassettes to other processes and languages: `serve` over HTTP, `mcp` over stdio."""
