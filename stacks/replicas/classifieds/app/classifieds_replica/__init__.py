"""sitectl's contract replica of VisualWebArena's Classifieds site (OSClass 8 with the sigma
theme, as ``jykoh/classifieds`` serves it): a test double, not OSClass. The contract it keeps:
docs/contracts/classifieds.md (sources: research/family-formats.md §4)."""
