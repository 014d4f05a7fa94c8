"""Train NLTK's Punkt sentence tokenizer on local English text and save it as ``punkt_tab``.

BrowserGym's ``browsergym.webarena`` package looks up ``tokenizers/punkt_tab`` on import and
downloads it when missing; no download works here. This makes a real Punkt model with NLTK's
own ``PunktTrainer`` from English text already on the machine (Debian's license texts, the
wiki replica's articles), written where ``NLTK_DATA`` points. It is not NLTK's published
model; sitectl's tests use BrowserGym's reset client, which never tokenizes.

    NLTK_DATA=.cache/nltk_data .venv-webarena/bin/python scripts/make-punkt-tab.py
"""
import glob
import json
import os
import sys
from pathlib import Path

from nltk.tokenize.punkt import PunktTrainer, save_punkt_params

root = Path(os.environ.get("NLTK_DATA", ".cache/nltk_data"))
dest = root / "tokenizers" / "punkt_tab" / "english"
texts = []
for f in sorted(glob.glob("/usr/share/common-licenses/*")):
    if os.path.isfile(f):
        texts.append(Path(f).read_text(errors="replace"))
articles = Path(__file__).resolve().parents[1] / "stacks/replicas/kiwix/articles.json"
if articles.is_file():
    texts += ["\n".join(a.get("paragraphs", [])) for a in json.loads(articles.read_text())["articles"]]
if not texts:
    sys.exit("no English text found to train on")
trainer = PunktTrainer()
trainer.train("\n\n".join(texts), finalize=True)
dest.mkdir(parents=True, exist_ok=True)
save_punkt_params(trainer.get_params(), dir=str(dest))
print(f"punkt_tab written to {dest} ({sum(len(t) for t in texts)} characters of training text)")
