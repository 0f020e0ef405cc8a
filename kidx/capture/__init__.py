"""Reading facts about the machine kidx runs on (``kidx env capture``)."""
