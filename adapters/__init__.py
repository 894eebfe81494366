"""What the game-AI adapters share: stable action ids, observations, game kind."""
