"""Analyses and text helpers that several passes share (below the passes: none imports a pass)."""
