"""An offline masked language model: a masked-LM head fitted onto the packaged MiniLM encoder.

No masked-LM weights can be installed here (see RESOURCES.md), yet BERT-ATTACK and BAE
need one. :func:`build_mlm` fits BERT's prediction head onto MiniLM with the task
training text and writes a folder that ``AutoModelForMaskedLM.from_pretrained`` loads;
:mod:`bodega.mlm.recovery` measures how often it recovers a masked whole word.
Torch loads only inside the functions that need it.
"""
from bodega.mlm.build import MLMConfig, build_mlm
from bodega.mlm.corpus import task_sentences

__all__ = ["MLMConfig", "build_mlm", "task_sentences"]
