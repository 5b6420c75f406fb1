"""The charset benchmark: how it reads the three corpora's layouts, how it
scores a detector's answer, and its command on a tiny corpus of each."""
from __future__ import annotations

import json
import subprocess
import sys

from mrcrawl.bench import charsets
from mrcrawl.bench.charsets import as_html_page, is_right, main, script_group, undeclared

RUSSIAN = (
    "Правительство утвердило новую программу поддержки малого и среднего бизнеса.\n"
    "Предприниматели смогут получить льготные кредиты на модернизацию производства "
    "и закупку оборудования по ставке не выше семи процентов годовых.\n"
)
JAPANESE = (
    "東京都は十二日、感染症対策として、都内の医療機関に対する支援策を拡充すると発表した。\n"
    "知事は記者会見で「医療現場の負担を少しでも軽減したい」と述べ、病床を確保した病院への補助金を引き上げる方針を示した。\n"
)
SIMPLIFIED = (
    "新华社北京三月十二日电 记者从国家统计局获悉，今年前两个月，全国规模以上工业增加值同比增长百分之七点二。\n"
    "分三大门类看，采矿业增加值同比增长百分之四点八，制造业增长百分之七点七。\n"
)
TRADITIONAL = (
    "行政院今天召開院會，通過經濟部擬具的產業創新條例部分條文修正草案。\n"
    "行政院發言人表示，面對全球供應鏈重組與淨零排放的趨勢，政府希望透過租稅優惠鼓勵企業轉型。\n"
)
GREEK = (
    "Η κυβέρνηση ανακοίνωσε σήμερα νέα μέτρα στήριξης για τα νοικοκυριά, με έμφαση στο κόστος της ενέργειας.\n"
    "Ο υπουργός Οικονομικών δήλωσε ότι τα μέτρα θα χρηματοδοτηθούν από την υπεραπόδοση των φορολογικών εσόδων.\n"
)
HEBREW = (
    "הממשלה אישרה הלילה את הצעת תקציב המדינה לשנה הבאה, לאחר דיון ארוך שנמשך יותר משתים עשרה שעות.\n"
    "שר האוצר אמר כי התקציב נועד לחזק את הצמיחה ולצמצם את הגירעון.\n"
)
FRENCH = (
    "Le gouvernement a présenté mercredi son projet de budget pour l'année prochaine, "
    "qui prévoit une réduction du déficit à quatre pour cent du produit intérieur brut.\n"
    "Le ministre de l'Économie a souligné que les économies porteraient sur les dépenses de fonctionnement.\n"
)

# (directory, file, text, codec the file is written in) per layout.
CHAR_DATASET = [
    ("koi8_r", "news.txt", RUSSIAN), ("windows_1251", "news.txt", RUSSIAN),
    ("shift_jis", "news.txt", JAPANESE), ("euc_jp", "news.txt", JAPANESE),
    ("gb2312", "news.txt", SIMPLIFIED), ("big5", "news.txt", TRADITIONAL),
    ("utf_8", "news.txt", GREEK),
]
CCHARDET = [  # file name, text, codec
    ("wikipedia_SJIS.txt", JAPANESE, "shift_jis"),
    ("wikipedia_GB2312.txt", SIMPLIFIED, "gb2312"),
    ("github_issue_1_expected_windows_1252_got_ maccentraleurope.txt", FRENCH, "cp1252"),
    ("iso8859-7.csv", GREEK, "iso8859-7"),
]
UCHARDET = [  # language, file name, text, codec
    ("ru", "koi8-r.txt", RUSSIAN, "koi8-r"), ("ru", "windows-1251.txt", RUSSIAN, "cp1251"),
    ("el", "iso-8859-7.txt", GREEK, "iso8859-7"), ("el", "windows-1253.txt", GREEK, "cp1253"),
    ("he", "windows-1255.txt", HEBREW, "cp1255"), ("fr", "windows-1252.txt", FRENCH, "cp1252"),
    ("fr", "utf-8.txt", FRENCH, "utf-8"), ("fr", "utf-16.be", "\ufeff" + FRENCH, "utf-16-be"),
    ("ja", "euc-jp.txt", JAPANESE, "euc_jp"), ("zh", "big5.txt", TRADITIONAL, "big5"),
]


