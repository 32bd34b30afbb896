"""A smart home and its commands, and finding the commands an utterance asks for (no LM).

``home`` reads a home (devices, rooms, each device's commands; ``home_policy`` its own safety policy);
``command_index`` ranks (device, command) pairs for an utterance from the command documents
(``command_docs``), device and room names (``name_index``, ``text_match``) and category words; ``negation``,
``plain_verbs``, ``spelled_numbers`` and ``request_reading`` read the utterance first; ``command_safety``
decides what an utterance may reach; ``command_results`` holds the typed results.

Pulling a home from SmartThings or Home Assistant and executing commands sit above, in ``tracerag.smarthome``.
"""
