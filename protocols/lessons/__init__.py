"""Guided lessons: lesson files, their model, the predicate language and the checker."""
