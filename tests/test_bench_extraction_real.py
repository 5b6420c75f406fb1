"""The main-text benchmark on real pages: each dataset's layout and gold
format read right, and the command's figures, on a tiny data directory
laid out as the public checkouts are."""
from __future__ import annotations

import gzip
import html
import json

import pytest

from mrcrawl.bench import extraction, real_pages
from mrcrawl.bench.extraction import score, tokens

ENGLISH = [
    ("Harbour town opens its new ferry terminal", [
        "The new ferry terminal in the old harbour opened on Monday morning, two years after the first pile was "
        "driven into the mud of the bay and six months later than the council had promised its residents.",
        "Commuters who used to wait in a draughty shed now sit in a glass hall with heated benches, a small cafe "
        "and screens that show when each boat will leave, which the operator says will cut the queues in half.",
        "The mayor said the terminal cost less than planned because the steel came from the yard across the "
        "water, and that the savings would pay for a second berth that should open before the next summer season.",
    ]),
    ("Library lends tools as well as books", [
        "Since the spring the public library on the hill has lent drills, ladders and sewing machines alongside "
        "its novels, and the librarians say the shelf of tools is now emptier on weekends than the crime section.",
        "Borrowers sign for each tool with their usual card and bring it back within a week; a volunteer who "
        "repaired engines for thirty years checks every one of them before it goes back onto the shelf.",
        "The idea came from a reader who needed a saw for one afternoon and did not want to buy one, and the "
        "library board agreed to try it for a year before deciding whether it should become permanent.",
    ]),
]
CHINESE = [
    ("城市公园新增夜间跑道", [
        "市园林局昨天宣布，城东公园的环湖跑道将从下个月起延长开放时间，晚上十点以前都有路灯照明，方便下班以后来锻炼的市民。",
        "跑道全长三公里，铺设了新的塑胶路面，每隔五百米设有饮水点和休息座椅，管理处还安排了两名工作人员负责夜间巡查。",
        "不少附近居民表示，以前下班太晚只能在马路边跑步，现在有了安全的跑道，全家人吃完晚饭都可以一起来散步。",
    ]),
    ("老街书店重新开业", [
        "位于老街拐角的一家书店经过半年装修，上周末重新开门迎客，店里保留了原来的木书架，又增加了一个给孩子读书的角落。",
        "店主说，书店开了二十多年，很多老顾客从学生时代就在这里买书，如今他们带着自己的孩子回来，这是她最高兴的事情。",
        "开业当天，书店还请来了本地的几位作家和读者见面，签名售书的队伍一直排到了街口，附近的咖啡馆也跟着热闹起来。",
    ]),
]

# DAniEL's languages beyond English and Chinese: its golds give the headline first.
GREEK = ("Νέα γέφυρα ενώνει τα δύο χωριά", [
    "Η νέα πεζογέφυρα πάνω από το ποτάμι άνοιξε χθες το πρωί, ύστερα από δύο χρόνια εργασιών, και οι κάτοικοι "
    "των δύο χωριών δεν χρειάζεται πια να κάνουν τον γύρο από τον κεντρικό δρόμο για να πάνε στο σχολείο.",
    "Ο δήμαρχος είπε ότι το έργο κόστισε λιγότερο από όσο είχε υπολογιστεί, γιατί η ξυλεία ήρθε από το "
    "πριονιστήριο της περιοχής, και ότι με τα χρήματα που περίσσεψαν θα φτιαχτεί φωτισμός κατά μήκος της όχθης.",
    "Οι ψαράδες του χωριού ζήτησαν να μείνει χώρος κάτω από τη γέφυρα για τις βάρκες τους, και οι μηχανικοί "
    "ανέβασαν το κατάστρωμα μισό μέτρο ψηλότερα από το αρχικό σχέδιο για να περνούν χωρίς δυσκολία.",
])
RUSSIAN = ("В городе открылась библиотека инструментов", [
    "С весны городская библиотека на холме выдаёт читателям не только книги, но и дрели, лестницы и швейные "
    "машины, и библиотекари говорят, что полка с инструментами по выходным пустеет быстрее полки с детективами.",
    "Каждый инструмент выдают по обычному читательскому билету на неделю, а пенсионер, тридцать лет чинивший "
    "моторы, проверяет его перед тем, как вернуть на полку, и записывает в журнал, что было заменено.",
    "Идея пришла от читателя, которому на один вечер понадобилась пила, и совет библиотеки решил попробовать "
    "выдавать инструменты в течение года, прежде чем решать, оставлять ли эту услугу насовсем.",
])


