"""What a repair does with a JSON Schema: the value fitted to the key names and types it declares.

:mod:`.schema` loads a schema, resolves ``$ref`` and checks a value's shape (choosing among
candidates uses it); :mod:`.schema_steps` holds the two steps, :mod:`.keys` renaming keys and
:mod:`.coerce` converting the values whose declared type the model got wrong.
"""
