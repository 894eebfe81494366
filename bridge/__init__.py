"""The janus bridge: SWI-Prolog underneath, the GGP state machine on top."""