def write_corpora(root):
    char_dataset = root / "char-dataset"
    for folder, name, text in CHAR_DATASET:
        (char_dataset / folder).mkdir(parents=True, exist_ok=True)
        (char_dataset / folder / name).write_bytes(text.encode(folder))
    # Binary files, and an encoding no page is decoded with: both left out.
    (char_dataset / "None").mkdir()
    (char_dataset / "None" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (char_dataset / "utf_32").mkdir()
    (char_dataset / "utf_32" / "news.txt").write_bytes(FRENCH.encode("utf-32"))
    samples = root / "cChardet" / "tests" / "samples"
    samples.mkdir(parents=True)
    for name, text, codec in CCHARDET:
        (samples / name).write_bytes(text.encode(codec))
    for language, name, text, codec in UCHARDET:
        folder = root / "uchardet" / "test" / language
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(text.encode(codec))
    return char_dataset, root / "cChardet", root / "uchardet"


def test_the_command_scores_every_detector_on_each_layout(tmp_path, capsys):
    char_dataset, cchardet, uchardet = write_corpora(tmp_path)
    report = tmp_path / "charsets.json"
    assert main(["--char-dataset", str(char_dataset), "--cchardet", str(cchardet), "--uchardet", str(uchardet),
                 "--repeat", "1", "--json", str(report)]) == 0
    printed = capsys.readouterr().out
    figures = json.loads(report.read_text(encoding="utf-8"))
    files = len(CHAR_DATASET) + len(CCHARDET) + len(UCHARDET)
    assert figures["files"] == files
    assert [entry["name"] for entry in figures["skipped"]] == ["utf_32/news.txt"]
    detectors = ["ours", "charset_normalizer"] + ([] if "chardet" in figures["missing"] else ["chardet"])
    assert list(figures["detectors"]) == detectors
    assert list(figures["forms"]) == ["text", "html", "heavy-html"]
    for form, scored in figures["forms"].items():
        assert f"Form {form}: {files} files" in printed
        assert scored["files"] == files
        for name in detectors:
            result = scored["detectors"][name]
            assert result["overall"]["files"] == files
            assert {corpus: counts["files"] for corpus, counts in result["per_corpus"].items()} == {
                "char-dataset": len(CHAR_DATASET), "cChardet": len(CCHARDET), "uchardet": len(UCHARDET)}
            assert {language: counts["files"] for language, counts in result["per_language"].items()} == {
                "el": 2, "fr": 3, "he": 1, "ja": 1, "ru": 2, "zh": 1}
            assert sum(counts["files"] for counts in result["per_group"].values()) == files
            for counts in [result["overall"], *result["per_corpus"].values(), *result["per_group"].values(),
                           *result["per_language"].values()]:
                assert 0 <= counts["accuracy"] <= 1
                assert counts["right"] == round(counts["accuracy"] * counts["files"])
            assert result["ms_per_file"] > 0
            rows = {(row["corpus"], row["name"]): row for row in result["rows"]}
            assert len(rows) == files
            # UTF-8 with non-ASCII text: every detector gets it right.
            assert rows[("char-dataset", "utf_8/news.txt")]["right"], (form, name)
            assert rows[("uchardet", "fr/utf-8.txt")]["right"], (form, name)
            assert rows[("uchardet", "fr/utf-16.be")]["encoding"] == "utf-16-be"
            groups = {row["name"]: row["group"] for row in result["rows"]}
            assert groups["ru/koi8-r.txt"] == "Cyrillic" and groups["ja/euc-jp.txt"] == "CJK"
            assert groups["he/windows-1255.txt"] == "other non-Latin" and groups["fr/windows-1252.txt"] == "Latin"
            assert rows[("cChardet", "wikipedia_SJIS.txt")]["encoding"] == "shift_jis"
            assert rows[("cChardet", CCHARDET[2][0])]["encoding"] == "cp1252"
            assert rows[("cChardet", "iso8859-7.csv")]["encoding"] == "iso8859-7"
    assert "uchardet, per language:" in printed


def test_a_right_answer_is_one_that_gives_the_same_text():
    body = SIMPLIFIED.encode("gb2312")
    assert is_right(body, "gb2312", "gb2312")
    assert is_right(body, "gb2312", "gb18030")  # read as browsers read gb2312
    assert not is_right(body, "gb2312", "big5")  # decodes to other text, or not at all
    assert not is_right(body, "gb2312", None)
    assert not is_right(body, "gb2312", "no-such-codec")
    assert is_right(b"plain ASCII", "ascii", "utf-8")
    assert is_right(JAPANESE.encode("shift_jis"), "shift_jis", "cp932")
    assert not is_right(RUSSIAN.encode("koi8-r"), "koi8-r", "cp1251")


def test_declarations_in_a_file_are_made_unreadable():
    body = b'<?xml version="1.0" encoding="koi8-r"?><meta charset=gb2312><meta content="text/html; Charset = big5">'
    cleared = undeclared(body)
    assert len(cleared) == len(body)
    for word in (b"encoding=", b"charset=", b"Charset ="):
        assert word not in cleared
    # The keyword goes wherever a detector could take it for one, prose included.
    assert undeclared(b"text without one") == b"text without one"


def test_html_pages_hold_the_text_in_the_same_encoding():
    sample = charsets.Sample("uchardet", "ru/koi8-r.txt", "koi8-r", "ru", RUSSIAN.encode("koi8-r"))
    for heavy in (False, True):
        page = as_html_page(sample, heavy=heavy)
        text = page.body.decode("koi8-r")
        assert "<p>Правительство утвердило" in text and "charset" not in text
        assert len(page.body) > (30_000 if heavy else 500)
    assert script_group(GREEK) == "other non-Latin" and script_group("plain") == "Latin"


def test_help_runs():
    result = subprocess.run([sys.executable, "-m", "mrcrawl.bench.charsets", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "--char-dataset" in result.stdout and "--json" in result.stdout
