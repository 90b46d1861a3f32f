"""What the command tests share: the fake model's answer (a test may change it) and the
cases they select."""

ANSWER = {"text": "We don't have a Glowforge or a CNC router here."}
SELECTION = ["--cases", "no-glowforge,no-cnc-router"]
