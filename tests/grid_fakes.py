"""Pieces of the fake stage notebooks that grid tests write: the victim stage's parameter cell, as the real
`notebooks/train_victim.ipynb` declares its parameters."""

VICTIM_PARAMS = """task = "PR2"
victim = "BiLSTM"
data_root = ""
results_root = ""
profile = "smoke"
max_train = 0
epochs = None
seed = 0"""
