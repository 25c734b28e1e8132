"""The reusable attack parts: offsets tokenizer, goal, transformations, search determinism."""
from __future__ import annotations

import numpy as np
import pytest

from attack_fakes import SENTENCES, KeywordVictim
from bodega.errors import BodegaError
from bodega.attacks import Goal, get_attacker, registered_attackers
from bodega.attacks.evaluation import Evaluator
from bodega.attacks.transformations import CHARACTER_EDITS, HOMOGLYPHS, LexiconSubstitutes, WordNetSynonyms
from bodega.text import match_case, tokenize


def test_replace_keeps_everything_else_byte_for_byte():
    text = "  Hello,\tWORLD!  It's  a test…\n"
    tokenized = tokenize(text)
    assert tokenized.tokens == ["Hello", "WORLD", "It's", "a", "test"]
    assert tokenized.replace({}) == text
    assert tokenized.replace({1: "Earth"}) == "  Hello,\tEarth!  It's  a test…\n"
    assert tokenized.replace({0: "", 4: "trial"}) == "  ,\tWORLD!  It's  a trial…\n"
    window, mark = tokenized.window({1: "Earth"}, 1, 3, mark=2)
    assert window == "Earth!  It's" and window[mark:].startswith("It's")


def test_match_case():
    assert match_case("Police", "constabulary") == "Constabulary"
    assert match_case("NATO", "alliance") == "ALLIANCE"
    assert match_case("word", "term") == "term"


def test_goal_directions():
    probs = np.array([[0.8, 0.2], [0.3, 0.7]])
    assert Goal.untargeted(0).reached(probs).tolist() == [False, True]
    assert Goal.towards(0).reached(probs).tolist() == [True, False]
    assert np.allclose(Goal.untargeted(1).gain(probs), [0.8, 0.3])
    assert np.allclose(Goal.towards(0).gain(probs), [0.8, 0.3])


def test_evaluator_batches_and_never_resends():
    victim = KeywordVictim()
    evaluator = Evaluator(victim, Goal.untargeted(1))
    evaluator.probs(["a evil", "b", "a evil"])
    evaluator.probs(["b", "c"])
    assert victim.calls == 2


def test_wordnet_synonyms_follow_openattack_rules():
    wordnet = WordNetSynonyms()
    synonyms = wordnet.synonyms("destroy", "verb")
    assert "destroy" not in synonyms and "ruin" in synonyms
    assert all(" " not in s and s == s.lower() for s in synonyms)
    assert wordnet.synonyms("is", "verb") == () and wordnet.synonyms("destroy", "other") == ()
    assert wordnet(tokenize("Destroy it"), 0, "verb")[0][0].isupper()


def test_lexicon_file(tmp_path):
    path = tmp_path / "lex.tsv"
    path.write_text("evil\twicked Evil bad\n", encoding="utf-8")
    assert LexiconSubstitutes(path)(tokenize("So EVIL"), 1, "adj") == ["WICKED", "BAD"]
    path.write_text("no tab here\n", encoding="utf-8")
    with pytest.raises(BodegaError, match="lex.tsv:1"):
        LexiconSubstitutes(path)


def test_character_edits_change_one_word_only():
    rng = np.random.default_rng(0)
    for kind, edit in CHARACTER_EDITS.items():
        out = edit("propaganda", rng)
        assert out != "propaganda" or kind == "swap", kind
    assert all(len(v) == 1 and v != k for k, v in HOMOGLYPHS.items())


def test_registry_names_and_aliases():
    assert {"DeepWordBug", "Genetic", "SememePSO", "PWWS", "TextFooler"} <= set(registered_attackers())
    assert get_attacker("PSO").name == get_attacker("sememepso").name == "SememePSO"  # BODEGA's name, any case
    with pytest.raises(KeyError, match="unknown attacker"):
        get_attacker("NoSuchAttack")


@pytest.mark.parametrize("name", ["DeepWordBug", "PWWS", "Genetic", "PSO"])
def test_attackers_flip_keyword_victim_deterministically(name):
    attacker = get_attacker(name)
    victim = KeywordVictim()
    runs = []
    for _ in range(2):
        outs = []
        for i, text in enumerate(SENTENCES):
            decision = int(victim.predict([text])[0])
            result = attacker.attack(victim, text, Goal.untargeted(decision), np.random.default_rng([7, i]))
            if result.success:
                assert int(victim.predict([result.adversarial])[0]) != decision
                original, adversarial = tokenize(text), tokenize(result.adversarial)
                if len(original) == len(adversarial):  # WordNet may offer hyphenated words
                    # untouched words keep their exact form and the text between words is identical
                    changed = {i for i, (a, b) in enumerate(zip(original.tokens, adversarial.tokens)) if a != b}
                    assert changed
                    assert original.replace({i: adversarial.tokens[i] for i in changed}) == result.adversarial
            outs.append(result.adversarial)
        runs.append(outs)
    assert runs[0] == runs[1]
    assert sum(o is not None for o in runs[0]) >= 3, runs[0]
