"""GDL games as PettingZoo environments."""
