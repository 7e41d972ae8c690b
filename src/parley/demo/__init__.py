"""``parley demo``: a customer-support swarm on the embedded model, shown live in the terminal.

:mod:`~parley.demo.support` holds the swarm, :mod:`~parley.demo.policy` how its agents use their tools,
:mod:`~parley.demo.models` the models they talk to, :mod:`~parley.demo.display` the live display and
:mod:`~parley.demo.run` what ties them together. The demo uses only parley's public API.
"""
