"""Attack recipes: each module registers its attackers with :func:`bodega.attacks.register_attacker`.

Every module in this package is imported when an attacker is first looked up, so a
new recipe only needs a file here.
"""
