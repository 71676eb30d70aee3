"""Commands that show what cassettes hold, changing nothing: `show`, `explain`, `ls`, `stats`, `report`,
`cache`."""
