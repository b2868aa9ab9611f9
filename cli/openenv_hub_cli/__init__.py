"""The ``openenv`` command line: a tiny root (:mod:`.main`) and one module per command."""
