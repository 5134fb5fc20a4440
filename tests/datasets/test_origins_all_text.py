"""`bridgeembed-data recipe general-m2m-all-text`: the all-text folders (datasets/parallel_corpora.py, datasets/origins.py
ALL_TEXT) against a local HTTP server laid out as OWNER/REPO/COMMIT/PATH, serving tiny files in the real formats: XQuAD's
JSON, TICO-19's TMX, Europarl v7's raw text, OpenNMT's tokenized WMT15 sample, BConTrasT's dialogues, MLQE-PE's tar.gz,
Django's wheel; and repository archives as OWNER/REPO/archive/COMMIT.tar.gz (tldr-pages' Markdown pages).
Also the all-text cleaning rule: rows matching a dev line, or a pair of an earlier folder, are dropped. No internet."""

import gzip
import io
import json
import tarfile
import zipfile

import pytest

from bridgeembed.cli.data import main as data_main
from bridgeembed.datasets import checksums, documentation, origins, parallel_corpora, software_l10n, source_checksums
from bridgeembed.datasets.archives import archive_key, members_digest
from bridgeembed.datasets.origin_files import Cleaning, match_key
from bridgeembed.datasets.parallel_corpora import BCONTRAST, EUROPARL_V7, MLQE_PE, OPENNMT, TICO19, XQUAD
from bridgeembed.errors import DataError
from tests.datasets.test_datasets import Server
from tests.datasets.test_origins import ROOT, SHIPPED, WORDS, build_mirror, count, lines, text

SHIPPED_MEMBERS = dict(source_checksums.MEMBERS)  # before the fixture empties it


def read(path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def xquad(lang):
    question = {"en": "Who led the team?", "de": "Wer führte das Team an?"}
    context = {"en": "The Panthers won. Short led the team in sacks.", "de": "Die Panthers gewannen. Short führte."}
    uneven = {"en": "One sentence here. Another one.", "de": "Nur ein Satz hier, und noch einer."}
    paragraphs = [{"context": context[lang], "qas": [{"id": "q1", "question": question[lang]}]},
                  {"context": uneven[lang], "qas": [{"id": "q2", "question": f"{WORDS[lang]} q2?"}]}]
    return json.dumps({"data": [{"title": "t", "paragraphs": paragraphs}]}).encode("utf-8")


def tmx():
    units = "".join(f'<tu tuid="CMU_1:{i}"><prop type="note">x</prop><tuv xml:lang="en"><seg>{WORDS["en"]} tico {i}'
                    f'</seg></tuv><tuv xml:lang="fr"><seg>{WORDS["fr"]} tico {i} &amp; co</seg></tuv></tu>\n'
                    for i in range(4))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<tmx version="1.4"><header srclang="en"></header><body>\n'
            + units + "</body></tmx>\n").encode("utf-8")


def chat():
    turns = [{"utteranceID": 0, "speaker": "agent", "source": "How can I help?", "target": "Wie kann ich helfen?"},
             {"utteranceID": 1, "speaker": "customer", "source": "Ich brauche ein Auto.", "target": "I need a car."}]
    return json.dumps({"dlg-1": turns}).encode("utf-8")


