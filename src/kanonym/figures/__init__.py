"""Figures as Vega-Lite specifications: one definition for the report, notebooks
and the web workbench (:mod:`kanonym.figures.render` shows them)."""

from kanonym.figures.render import SCHEMA, Spec, embed, script_tags, to_svg, warm_up

__all__ = ["SCHEMA", "Spec", "embed", "script_tags", "to_svg", "warm_up"]
