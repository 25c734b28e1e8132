"""BODEGA: adversarial attacks on credibility classifiers, reproducibly.

Importing the package is cheap and side-effect free: submodules that need torch,
transformers or model files import them when their functions are called.
"""
__version__ = "0.1.0"