def article_page(title: str, paragraphs: list[str], charset: str = "utf-8") -> str:
    """A news page: menus, the article, related links, comments and a footer."""
    body = "".join(f"<p>{html.escape(paragraph)}</p>\n" for paragraph in paragraphs)
    menu = "".join(f'<li><a href="/s/{n}">Section {n}</a></li>' for n in range(8))
    related = "".join(f'<li><a href="/a/{n}">Another story about the region, number {n}</a></li>' for n in range(5))
    return (f'<!DOCTYPE html><html><head><meta charset="{charset}"><title>{html.escape(title)} - The Daily</title>'
            f'</head><body><header><nav><ul>{menu}</ul></nav></header>\n<main><article>'
            f'<h1>{html.escape(title)}</h1>\n{body}</article>\n<aside><h2>Related</h2><ul>{related}</ul></aside>'
            '<section class="comments"><p>Great news, finally!</p><p>About time too.</p></section></main>\n'
            '<footer><p>Copyright The Daily. All rights reserved. Terms. Privacy. Contact us.</p></footer>'
            '</body></html>\n')


def l3s_gold(title: str, paragraphs: list[str]) -> str:
    """L3S-GN1's annotated page: every text in a span of its label, nested."""
    sel = lambda label, text: f'<span class="x-nc-sel{label}">{text}</span>'
    body = "".join(f"<p>{sel(2, html.escape(paragraph))}</p>" for paragraph in paragraphs)
    return (f'<html><head><style>.x-nc-sel1 {{ color: black }}</style></head><body>'
            f'{sel(0, "<ul><li>" + sel(0, "Home") + "</li><li>" + sel(0, "World") + "</li></ul>")}'
            f'<h1>{sel(1, html.escape(title))}</h1>{sel(2, body)}{sel(3, "<p>Photo: the harbour at dawn</p>")}'
            f'{sel(2, "<p>" + sel(0, "Share this story") + "</p>")}'
            f'{sel(4, "<a>Another story about the region</a>")}{sel(5, "<p>Great news, finally!</p>")}'
            f'<p>Copyright The Daily.</p></body></html>')


def write(path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)


