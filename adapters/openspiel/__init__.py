"""GDL games as OpenSpiel games."""
