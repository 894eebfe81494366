"""GDL games as Gymnasium environments (one-player games)."""
