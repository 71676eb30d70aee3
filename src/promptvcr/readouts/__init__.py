"""What cassettes and runs hold, read back for a person: shared by the commands, the plugin and the report.

The command line, the pytest plugin and the HTML report each show what a cassette holds or what
a run found; the readings they share live here, below all three, so that none of them imports
another (the command line never needs pytest): a folder's inventory (:mod:`.inventory`), a
recorded exchange as a conversation (:mod:`.transcript`), a recorded session as the messages a
person follows (:mod:`.sessionreading`), and the drift report a verify run writes and
``promptvcr drift`` reads (:mod:`.drift`).
"""
