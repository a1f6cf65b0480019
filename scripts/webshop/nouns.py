"""Writes the noun table WebShop's type score reads (env.options.files.nouns): {asin: [nouns]}, the lower-cased
NOUN, PROPN and PNOUN tokens of each product title by spaCy's en_core_web_sm, as goal.py's get_type_reward takes them.
Run where spaCy and its model are installed (pip install spacy; python -m spacy download en_core_web_sm):

    python scripts/webshop/nouns.py items_shuffle_1000.json nouns.json

The table is exact for the spaCy and model versions that wrote it; they are printed, so record them beside it."""

import json
import sys

import spacy


def main(products_path: str, out_path: str) -> None:
    nlp = spacy.load('en_core_web_sm')
    with open(products_path) as f:
        products = json.load(f)
    table = {}
    for p in products:
        asin = p.get('asin')
        if not isinstance(asin, str) or asin == 'nan' or len(asin) > 10 or asin in table:
            continue
        table[asin] = [t.text.lower() for t in nlp(p['name']) if t.pos_ in ('PNOUN', 'NOUN', 'PROPN')]
    with open(out_path, 'w') as f:
        json.dump(table, f)
    print(f'{len(table)} titles; spacy {spacy.__version__}, en_core_web_sm {nlp.meta.get("version")}')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
