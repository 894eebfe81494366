"""The General Game Playing application on top of the state machine: the match protocol
(``protocol``), scrambling (``scramble``), strategies (``strategy``: the contract and a
registry; ``mcts``), the HTTP player (``player``, ``server``), the match manager
(``manager``) and the cross-check records of the reference format (``records``).

Nothing below this package imports it; the command line (``gdl2pl.cli``) sits above.
"""
