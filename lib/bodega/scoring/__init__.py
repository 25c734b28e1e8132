"""The BODEGA score: character and semantic similarity of successful adversarial examples.

Importing this package does not import torch; models load in :func:`load_semantic_model`.
"""
from bodega.scoring.core import ExampleScore, Summary, score_examples, summarise
from bodega.scoring.semantic import SemanticModel, load_semantic_model, semantic_model_name

__all__ = ["ExampleScore", "Summary", "SemanticModel", "load_semantic_model", "score_examples",
           "semantic_model_name", "summarise"]
