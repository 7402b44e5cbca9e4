"""Renderers lay out a Report; they never compute."""