@pytest.fixture
def data_dir(tmp_path):
    """Two pages in each layout, as the checkouts lay them out side by side."""
    root = tmp_path / "data"
    merged = root / "html-cleaning-dataset-merged"
    for number, (title, paragraphs) in enumerate(ENGLISH, 1):
        page = article_page(title, paragraphs)
        markers = f"<h>{title}\n" + "".join(f"<p>{html.escape(p, quote=True)}\n" for p in paragraphs)
        for folder in ("cleaneval-dev", "CleanPortalEval-master"):
            write(merged / folder / "input" / f"{number}.html", f'<text id="http://example.com/{number}">\n{page}</text>\n')
            write(merged / folder / "GoldStandard" / f"{number}.txt", f"\nURL: http://example.com/{number}\n{markers}")
        write(merged / "dragnet_data" / "input" / f"{number}.html", page)
        write(merged / "dragnet_data" / "GoldStandard" / f"{number}.txt",
              "\r\n\r\n".join([title, *paragraphs, "!@#$%^&*()  COMMENTS", "Great news, finally!"]))
        write(merged / "page-signal-master" / "input" / f"{number}.html", page)
        write(merged / "page-signal-master" / "GoldStandard" / f"{number}.txt", l3s_gold(title, paragraphs))
        write(merged / "readability" / "input" / f"{number:03d}.html", page)
        write(merged / "readability" / "GoldStandard" / f"{number:03d}.txt",
              '<div id="readability-page-1" class="page"><article>'
              + "".join(f"<p>{html.escape(p)}</p>" for p in [title, *paragraphs]) + "</article></div>")
    # A CleanEval input with no gold file, and a gold that is empty.
    write(merged / "cleaneval-dev" / "input" / "3.html", article_page(*ENGLISH[0]))
    write(merged / "cleaneval-dev" / "input" / "4.html", article_page(*ENGLISH[1]))
    write(merged / "cleaneval-dev" / "GoldStandard" / "4.txt", "URL: http://example.com/4\n<p>  \n")
    # Windows-1252 (Dragnet) and UTF-8 read as Windows-1252 (CleanEval) golds.
    write(merged / "dragnet_data" / "GoldStandard" / "2.txt",
          ("\r\n".join([ENGLISH[1][0], *ENGLISH[1][1]]) + "\r\nThe librarian’s café.").encode("cp1252"))
    (merged / "cleaneval-dev" / "GoldStandard" / "1.txt").write_text(
        (merged / "cleaneval-dev" / "GoldStandard" / "1.txt").read_text("utf-8") + "<p>A clichÃ© cafÃ©\n", "utf-8")

    chinese = root / "Chinese-Web-Content-Extraction-Dataset"
    for number, (title, paragraphs) in enumerate(CHINESE, 1):
        # The first page is in GBK, as many Chinese sites still are: decoded as the crawler decodes it.
        charset = "gbk" if number == 1 else "utf-8"
        write(chinese / "original" / f"page-{number}.html", article_page(title, paragraphs, charset).encode(charset))
        write(chinese / "cleaned" / f"page-{number}.txt", "\n\n".join(paragraphs))

    scrapinghub = root / "article-extraction-benchmark"
    truth = {}
    for number, (title, paragraphs) in enumerate(ENGLISH, 1):
        name = f"{number:064x}"
        write(scrapinghub / "html" / f"{name}.html.gz", gzip.compress(article_page(title, paragraphs).encode()))
        truth[name] = {"articleBody": "\n\n".join(paragraphs), "url": f"https://example.com/{number}"}
    write(scrapinghub / "ground-truth.json", json.dumps(truth))

    daniel = root / "waddle" / "corpora" / "Corpus_daniel_v2.1"
    for name, (title, paragraphs) in (("20111101_www.example.gr_1", GREEK), ("20111102_www.example.ru_2", RUSSIAN)):
        write(daniel / "html" / name, article_page(title, paragraphs))
        # One <p> a line, headline first, and tags left over from the page.
        write(daniel / "reference" / name, "".join(f"<p>{html.escape(line)}</p>\n" for line in [title, *paragraphs])
              + "<script>var x = 1;</script></div>\n")
    # One gold is a copy of its whole page; a gold with no page is not read.
    write(daniel / "html" / "20111103_www.example.ru_3", article_page(*RUSSIAN))
    write(daniel / "reference" / "20111103_www.example.ru_3", article_page(*RUSSIAN))
    write(daniel / "reference" / "20111104_www.example.ru_4", "<p>No page for this gold.</p>\n")
    return root


def by_name(pages):
    return {(page.dataset, page.name): page for page in pages}


