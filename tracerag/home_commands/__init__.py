"""A smart home and its commands, and finding the commands an utterance asks for (no LM).

- The home: ``home`` (``Home.load``) holds ``devices`` (Device, CommandSpec), read from its files by
  ``spec_file`` and ``device_files`` (what they share: ``file_fields``); ``home_policy`` is its own policy.
- Operations: ``operations`` is the closed set of operations and the commands that perform each,
  ``operation_words`` the words that ask for them, ``home_operations`` the operation asked of one home,
  ``command_choice`` each device's command for one.
- Referents: ``referents`` says which devices an utterance names (``device_kinds``: what a device is beside
  its label; ``door_words``: which door, every door); ``places`` the places the home cannot resolve;
  ``room_words`` and ``home_names`` hold the home's rooms, floors, device names and labels (``name_index``,
  ``text_match``, ``category_words``).
- Values: ``values`` (with ``numerals``) reads the value said, ``value_ranges`` whether a command takes it.
- The command index: ``home_index`` (``CommandIndex``) assembles the ``command_table`` (rows, slots, the
  ``command_docs``), the names and the scoring channels (``argument_channel``, ``subject_channel``,
  ``verb_channel``, fused in ``scoring``); ``ranking`` ranks candidates, ``bulk_plans`` plans all / except,
  ``naming_scope`` says whether a one-device parse means one device, a kind or an area.
- Reading the utterance first: ``spelling`` (a home word misspelt by one letter), ``negation``, ``plain_verbs``,
  ``request_reading``.
- Safety: ``sensitive_commands`` (what is sensitive), ``sensitive_requests`` (whether it was asked),
  ``safety_screen`` (what one utterance may reach); ``command_results`` holds the typed results.

Pulling a home from SmartThings or Home Assistant and executing commands sit above, in ``tracerag.smarthome``.
"""