def mlqe(split):
    folder = "test20" if split == "test" else split
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for suffix, rows in (("src", [f"It &apos;s {split} line {i} ." for i in range(2)]),
                             ("pe", [f"Es ist {split} Zeile {i} ." for i in range(2)]), ("mt", ["x", "y"])):
            data = text(rows)
            info = tarfile.TarInfo(f"en-de-{folder}/{folder}.{suffix}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def django_wheel():
    """A wheel with one app's PO files: a message in all three languages, a plural one, an all-identical one, a
    one-letter abbreviation, a fuzzy one and one missing in Czech."""
    strings = {"de": ["Benutzer", "%(count)d Objekt", "OK", "M", "Alt", "Nur hier"],
               "fr": ["Utilisateur", "%(count)d objet", "OK", "L", "Vieux", "Seulement ici"],
               "cs": ["Uživatel", "%(count)d objekt", "OK", "P", "Starý", ""]}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for lang, (user, objects, ok, monday, old, only) in strings.items():
            po = (f'msgid ""\nmsgstr ""\n"Language: {lang}\\n"\n\nmsgid "User"\nmsgstr "{user}"\n\n'
                  f'msgid "%(count)d object"\nmsgid_plural "%(count)d objects"\nmsgstr[0] "{objects}"\n'
                  f'msgstr[1] "x"\n\nmsgid "OK"\nmsgstr "{ok}"\n\nmsgctxt "abbrev. day Monday"\nmsgid "M"\n'
                  f'msgstr "{monday}"\n\n#, fuzzy\nmsgid "Old"\nmsgstr "{old}"\n\nmsgid "Only here"\n'
                  f'msgstr "{only}"\n')
            wheel.writestr(f"django/contrib/auth/locale/{lang}/LC_MESSAGES/django.po", po)
        wheel.writestr("django/contrib/auth/locale/es/LC_MESSAGES/django.po", 'msgid "User"\nmsgstr "Usuario"\n')
    return buffer.getvalue()


def repo_archive(origin, files):
    """A repository archive as GitHub serves it: one top folder REPO-COMMIT/, with a pax header and a link."""
    buffer = io.BytesIO()
    top = f"{origin.repo.split('/')[1]}-{origin.commit}"
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": origin.commit}) as tar:
        folder = tarfile.TarInfo(top)
        folder.type = tarfile.DIRTYPE
        tar.addfile(folder)
        for path, content in files.items():
            data = content.encode("utf-8")
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo(f"{top}/pages.de/common/link.md")
        link.type, link.linkname = tarfile.SYMTYPE, "tar.md"
        tar.addfile(link)
    return buffer.getvalue()


def tldr_page(name, summary, examples):
    lines_ = [f"# {name}", ""] + [f"> {line}" for line in summary] + [""]
    for description, command in examples:
        lines_ += [f"- {description}:", "", f"`{command}`", ""]
    return "\n".join(lines_)


TLDR_PAGES = {  # tar in four languages; ls with a German page that has one example fewer; a page only in German
    "pages/common/tar.md": tldr_page("tar", ["Archiving utility.", "Often combined with `gzip`.",
                                             "More information: <https://www.gnu.org/software/tar>."],
                                     [("[c]reate an archive and write it to a [f]ile", "tar cf {{path/to/target.tar}}"),
                                      ("E[x]tract an archive [v]erbosely", "tar xvf {{path/to/source.tar}}"),
                                      ("[Interactive] Lis[t] the contents", "tar tf {{source.tar}}")]),
    "pages.de/common/tar.md": tldr_page("tar", ["Archivierungstool.", "Häufig mit `gzip` kombiniert.",
                                                "Weitere Informationen: <https://www.gnu.org/software/tar>."],
                                        [("Erstelle ein Archiv", "tar cf {{pfad/zu/ziel.tar}}"),
                                         ("Entpacke ein Archiv", "tar xf {{pfad/zu/quelle.tar}}"),  # another command
                                         ("Liste den Inhalt auf", "tar tf {{quelle.tar}}")]),
    "pages.fr/common/tar.md": tldr_page("tar", ["Utilitaire d'archivage.", "Souvent combiné avec `gzip`.",
                                                "Plus d'informations : <https://www.gnu.org/software/tar>."],
                                        [("Crée une archive", "tar cf {{chemin/vers/cible.tar}}"),
                                         ("Extrait une archive", "tar xvf {{chemin/vers/source.tar}}"),
                                         ("Liste le contenu ", "tar tf {{source.tar}}")]),  # "contenu :"
    "pages.cs/common/tar.md": tldr_page("tar", ["Archivační nástroj."], [("Vytvoř archiv", "tar cf {{cíl.tar}}")]),
    "pages/linux/ls.md": tldr_page("ls", ["List directory contents."], [("List files one per line", "ls -1"),
                                                                        ("List all files", "ls -a")]),
    "pages.de/linux/ls.md": tldr_page("ls", ["Liste Verzeichnisinhalte auf."], [("Liste Dateien", "ls -1")]),
    "pages.de/linux/nur-deutsch.md": tldr_page("nur-deutsch", ["Nur auf Deutsch."], []),
    "pages.es/common/tar.md": tldr_page("tar", ["Utilidad de archivado."], []),  # not read
    "README.md": "# tldr\n",
}


FLUENT = {  # en/de/fr/cs: brands (terms), a page; cs lacks one message, fr's term is its own
    "brands.ftl": {lang: "## Brands\n-brand-name-firefox = Firefox\n-brand-name-mozilla = Mozilla\n"
                   for lang in ("en", "de", "fr", "cs")},
    "firefox/page.ftl": {
        "en": ('# A comment\npage-title = Get { -brand-name-firefox }\n    .alt = The { -brand-name-mozilla } logo\n'
               'page-learn = <a href="{ $url }">Learn</a> about { -brand-name-mozilla }.\n'
               'page-count = { $count ->\n    [one] One tab\n   *[other] { $count } tabs\n}\n'
               'page-long =\n    A message on\n    two lines, &lt;b&gt; kept.\npage-same = OK\npage-only = Only here\n'),
        "de": ('page-title = Hol dir { -brand-name-firefox }\n    .alt = Das { -brand-name-mozilla }-Logo\n'
               'page-learn = <a href="{ $url }">Erfahre mehr</a> über { -brand-name-mozilla }.\n'
               'page-count = { $count } Tabs\npage-long = Eine Nachricht auf zwei Zeilen, &lt;b&gt; bleibt.\n'
               'page-same = OK\npage-only = Nur hier\n'),
        "fr": ('page-title = Téléchargez { -brand-name-firefox(case: "nom") }\n    .alt = Le logo { -brand-name-mozilla }\n'
               'page-learn = <a href="{ $url }">En savoir plus</a> sur { -brand-name-mozilla }.\n'
               'page-count = { $count } onglets\npage-long = Un message sur deux lignes, &lt;b&gt; gardé.\n'
               'page-same = OK\npage-only = Seulement ici\n'),
        "cs": ('page-title = Stáhněte si { -brand-name-firefox(case: "acc") }\n    .alt = Logo { -brand-name-mozilla }\n'
               'page-learn = <a href="{ $url }">Zjistěte více</a> o { -brand-name-mozilla(case: "loc") }.\n'
               'page-count = { $count } panely\npage-long = Zpráva na dvou řádcích, &lt;b&gt; zůstává.\n'
               'page-same = OK\n')},
}


def po_file(messages):
    body = "".join(f'msgid "{en}"\nmsgstr "{fr}"\n\n' for en, fr in messages)
    return 'msgid ""\nmsgstr ""\n"Language: fr\\n"\n\n' + body + '#, fuzzy\nmsgid "A fuzzy message here."\nmsgstr "Flou."\n'


PYTHON_DOCS_NEWEST = [  # (English reST, French reST) of the newest branch
    ("Use :func:`open` to read a file.  It returns a :term:`file object <file object>`.",
     "Utilisez :func:`open` pour lire un fichier. Elle renvoie un :term:`objet fichier <file object>`."),
    ("See :pep:`8` and the `style guide <https://peps.python.org/pep-0008/>`_ for *more* details.",
     "Voir la :pep:`8` et le `guide <https://peps.python.org/pep-0008/>`_ pour **plus** de détails."),
    ("``x = [1, 2, 3]`` and ``y``", "``x = [1, 2, 3]`` et ``y``"),  # code-heavy
    ("Read https://docs.python.org first.", "Lisez https://docs.python.org d'abord."),  # a URL
    ("Return value", "Valeur renvoyée"),  # two words
    ("Source code: Lib/os.py", "Source code: Lib/os.py"),  # untranslated
    ("One sentence. Two sentences here.", "Une seule phrase, deux en anglais."),  # kept whole
]


def build_all_text(http):
    build_mirror(http)

    def put(origin, path, data):
        http.files[f"/{origin.key(path)}"] = data

    for lang in ("en", "de"):
        put(XQUAD, f"xquad.{lang}.json", xquad(lang))
    put(TICO19, "data/TM/all.en-fr.tmx", tmx())
    # Europarl v7: five lines, the first a ComTrans pair of the test mirror (sharing a side: dropped)
    comtrans = {"en": '"Mrs Díez González, the Ombudsman\'s number 0"', "de": '"Frau Díez González erklärt Nummer 0"'}
    for lang in ("en", "de"):
        put(EUROPARL_V7, f"data/train.{lang}", text([comtrans[lang]] + lines("europarl v7", lang, 4)))
    put(OPENNMT, "data/src-train.txt", text(["Parliament &apos;s session , &quot; he said .", "Short .",
                                             "the dog runs wmt15 ."]))
    put(OPENNMT, "data/tgt-train.txt", text(["Die Sitzung des Parlaments , &quot; sagte er .",
                                             "Ein viel zu langer Satz , der nicht zu diesem passt .", "der Hund ."]))
    for name in parallel_corpora.CHAT_FILES:
        put(BCONTRAST, name, chat())
    put(software_l10n.DJANGO, software_l10n.DJANGO_WHEEL, django_wheel())
    for split in ("train", "dev", "test"):
        put(MLQE_PE, f"data/post-editing/{split}/en-de-{split}.tar.gz", mlqe(split))
    tldr = documentation.TLDR
    http.files[f"/{archive_key(tldr.repo, tldr.commit)}"] = repo_archive(tldr, TLDR_PAGES)
    for i, origin in enumerate(documentation.PYTHON_DOCS):  # the newest branch's messages, then one more per branch
        messages = PYTHON_DOCS_NEWEST if i == 0 else [(PYTHON_DOCS_NEWEST[0][0], "Une ancienne traduction."),
                                                     (f"Branch {i} has its own message.", f"La branche {i} a le sien.")]
        http.files[f"/{archive_key(origin.repo, origin.commit)}"] = repo_archive(origin, {
            "library/os.po": po_file(messages), "README.rst": "python-docs-fr\n"})
    mozilla = software_l10n.MOZILLA
    http.files[f"/{archive_key(mozilla.repo, mozilla.commit)}"] = repo_archive(mozilla, {
        f"{lang}/{name}": text_ for name, sides in FLUENT.items() for lang, text_ in sides.items()})


@pytest.fixture
def mirror(monkeypatch):
    monkeypatch.setattr(source_checksums, "SHA256", {})
    monkeypatch.setattr(checksums, "SHA256", {})
    monkeypatch.setattr(source_checksums, "MEMBERS", {})
    s = Server()
    build_all_text(s)
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def test_the_all_text_recipe_is_its_configs_folders():
    """configs/general-m2m-all-text.yaml trains on wmt15-sample-en-de-aligned, which bridgeembed-mine makes from the
    fetched wmt15-sample-en-de."""
    config = origins.recipe_folders(str(ROOT / "configs/general-m2m-all-text.yaml"))
    assert origins.recipe_folders("general-m2m-all-text") == config
    assert "wmt15-sample-en-de" in config and "wmt15-sample-en-de-aligned" not in config


def test_each_derivation_from_tiny_files(mirror, tmp_path):
    root = tmp_path / "data"
    names = [name for name, *_ in origins.ALL_TEXT]
    done = origins.fetch_folders(root, names, mirror.url, progress=False)
    assert read(root / "xquad-en-de/train.en.gz") == ["Who led the team?", f"{WORDS['en']} q2?", "The Panthers won.",
                                                      "Short led the team in sacks."], "q2's paragraph split unevenly"
    assert read(root / "xquad-en-de/train.de.gz")[3] == "Short führte."
    assert read(root / "tico19-en-fr/train.fr.gz")[0] == f"{WORDS['fr']} tico 0 & co"
    assert done["tico19-en-fr"] == 4
    assert read(root / "europarl-v7-en-de/train.de.gz") == lines("europarl v7", "de", 4), "the ComTrans pair dropped"
    assert read(root / "wmt15-sample-en-de/train.en.gz") == ["Parliament's session, \"he said.",
                                                             "the dog runs wmt15."], "unescaped, detokenized, the "\
                                                                                     "misaligned pair dropped"
    assert read(root / "wmt20-chat-en-de/train.en.gz") == ["How can I help?", "I need a car."], \
        "English: the agent's source, the customer's target; the same dialogue in three files kept once"
    assert read(root / "wmt20-chat-en-de/train.de.gz") == ["Wie kann ich helfen?", "Ich brauche ein Auto."]
    assert read(root / "mlqe-pe-en-de/train.en.gz")[:2] == ["It's train line 0.", "It's train line 1."]
    assert read(root / "mlqe-pe-en-de/train.de.gz")[-1] == "Es ist test Zeile 1.", "train, dev and test20"
    assert done["mlqe-pe-en-de"] == 6
    assert read(root / "django-l10n/train.en.gz") == ["User", "%(count)d object"], "plural: its singular forms"
    assert read(root / "django-l10n/train.cs.gz") == ["Uživatel", "%(count)d objekt"]


def test_the_all_text_cleaning_rule(mirror, tmp_path):
    """shared/data/README.md: rows matching (NFKC, casefolded, letters and digits) a dev line of multi30k val or
    test_2016_flickr, newstest2013, the last 300 lines of each Tatoeba pair or the last 1,000 of ComTrans are
    dropped, and rows whose language pair an earlier folder holds."""
    dev_caption = lines("caption val", "en", 6)[2].upper() + "!"  # the same letters and digits as a val caption
    tatoeba = lines("tatoeba eng-fra", "en", 8)[0], lines("tatoeba eng-fra", "fr", 8)[0]  # a dev line (last 300)
    rows = [(dev_caption, "a"), ("Fine line.", "Ligne fine."), ("fine line", "ligne fine"), tatoeba]
    units = "".join(f'<tu><tuv xml:lang="en"><seg>{en}</seg></tuv><tuv xml:lang="fr"><seg>{fr}</seg></tuv></tu>'
                    for en, fr in rows)
    mirror.files[f"/{TICO19.key('data/TM/all.en-fr.tmx')}"] = f"<tmx><body>{units}</body></tmx>".encode("utf-8")
    root = tmp_path / "data"
    origins.fetch_folders(root, ["tico19-en-fr"], mirror.url, progress=False)
    assert read(root / "tico19-en-fr/train.en.gz") == ["Fine line."], "one of two rows equal as match keys kept"
    assert match_key("FIne LINE!") == "fineline"


def test_a_pair_of_an_earlier_folder_is_dropped():
    clean = Cleaning(set(), set())
    clean.add([("Hello.", "Hallo.", "Bonjour.")], ("en", "de", "fr"))
    kept = clean.rows([("hello", "bonjour!"), ("Hello.", "Salut."), ("Hi", "Bonjour.")], ("en", "fr"))
    assert kept == [("Hello.", "Salut."), ("Hi", "Bonjour.")], "the (en, fr) pair of a 3-way folder dropped"


def test_the_recipe_fetches_the_all_text_folders_whose_sources_the_package_checks(mirror, tmp_path):
    root = tmp_path / "data"
    assert data_main(["recipe", "general-m2m-all-text", "--data", str(root), "--mirror", mirror.url]) == 0
    for name in origins.RECIPES["general-m2m-all-text"]:
        assert (root / name).is_dir(), name
    assert count(root / "mlqe-pe-en-de/train.de.gz") == 6
    requested = {path[1:] for path, _ in mirror.requests}
    task1 = {key for key in requested if "/data/task1/raw/" in key}
    assert requested - task1 == set(SHIPPED[0]) | set(SHIPPED_MEMBERS), \
        "source_checksums.py holds every other source the recipe fetches"


def test_tldr_pages_from_the_repositorys_archive(mirror, tmp_path):
    """Summaries when equally many (less the link line), example descriptions of pages with as many examples where
    the commands agree outside {{placeholders}}; mnemonic brackets, backticks and the final colon removed."""
    root = tmp_path / "data"
    origins.fetch_folders(root, ["tldr-en-de", "tldr-en-fr", "tldr-en-cs"], mirror.url, progress=False)
    english, german = read(root / "tldr-en-de/train.en.gz"), read(root / "tldr-en-de/train.de.gz")
    assert list(zip(english, german)) == [
        ("Archiving utility.", "Archivierungstool."), ("Often combined with gzip.", "Häufig mit gzip kombiniert."),
        ("create an archive and write it to a file", "Erstelle ein Archiv"),
        ("[Interactive] List the contents", "Liste den Inhalt auf"),
        ("List directory contents.", "Liste Verzeichnisinhalte auf.")], "ls: one example fewer in German"
    assert read(root / "tldr-en-fr/train.fr.gz")[2:] == ["Crée une archive", "Extrait une archive", "Liste le contenu"]
    assert read(root / "tldr-en-cs/train.cs.gz") == [], "the Czech summary has one line of the two"
    key = archive_key(documentation.TLDR.repo, documentation.TLDR.commit)
    assert [path for path, _ in mirror.requests].count(f"/{key}") == 1, "one archive for the three folders"
    recorded = (root / ".sources/MEMBERS-SHA256").read_text(encoding="utf-8")
    pages = {p: t.encode("utf-8") for p, t in TLDR_PAGES.items() if p.startswith(("pages/", "pages.de", "pages.fr",
                                                                                   "pages.cs"))}
    assert f"{members_digest(pages)}  {key}\n" in recorded, "the digest of the four languages' pages, not the bytes"


def test_mozilla_www_from_its_fluent_files(mirror, tmp_path):
    """Messages and attributes in all four languages, by (file, id), in id order: terms as the English term, tags
    removed and character references decoded, placeables kept; select expressions and all-identical rows dropped."""
    root = tmp_path / "data"
    origins.fetch_folders(root, ["mozilla-www"], mirror.url, progress=False)
    assert read(root / "mozilla-www/train.en.gz") == [
        "Learn about Mozilla.", "A message on two lines, <b> kept.", "Get Firefox", "The Mozilla logo"]
    assert read(root / "mozilla-www/train.cs.gz") == [
        "Zjistěte více o Mozilla.", "Zpráva na dvou řádcích, <b> zůstává.", "Stáhněte si Firefox", "Logo Mozilla"]
    assert read(root / "mozilla-www/train.de.gz")[0] == "Erfahre mehr über Mozilla."


def test_python_docs_from_ten_branches(mirror, tmp_path):
    """reST stripped (roles and literals as their text, links as their titles, :pep: as "PEP 8", emphasis removed),
    code-heavy, URL-bearing, under-3-word and untranslated messages dropped, sentence pairs where both sides split
    alike, else the message whole; a message's newest translation wins (branches 3.13 back to 2.7), fuzzy ones left
    out."""
    root = tmp_path / "data"
    origins.fetch_folders(root, ["python-docs-en-fr"], mirror.url, progress=False)
    rows = list(zip(read(root / "python-docs-en-fr/train.en.gz"), read(root / "python-docs-en-fr/train.fr.gz")))
    assert rows[:4] == [("Use open to read a file.", "Utilisez open pour lire un fichier."),
                        ("It returns a file object.", "Elle renvoie un objet fichier."),
                        ("See PEP 8 and the style guide for more details.",
                         "Voir la PEP 8 et le guide pour plus de détails."),
                        ("One sentence. Two sentences here.", "Une seule phrase, deux en anglais.")]
    assert rows[4:] == [(f"Branch {i} has its own message.", f"La branche {i} a le sien.") for i in range(1, 10)]
    assert documentation.strip_rst(r":meth:`~io.IOBase.close` ends it::") == "close ends it:"
    assert documentation.strip_rst(r"the ``\n`` and :command:`bdist_\*` \*.pkg") == r"the \n and bdist_\* *.pkg"
    assert documentation.split_sentences("Under Mac OS X. You can. Q. Why?") == ["Under Mac OS X. You can.", "Q. Why?"]


def test_an_archive_whose_files_differ_is_refused_and_removed(mirror, tmp_path, monkeypatch):
    """The members digest is checked, not the archive's bytes: a rebuilt archive with the same files passes, one
    page changed fails and the archive is removed."""
    tldr = documentation.TLDR
    key = archive_key(tldr.repo, tldr.commit)
    pages = {p: t.encode("utf-8") for p, t in TLDR_PAGES.items() if p.startswith(("pages/", "pages.de", "pages.fr",
                                                                                   "pages.cs"))}
    monkeypatch.setattr(source_checksums, "MEMBERS", {key: members_digest(pages)})
    root = tmp_path / "data"
    mirror.files[f"/{key}"] = repo_archive(tldr, dict(reversed(TLDR_PAGES.items())))  # other bytes, same files
    origins.fetch_folders(root, ["tldr-en-cs"], mirror.url, progress=False)
    mirror.files[f"/{key}"] = repo_archive(tldr, {**TLDR_PAGES, "pages.fr/common/tar.md": "# tar\n"})
    (root / ".sources" / key).unlink()
    with pytest.raises(DataError, match="are not those of tldr-pages/tldr at 08e345f"):
        origins.fetch_folders(root, ["tldr-en-fr"], mirror.url, progress=False)
    assert not (root / ".sources" / key).exists() and not (root / "tldr-en-fr").exists()
