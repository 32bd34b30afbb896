"""A smart home and its commands, and finding the commands an utterance asks for (no LM).

``home`` reads a home (devices, rooms, each device's commands; ``home_policy`` its own safety policy);
``operations`` is the closed set of operations and the capability commands that perform each, and
``operation_words`` the words that ask for them; ``command_choice`` picks each device's command for a known
operation; ``command_index`` ranks (device, command) pairs for an utterance from the command documents
(``command_docs``), device and room names (``name_index``, ``text_match``) and category words; ``negation``,
``plain_verbs`` and ``request_reading`` read the utterance first, ``values`` (with ``numerals``) the value it
sets and ``value_ranges`` whether a command can take it; ``command_safety`` decides what an utterance may
reach; ``command_results`` holds the typed results.

Pulling a home from SmartThings or Home Assistant and executing commands sit above, in ``tracerag.smarthome``.
"""