def test_each_layout_and_gold_format_is_read_right(data_dir):
    pages, skipped = real_pages.load(data_dir)
    assert sorted({page.dataset for page in pages}) == sorted(real_pages.DATASETS)
    assert all(len([p for p in pages if p.dataset == dataset]) == 2 for dataset in real_pages.DATASETS)
    assert skipped == {("cleaneval", "no gold file"): 1, ("cleaneval", "empty truth"): 1,
                       ("daniel", "gold is the whole page"): 1}
    pages = by_name(pages)
    title, paragraphs = ENGLISH[0]
    article = tokens("\n".join([title, *paragraphs]))
    for key in [("cleanportaleval", "1"), ("dragnet", "1"), ("readability", "001")]:
        page = pages[key]
        truth = "\n".join(page.truth)
        assert "URL:" not in truth and "<" not in truth and "COMMENTS" not in truth, (key, truth)
        assert tokens(truth) == article, key
        assert score(truth, truth).f1 == 1.0
        assert not page.html.startswith("<text"), key
        assert page.group == "latin" and page.language == "en"
    # CleanEval: URL line, markers and entities gone, UTF-8 read as Windows-1252 repaired.
    assert tokens("\n".join(pages["cleaneval", "dev-1"].truth)) == article + tokens("A cliché café")
    assert pages["dragnet", "2"].truth[-1] == "The librarian’s café."
    # L3S-GN1: headline, full text and supplemental; a text's innermost label decides.
    l3s = "\n".join(pages["l3s-gn1", "1"].truth)
    assert tokens(l3s) == article + tokens("Photo: the harbour at dawn")
    for boilerplate in ("Home", "Share this story", "Another story", "Great news", "Copyright"):
        assert boilerplate not in l3s
    assert pages["scrapinghub", f"{1:064x}"].truth == tuple(paragraphs)
    for number, (title, paragraphs) in enumerate(CHINESE, 1):
        page = pages["chinese-news", f"page-{number}"]
        assert page.group == "cjk" and page.language == "zh"
        assert page.truth == tuple(paragraphs)
        assert title in page.html  # the GBK page too: decoded by its declared charset
    # DAniEL: headline and paragraphs, stray tags and scripts gone; grouped by script.
    for name, (title, paragraphs), group in (("20111101_www.example.gr_1", GREEK, "greek"),
                                             ("20111102_www.example.ru_2", RUSSIAN, "cyrillic")):
        page = pages["daniel", name]
        assert page.truth == (title, *paragraphs) and page.group == group


def test_the_command_on_real_pages(data_dir, tmp_path, capsys):
    figures_file = tmp_path / "real.json"
    assert extraction.main(["--real", str(data_dir), "--extractors", "mrcrawl", "--json", str(figures_file)]) == 0
    printed = capsys.readouterr().out
    figures = json.loads(figures_file.read_text(encoding="utf-8"))
    assert figures["pages"] == 2 * len(real_pages.DATASETS)
    assert figures["datasets"] == {dataset: 2 for dataset in real_pages.DATASETS}
    assert figures["groups"] == {"latin": 12, "cjk": 2, "cyrillic": 1, "greek": 1}
    assert printed.startswith(f"{figures['pages']} real pages: cleaneval 2, cleanportaleval 2,")
    assert "skipped: 1 cleaneval (empty truth)" in printed and "skipped: 1 cleaneval (no gold file)" in printed
    assert "skipped: 1 daniel (gold is the whole page)" in printed
    for dataset in real_pages.DATASETS:
        assert f"dataset {dataset} (2 pages)" in printed
    assert "language group cjk (2 pages)" in printed and "language group greek (1 pages)" in printed
    ours = figures["extractors"]["mrcrawl"]
    assert len(ours["pages"]) == figures["pages"]
    assert {(row["dataset"], row["group"]) for row in ours["pages"] if row["dataset"] == "chinese-news"} == {
        ("chinese-news", "cjk")}
    for row in ours["pages"]:
        assert row["f1"] > 0.8, row  # each gold is the article (and at most a caption) the page holds
    assert ours["lost"] == 0 and ours["pages_per_second"] > 0
    assert set(ours["per_dataset"]) == set(real_pages.DATASETS)
    assert figures["comparison"] == {}  # no rival was run


def test_a_missing_dataset_is_absent(data_dir, tmp_path, capsys):
    figures_file = tmp_path / "real.json"
    assert extraction.main(["--real", str(data_dir), "--extractors", "mrcrawl", "--datasets", "l3s-gn1,scrapinghub",
                            "--json", str(figures_file)]) == 0
    assert json.loads(figures_file.read_text(encoding="utf-8"))["datasets"] == {"l3s-gn1": 2, "scrapinghub": 2}
    assert "dragnet" not in capsys.readouterr().out
    only_chinese = tmp_path / "only"
    only_chinese.mkdir()
    (data_dir / "Chinese-Web-Content-Extraction-Dataset").rename(only_chinese / "chinese")
    pages, skipped = real_pages.load(only_chinese)
    assert {page.dataset for page in pages} == {"chinese-news"} and not skipped
    with pytest.raises(SystemExit) as exit_info:  # no dataset at all is an error
        extraction.main(["--real", str(tmp_path / "empty"), "--extractors", "mrcrawl"])
    assert exit_info.value.code == 2
