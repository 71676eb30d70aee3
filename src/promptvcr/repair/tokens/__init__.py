"""Step 3 of a repair: a candidate's text turned into a value.

:mod:`.syntax` (the step) runs the token pass (:mod:`.token_pass`: what json_repair gets
wrong, fixed token by token, with strings read by :mod:`.string_tokens` and decoded by
:mod:`.strings`, numbers and call wrappers by :mod:`.bare_tokens`, strings hidden behind
:mod:`.placeholders`), unless :mod:`.bail` tells at C speed that the pass would change nothing.
"""
