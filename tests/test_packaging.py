"""The package declares what it needs, ships what it reads, and carries one version."""
from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import pytest
import yaml

import bodega
from bodega.published import BODEGA_YAML
from bodega.stages import NAMES, stage_notebook

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SHARED_PUBLISHED = ROOT.parent / "shared" / "data" / "published" / "bodega.yaml"


def _pins(path: Path) -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[canonicalize_name(name.split("[")[0])] = version.strip()
    return pins


def _declared() -> list[str]:
    """Every requirement text of pyproject.toml, an extra's reference to the package's own extras left out."""
    project = PYPROJECT["project"]
    every = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    return [text for text in every if not text.startswith(project["name"] + "[")]


def test_every_declared_requirement_admits_the_locked_version():
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    lock = _pins(ROOT / "requirements-lock.txt")
    problems = []
    for text in _declared():
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        if name not in lock:
            problems.append(f"{text}: not in requirements-lock.txt")
        elif not requirement.specifier.contains(Version(lock[name]), prereleases=True):
            problems.append(f"{text}: the lock pins {lock[name]}")
    assert not problems, "\n".join(problems)


def test_every_top_level_pin_is_declared_and_the_extras_are_there():
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    declared = {canonicalize_name(Requirement(text).name) for text in _declared()}
    missing = sorted(set(_pins(ROOT / "requirements.txt")) - declared)
    assert not missing, f"pinned in requirements.txt but not declared in pyproject.toml: {missing}"
    assert set(PYPROJECT["project"]["optional-dependencies"]) == {"jupyter", "plot", "cpu", "paper", "openattack",
                                                                  "book", "dev"}


def test_the_pinned_files_are_written_from_pyproject_and_the_lock():
    """requirements.txt and environment.yml are what scripts/pin_requirements.py makes of pyproject.toml and the
    lock; the lock holds every package the declared requirements pull in (checked where they are installed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("pin_requirements", ROOT / "scripts" / "pin_requirements.py")
    pins = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pins)
    assert pins.main(["--check"]) == 0
    requirements = pins.declared()
    lock = pins.read_lock(ROOT / "requirements-lock.txt")
    top, conda = pins.render_top(requirements, lock)
    assert top.count("==") == conda.count("==") == len(requirements)
    try:
        reached = pins.closure(requirements)
    except SystemExit:
        pytest.skip("this environment lacks a declared requirement (not every extra is installed)")
    assert sorted(set(reached) - set(lock)) == [], "scripts/pin_requirements.py --lock"


def test_jupyter_and_plotting_are_extras_and_the_api_runs_without_them(tmp_path):
    """The core requirements name no notebook or plotting package, and an attack through the Python API runs
    with papermill, nbformat, nbclient, ipykernel, IPython and matplotlib unimportable."""
    import subprocess
    import sys

    from packaging.requirements import Requirement

    core = {Requirement(text).name for text in PYPROJECT["project"]["dependencies"]}
    assert not core & {"papermill", "nbformat", "nbclient", "ipykernel", "matplotlib", "jupyter-book"}
    script = (
        "import sys\n"
        "for name in ('papermill', 'nbformat', 'nbclient', 'ipykernel', 'IPython', 'matplotlib'):\n"
        "    sys.modules[name] = None\n"
        "import numpy as np\n"
        "import bodega\n"
        "def victim(texts):\n"
        "    p = np.array([0.9 if 'evil' in t else 0.1 for t in texts])\n"
        "    return np.stack([1 - p, p], axis=1)\n"
        "report = bodega.attack(victim, ['An evil plot.', 'The council met.'], [1, 0], task='PR2',\n"
        "                       attacker='DeepWordBug')\n"
        "print(len(report.records))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "lib"), "HF_HUB_OFFLINE": "1"}, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "2", done.stderr[-2000:]


def test_one_version_everywhere():
    version = PYPROJECT["project"]["version"]
    assert bodega.__version__ == version
    assert yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))["version"] == version
    for package in ("bodega", "bodega/atomeval"):  # no second copy of the version
        source = (ROOT / "lib" / package / "__init__.py").read_text(encoding="utf-8")
        assert not re.search(r"^__version__ = ['\"]", source, re.M), package
    from bodega import atomeval

    assert atomeval.__version__ == version


def test_licence_and_citation():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "GNU GENERAL PUBLIC LICENSE" in licence and "Version 3, 29 June 2007" in licence
    assert PYPROJECT["project"]["license"]["text"] == "GPL-3.0-or-later"
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["preferred-citation"]["doi"] == yaml.safe_load(BODEGA_YAML.read_text())["paper"]["doi"]
    assert any("2604.07967" in str(ref) for ref in citation["references"])  # AtomEval


def test_the_stage_notebooks_ship_as_package_data():
    for name in NAMES:
        assert stage_notebook(name).read_bytes() == (ROOT / "notebooks" / name).read_bytes()
    assert "stages/*.ipynb" in PYPROJECT["tool"]["setuptools"]["package-data"]["bodega"]
    with pytest.raises(FileNotFoundError, match="set notebooks: in the grid file"):
        stage_notebook("study.ipynb")


def test_the_grid_finds_the_installed_notebooks_outside_a_checkout(tmp_path, monkeypatch):
    from bodega.experiments.spec import Notebooks

    monkeypatch.chdir(tmp_path)
    notebooks = Notebooks()
    assert Path(notebooks.attack) == stage_notebook("attack.ipynb")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "attack.ipynb").write_text("{}")
    assert Notebooks().attack == "notebooks/attack.ipynb"  # a checkout's own copy wins


@pytest.mark.skipif(not SHARED_PUBLISHED.exists(), reason="../shared/data/published/bodega.yaml is not beside "
                    "the project (the shipped copy is then the only one)")
def test_the_shipped_published_values_are_the_shared_file():
    assert BODEGA_YAML.read_bytes() == SHARED_PUBLISHED.read_bytes()


def test_the_readme_is_short_and_leads_with_the_three_commands_of_a_paper_package():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    first = readme.split("\n## ", 1)[1]
    assert first.startswith("The three commands of a paper package")
    block = first.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].split()[0] for line in block.strip().splitlines()] == ["papermill", "jupyter-book",
                                                                                      "pytest"]


def test_the_book_package_is_a_project_of_its_own_outside_the_wheel():
    """``bodega_book`` is found under book/lib by its own pyproject, never under lib/ (the wheel's packages)."""
    book = tomllib.loads((ROOT / "book" / "pyproject.toml").read_text(encoding="utf-8"))
    assert book["tool"]["setuptools"]["packages"]["find"]["where"] == ["lib"]
    assert (ROOT / "book" / "lib" / "bodega_book" / "__init__.py").is_file()
    assert not (ROOT / "lib" / "bodega_book").exists()
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["where"] == ["lib"]
