"""The Prolog runtime that translated games run on (package data)."""
