"""Charset detection and decoding on realistic pages in the contract's charsets.

Every page is a news article with ordinary ASCII markup (navigation,
scripts, footer) around a few hundred characters of real text.  Each
charset is tried declared in the HTTP header, declared only in a meta tag,
and not declared at all; the recorded codec must give back exactly the
text the page was written from.
"""
from __future__ import annotations

import codecs
import html
import time
from typing import NamedTuple

import pytest

from mrcrawl.page.charset import decode_body, decode_page, detect_encoding
from mrcrawl.page.charset_labels import charset_from_content_type, codec_for_label, meta_charset_label
from mrcrawl.store.records import encode_body, new_doc


class NewsText(NamedTuple):
    codec: str  # the Python codec the page is written in
    label: str  # how a server or an author declares it
    language: str
    title: str
    navigation: list[str]
    paragraphs: list[str]


NEWS = [
    NewsText(
        'gb2312', 'GB2312', 'zh-Hans',
        '国家统计局：前两个月工业生产稳中有升',
        ['首页', '时政', '财经', '国际', '体育', '评论'],
        [
            '新华社北京三月十二日电 记者从国家统计局获悉，今年前两个月，全国规模以上工业增加值同比增长百分之七点二，比去年十二月份加快零点四个百分点。从环比看，二月份规模以上工业增加值比上月增长零点五六个百分点。',
            '分三大门类看，采矿业增加值同比增长百分之四点八，制造业增长百分之七点七，电力、热力、燃气及水生产和供应业增长百分之七点九。高技术制造业增加值增长较快，新能源汽车、太阳能电池、集成电路等产品产量保持两位数增长。',
            '国家统计局新闻发言人表示，总体来看，国民经济延续恢复向好态势，但外部环境复杂性、严峻性、不确定性上升，国内有效需求仍显不足，经济持续回升向好的基础还需进一步巩固。',
            '下一步，要继续加大宏观政策调控力度，着力扩大内需，提振市场信心，推动经济实现质的有效提升和量的合理增长。各地区各部门要认真落实中央经济工作会议部署，坚持稳中求进工作总基调，切实保障和改善民生。',
        ],
    ),
    NewsText(
        'gbk', 'GBK', 'zh-Hans',
        '陶喆上海演唱会圆满落幕 朱镕基题词展亮相图书馆',
        ['首页', '娱乐', '文化', '读书', '视频'],
        [
            '本报讯 昨晚，歌手陶喆在上海梅赛德斯奔驰文化中心举行巡回演唱会的第二场演出，现场近一万八千名观众与他一起合唱多首经典歌曲。演出持续了将近三个小时，陶喆多次返场，并在最后向乐迷深深鞠躬致谢。',
            '据主办方介绍，本轮巡演共设二十场，门票在开售后十分钟内即告售罄。不少乐迷从外地专程赶来，有人甚至提前一天在场馆外排队。一位来自杭州的观众说：“我从中学时代就开始听他的歌，今天终于在现场听到了。”',
            '另据报道，由上海图书馆主办的“朱镕基同志题词手迹展”于本周一开幕，展出题词原件及相关照片一百余件。展览将持续至下月底，市民可凭身份证免费预约参观。',
            '图书馆工作人员表示，为方便老年读者，馆方还安排了志愿者提供讲解服务，并在周末增加了参观场次。开幕首日，前来参观的市民络绎不绝，许多家长带着孩子一同前来。',
        ],
    ),
    NewsText(
        'gb18030', 'GB18030', 'zh-Hans',
        '广州南越王博物院推出南汉国专题展',
        ['首页', '新闻', '文博', '旅游', '专题'],
        [
            '本报广州讯 记者今天从南越王博物院获悉，“南汉二陵出土文物特展”将于本月十八日正式对公众开放。展览以南汉开国皇帝刘䶮的康陵和中宗刘晟的昭陵为线索，集中展示近年来考古发掘出土的青瓷、玻璃器和石刻等珍贵文物三百余件。',
            '南汉是五代十国时期以广州为都城的地方政权，存续五十余年。刘䶮在位期间重视海上贸易，广州港一度商船云集，来自波斯和阿拉伯地区的商人在此定居经商。',
            '博物院负责人介绍，此次展出的一批伊斯兰玻璃器是研究古代海上丝绸之路的重要实物资料，其中多件为首次公开亮相。展厅还运用数字技术复原了康陵地宫的原貌，观众可以通过互动屏幕了解墓葬的结构与陪葬品的摆放方式。',
            '据悉，展览期间博物院将推出系列公益讲座和亲子研学活动，门票价格为每人二十元，学生和六十五岁以上老人可享受半价优惠。',
        ],
    ),
    NewsText(
        'big5', 'Big5', 'zh-Hant',
        '政院通過產創條例修正草案 擴大投資抵減',
        ['首頁', '政治', '財經', '國際', '社會', '地方'],
        [
            '中央社記者台北十二日電 行政院今天召開院會，通過經濟部擬具的「產業創新條例」部分條文修正草案，將提高企業投資智慧機械、第五代行動通訊系統及資通安全產品的投資抵減比率。',
            '行政院發言人表示，面對全球供應鏈重組與淨零排放的趨勢，政府希望透過租稅優惠，鼓勵企業加速數位轉型與綠色轉型，強化台灣產業的國際競爭力。',
            '根據草案內容，企業在同一課稅年度內投資於研究發展支出，可在百分之二十五額度內抵減當年度應納營利事業所得稅額。經濟部官員指出，此次修法預計每年可為企業減輕稅負約新台幣一百億元，受惠家數超過三千家。',
            '立法院各黨團對此表示歡迎，但也有立法委員提醒，政府應同時關注中小企業的需求，避免租稅優惠過度集中於大型企業，並應定期檢討政策成效。',
        ],
    ),
    NewsText(
        'shift_jis', 'Shift_JIS', 'ja',
        '都が医療機関への支援策を拡充\u3000病床確保の補助金引き上げ',
        ['トップ', '政治', '経済', '社会', '国際', 'スポーツ'],
        [
            '東京都は十二日、感染症対策として、都内の医療機関に対する支援策を拡充すると発表した。知事は記者会見で「医療現場の負担を少しでも軽減したい」と述べ、病床を確保した病院への補助金を引き上げる方針を示した。',
            '都によると、今月に入ってから入院患者数は増加傾向にあり、特に高齢者の重症化が目立っているという。専門家は、季節の変わり目で人の移動が増えることから、引き続き手洗いや換気などの基本的な対策を徹底するよう呼びかけている。',
            'また、都は来月から、ワクチン接種の予約をスマートフォンで簡単にできる新しいシステムの運用を始める予定だ。担当者は「若い世代にも積極的に接種を受けてもらいたい」と話している。',
            '都内の病院関係者からは、人手不足が深刻で看護師の確保が難しいとの声も上がっており、都は人材派遣会社と連携した支援についても検討を進めている。',
        ],
    ),
    NewsText(
        'euc_jp', 'EUC-JP', 'ja',
        '日銀、マイナス金利政策を解除\u3000十七年ぶりの利上げ',
        ['ホーム', 'ニュース', '経済', 'マーケット', 'テクノロジー'],
        [
            '日本銀行は十九日の金融政策決定会合で、マイナス金利政策の解除を決めた。利上げは十七年ぶりで、大規模な金融緩和策は大きな転換点を迎えた。',
            '植田総裁は会合後の記者会見で、賃金と物価の好循環が強まっていることが確認できたと説明し、「物価安定の目標が持続的、安定的に実現していくことが見通せる状況に至った」と述べた。',
            '一方で、当面は緩和的な金融環境が続くとの見方を示し、急激な利上げには慎重な姿勢を強調した。市場では、追加の利上げの時期をめぐって様々な観測が出ている。',
            '今回の決定を受けて、大手銀行は普通預金の金利を引き上げる方針を相次いで発表した。住宅ローンの変動金利への影響については、今のところ限定的との見方が多いものの、家計の負担が増えることを懸念する声も聞かれる。',
        ],
    ),
    NewsText(
        'euc_kr', 'EUC-KR', 'ko',
        '정부, 내수 활성화 종합 대책 발표',
        ['홈', '정치', '경제', '사회', '국제', '스포츠'],
        [
            '정부는 12일 정부서울청사에서 비상경제장관회의를 열고 내수 활성화를 위한 종합 대책을 발표했다. 기획재정부 장관은 모두발언에서 "최근 물가 상승세가 둔화하고 있지만 고금리 여파로 소비와 투자가 여전히 부진한 상황"이라며 "가용한 정책 수단을 총동원해 민생 경제 회복을 뒷받침하겠다"고 밝혔다.',
            '이번 대책에는 전통시장과 소상공인을 지원하기 위한 소비 쿠폰 발행, 중소기업 정책자금 확대, 관광 산업 활성화 방안 등이 포함됐다.',
            '정부는 특히 지방 관광을 활성화하기 위해 숙박 할인권을 추가로 배포하고, 외국인 관광객을 대상으로 한 비자 발급 절차를 간소화하기로 했다.',
            '전문가들은 단기적인 소비 진작 효과는 있겠지만, 구조적인 내수 부진을 해결하기 위해서는 가계 부채 문제와 일자리 창출에 대한 근본적인 대책이 필요하다고 지적했다.',
        ],
    ),
    NewsText(
        'cp1251', 'windows-1251', 'ru',
        'Правительство утвердило программу поддержки малого бизнеса',
        ['Главная', 'Политика', 'Экономика', 'Общество', 'Спорт'],
        [
            'Москва, 12 марта. Правительство России утвердило новую программу поддержки малого и среднего бизнеса, сообщила пресс-служба кабинета министров. Согласно документу, предприниматели смогут получить льготные кредиты на модернизацию производства и закупку оборудования по ставке не выше семи процентов годовых.',
            'Министр экономического развития отметил, что в этом году на реализацию программы будет направлено более пятидесяти миллиардов рублей. По его словам, особое внимание будет уделено регионам Сибири и Дальнего Востока, где доступ к финансированию для небольших компаний остаётся ограниченным.',
            'Эксперты считают, что меры помогут сохранить рабочие места и поддержать внутренний спрос в условиях высокой инфляции. Однако представители делового сообщества указывают на избыточную бюрократию при оформлении заявок.',
        ],
    ),
    NewsText(
        'koi8_r', 'KOI8-R', 'ru',
        'В Эрмитаже открылась выставка русского ювелирного искусства',
        ['Главная', 'Новости', 'Культура', 'Город', 'Афиша'],
        [
            'Санкт-Петербург. В Государственном Эрмитаже в среду открылась выставка, посвящённая истории русского ювелирного искусства восемнадцатого и девятнадцатого веков. Посетители увидят более четырёхсот предметов, многие из которых ранее хранились в запасниках музея и никогда не показывались публике.',
            'Среди экспонатов - табакерки, часы, ордена и украшения, принадлежавшие членам императорской семьи. Особое место в экспозиции занимают работы мастеров фирмы Фаберже, в том числе знаменитые пасхальные яйца.',
            'По словам директора музея, подготовка выставки заняла почти три года. Реставраторы заново изучили каждый предмет и восстановили утраченные детали. Выставка продлится до конца августа, билеты можно приобрести на сайте музея или в кассах.',
        ],
    ),
    NewsText(
        'cp1256', 'windows-1256', 'ar',
        'وزارة الصحة تطلق حملة وطنية للتطعيم ضد شلل الأطفال',
        ['الرئيسية', 'أخبار', 'اقتصاد', 'رياضة', 'ثقافة'],
        [
            'القاهرة - أعلنت وزارة الصحة المصرية، اليوم الثلاثاء، عن إطلاق حملة وطنية جديدة للتطعيم ضد شلل الأطفال، تستهدف أكثر من أربعة عشر مليون طفل في جميع محافظات الجمهورية.',
            'وقال المتحدث الرسمي باسم الوزارة في بيان صحفي إن الحملة ستستمر لمدة أربعة أيام، وسيشارك فيها آلاف الفرق الطبية التي ستجوب المنازل والمدارس والمراكز الصحية.',
            'وأضاف أن الوزارة وفرت جميع الإمكانيات اللازمة لإنجاح الحملة، داعيا أولياء الأمور إلى التعاون مع الفرق الطبية وتطعيم أطفالهم حتى لو سبق تطعيمهم من قبل.',
            'ويأتي ذلك في إطار جهود الدولة للحفاظ على خلو مصر من مرض شلل الأطفال، بالتعاون مع منظمة الصحة العالمية ومنظمة الأمم المتحدة للطفولة.',
        ],
    ),
    NewsText(
        'utf-8', 'UTF-8', 'mul',
        'World digest: 世界新闻摘要 · Обзор · ملخص',
        ['Home', 'Мир', '世界', 'العالم', 'Ελλάδα'],
        [
            'Athens — Η κυβέρνηση ανακοίνωσε σήμερα νέα μέτρα στήριξης για τα νοικοκυριά, με έμφαση στο κόστος της ενέργειας και στις τιμές των τροφίμων.',
            '北京 — 国务院常务会议今天研究部署进一步优化营商环境的措施，强调要加快建设全国统一大市场，依法平等保护各类经营主体的合法权益。',
            'Москва — Центральный банк сохранил ключевую ставку на прежнем уровне, указав на замедление инфляции и устойчивый рост кредитования.',
            'القاهرة — ارتفعت إيرادات قناة السويس خلال الشهر الماضي بعد عودة حركة الملاحة إلى طبيعتها في البحر الأحمر.',
            'Hà Nội — Chính phủ Việt Nam đặt mục tiêu tăng trưởng kinh tế khoảng sáu phần trăm trong năm nay. 😀',
        ],
    ),
]

OTHER_LEGACY_NEWS = [
    NewsText(
        'cp1250', 'cp1250', 'pl',
        'Sejm przyjął ustawę o ochronie zdrowia',
        [],
        [
            'Warszawa. Sejm przyjął w piątek nowelizację ustawy o świadczeniach opieki zdrowotnej. Za głosowało dwustu osiemdziesięciu posłów, przeciw było stu dwudziestu.',
            'Minister zdrowia podkreślił, że zmiany skrócą kolejki do specjalistów i zwiększą dostępność badań dla pacjentów z mniejszych miejscowości. Ustawa trafi teraz do Senatu.',
        ],
    ),
    NewsText(
        'iso8859_2', 'iso8859_2', 'cs',
        'Vláda schválila rozpočet na příští rok',
        [],
        [
            'Praha. Vláda v pondělí schválila návrh státního rozpočtu na příští rok. Schodek by měl činit dvě stě miliard korun, což je méně než letos.',
            'Ministr financí uvedl, že úspory se dotknou především provozních výdajů úřadů, zatímco investice do dopravní infrastruktury zůstanou zachovány. Návrh nyní posoudí Poslanecká sněmovna.',
        ],
    ),
    NewsText(
        'cp1253', 'cp1253', 'el',
        'Νέα μέτρα στήριξης για τα νοικοκυριά',
        [],
        [
            'Αθήνα. Η κυβέρνηση ανακοίνωσε σήμερα νέα μέτρα στήριξης για τα νοικοκυριά, με έμφαση στο κόστος της ενέργειας και στις τιμές των τροφίμων.',
            'Ο υπουργός Οικονομικών δήλωσε ότι τα μέτρα θα χρηματοδοτηθούν από την υπεραπόδοση των φορολογικών εσόδων και δεν θα επιβαρύνουν τον προϋπολογισμό.',
        ],
    ),
    NewsText(
        'cp1255', 'cp1255', 'he',
        'הממשלה אישרה את תקציב המדינה',
        [],
        [
            'ירושלים. הממשלה אישרה הלילה את הצעת תקציב המדינה לשנה הבאה, לאחר דיון ארוך שנמשך יותר משתים עשרה שעות.',
            'שר האוצר אמר כי התקציב נועד לחזק את הצמיחה ולצמצם את הגירעון, וכי יוקצו משאבים נוספים לחינוך ולבריאות.',
        ],
    ),
    NewsText(
        'cp1254', 'cp1254', 'tr',
        'Merkez Bankası faiz kararını açıkladı',
        [],
        [
            'Ankara. Türkiye Cumhuriyet Merkez Bankası, politika faizini yüzde elli seviyesinde sabit tuttuğunu açıkladı. Karar piyasa beklentileriyle uyumlu oldu.',
            'Banka yaptığı açıklamada, enflasyondaki düşüş eğiliminin sürdüğünü ancak sıkı para politikasının bir süre daha devam edeceğini belirtti.',
        ],
    ),
    NewsText(
        'cp1252', 'cp1252', 'fr',
        'Le gouvernement présente son budget',
        [],
        [
            "Paris. Le gouvernement a présenté mercredi son projet de budget pour l'année prochaine, qui prévoit une réduction du déficit public à quatre pour cent du produit intérieur brut.",
            "Le ministre de l'Économie a souligné que les économies porteraient principalement sur les dépenses de fonctionnement de l'État, tandis que les crédits consacrés à l'éducation seraient préservés.",
        ],
    ),
    NewsText(
        'cp874', 'cp874', 'th',
        'รัฐบาลอนุมัติงบประมาณประจำปี',
        [],
        [
            'กรุงเทพฯ คณะรัฐมนตรีมีมติอนุมัติร่างพระราชบัญญัติงบประมาณรายจ่ายประจำปี โดยมีวงเงินรวมกว่าสามล้านล้านบาท',
            'โฆษกรัฐบาลกล่าวว่างบประมาณดังกล่าวจะเน้นการลงทุนด้านโครงสร้างพื้นฐานและการพัฒนาคุณภาพการศึกษา',
        ],
    ),
    NewsText(
        'cp1251', 'cp1251', 'uk',
        'Уряд ухвалив програму відновлення',
        [],
        [
            'Київ. Кабінет міністрів України ухвалив державну програму відновлення зруйнованої інфраструктури. На її реалізацію цього року спрямують понад сто мільярдів гривень.',
            "Прем'єр-міністр зазначив, що першочергову увагу буде приділено відбудові шкіл, лікарень та систем теплопостачання в прифронтових областях.",
        ],
    ),
    NewsText(
        'cp1257', 'cp1257', 'lt',
        'Vyriausybė pritarė biudžeto projektui',
        [],
        [
            'Vilnius. Vyriausybė trečiadienį pritarė kitų metų valstybės biudžeto projektui. Numatoma, kad šalies ūkis augs beveik trimis procentais.',
            'Finansų ministrė teigė, kad didžiausias dėmesys bus skiriamas krašto apsaugai, švietimui ir sveikatos priežiūrai.',
        ],
    ),
]

# Ways authors declare a charset in the page, cycled through the texts.
META_DECLARATIONS = [
    '<meta charset="{label}">',
    '<meta http-equiv="Content-Type" content="text/html; charset={label}">',
    "<META HTTP-EQUIV=content-type CONTENT='text/html;charset={label}'>",
    '<!-- <meta charset="iso-8859-1"> is the old template --><meta charset={label}>',
    # After a long inline script, as many real heads have it.
    "<script>var config = {{" + "'slot': 'top', " * 150 + "}};</script>\n<meta charset='{label}'>",
]


def news_page(text: NewsText, declaration: str = "") -> str:
    navigation = "".join(
        f'<li class="nav-item"><a href="/section/{number}/">{html.escape(item)}</a></li>\n'
        for number, item in enumerate(text.navigation)
    )
    paragraphs = "\n".join(f"<p>{html.escape(p, quote=False)}</p>" for p in text.paragraphs)
    return f"""<!DOCTYPE html>
<html lang="{text.language}">
<head>
{declaration}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(text.title)}</title>
<link rel="stylesheet" href="/static/css/main.css?v=20240312">
<script type="text/javascript">
window.dataLayer = window.dataLayer || [];
function gtag(){{dataLayer.push(arguments);}}
gtag('js', new Date()); gtag('config', 'UA-1234567-1');
</script>
</head>
<body class="article-page">
<header id="site-header"><a href="/"><img src="/static/logo.png" alt="logo"></a>
<nav class="main-nav"><ul>
{navigation}</ul></nav></header>
<main><article>
<h1 class="headline">{html.escape(text.title)}</h1>
<div class="byline"><span class="date">2024-03-12 08:30</span></div>
<div class="article-body">
{paragraphs}
</div></article></main>
<footer><p>Copyright &copy; 2024 News Group. All rights reserved.</p>
<a href="/about">About</a> | <a href="/contact">Contact</a></footer>
</body>
</html>
"""


def declared_page(text: NewsText, mode: str) -> tuple[str, bytes, str]:
    """(page text, body bytes, Content-Type) for a declaration mode."""
    declaration = ""
    if mode == "meta":
        form = META_DECLARATIONS[NEWS.index(text) % len(META_DECLARATIONS)]
        declaration = form.format(label=text.label)
    page = news_page(text, declaration)
    content_type = f"text/html; charset={text.label}" if mode == "header" else "text/html"
    return page, page.encode(text.codec), content_type


def by_label(text: NewsText) -> str:
    return text.label


def news(label: str) -> NewsText:
    return next(text for text in NEWS if text.label == label)


def test_every_text_is_long_and_really_in_its_charset():
    for text in NEWS + OTHER_LEGACY_NEWS:
        body_text = "".join(text.paragraphs)
        assert len(body_text) >= (300 if text in NEWS else 180), text.label
        assert "".join([text.title, *text.navigation, body_text]).encode(text.codec)
    # The GBK text needs GBK (陶喆, 朱镕基), the GB18030 text needs GB18030 (刘䶮).
    gbk, gb18030 = news("GBK"), news("GB18030")
    with pytest.raises(UnicodeEncodeError):
        "".join(gbk.paragraphs).encode("gb2312")
    with pytest.raises(UnicodeEncodeError):
        "".join(gb18030.paragraphs).encode("gbk")


@pytest.mark.parametrize("mode", ["header", "meta", "undeclared"])
@pytest.mark.parametrize("text", NEWS, ids=by_label)
def test_recorded_encoding_decodes_the_page_exactly(text, mode):
    page, body, content_type = declared_page(text, mode)
    if mode == "meta":
        assert meta_charset_label(body[:4096]) == text.label.lower()
    else:
        assert meta_charset_label(body[:4096]) is None
    encoding = detect_encoding(body, content_type)
    assert codecs.lookup(encoding)  # a codec Python has
    assert decode_body(body, encoding) == page


@pytest.mark.parametrize("text", OTHER_LEGACY_NEWS, ids=by_label)
def test_undeclared_pages_in_other_legacy_charsets(text):
    # Detection must not pull pages of other languages into the eleven.
    page = news_page(text)
    body = page.encode(text.codec)
    assert decode_body(body, detect_encoding(body, "text/html")) == page


def test_declared_labels_map_to_superset_codecs():
    expected = {
        "GB2312": "gb18030", "GBK": "gb18030", "x-gbk": "gb18030", "GB18030": "gb18030",
        "Big5": "big5hkscs", "big5-hkscs": "big5hkscs", "Shift_JIS": "cp932",
        "sjis": "cp932", "windows-31j": "cp932", "EUC-JP": "euc_jp", "EUC-KR": "cp949",
        "ks_c_5601-1987": "cp949", "windows-1251": "cp1251", "KOI8-R": "koi8-r",
        "windows-1256": "cp1256", "UTF-8": "utf-8", "utf8": "utf-8",
        "ISO-8859-1": "cp1252", "latin1": "cp1252", "US-ASCII": "cp1252",
        "iso-8859-9": "cp1254", "tis-620": "cp874", "utf-16": "utf-16-le",
        " \"UTF-8\" ": "utf-8", "cp936": "gb18030", "euc_kr": "cp949",
    }
    for label, codec in expected.items():
        assert codec_for_label(label) == codec, label


def test_labels_without_a_safe_decoder_are_unknown():
    for label in ("x-no-such-charset", "", None, "utf-7", "hz-gb-2312", "iso-2022-kr",
                  "replacement", "x-user-defined", "base64", "rot13", "hex", "unicode_escape"):
        assert codec_for_label(label) is None, label


def test_content_type_charset_parameter():
    assert charset_from_content_type('text/html; charset="UTF-8"') == "UTF-8"
    assert charset_from_content_type("text/html;charset=gbk") == "gbk"
    assert charset_from_content_type("text/html; Charset = big5 ; q=1") == "big5"
    assert charset_from_content_type("text/html; charset='koi8-r'") == "koi8-r"
    assert charset_from_content_type("text/html") is None
    assert charset_from_content_type("text/html; charset=") is None
    assert charset_from_content_type(None) is None


def test_header_wins_over_meta():
    russian = news("KOI8-R")
    page = news_page(russian, '<meta charset="windows-1251">')
    body = page.encode("koi8-r")
    assert detect_encoding(body, "text/html; charset=KOI8-R") == "koi8-r"


def test_a_legacy_meta_on_utf8_bytes_gives_utf8():
    # A template's <meta> left over on a page saved as UTF-8.
    chinese = news("GB2312")
    page = news_page(chinese, '<meta charset="gb2312">')
    body = page.encode("utf-8")
    assert meta_charset_label(body[:4096]) == "gb2312"
    assert detect_encoding(body, "text/html") == "utf-8"
    assert decode_body(body, detect_encoding(body, "text/html")) == page
    russian = news("windows-1251")
    page = news_page(russian, '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">')
    body = page.encode("utf-8")
    assert detect_encoding(body, None) == "utf-8"
    assert decode_body(body, "utf-8") == page
    # So does an XML declaration.
    xhtml = '<?xml version="1.0" encoding="windows-1251"?>\n' + page
    assert detect_encoding(xhtml.encode("utf-8"), "application/xhtml+xml") == "utf-8"


def test_a_legacy_meta_on_its_own_bytes_is_obeyed():
    chinese = news("GB2312")
    page = news_page(chinese, '<meta charset="gb2312">')
    body = page.encode("gb2312")
    assert detect_encoding(body, "text/html") == "gb18030"
    assert decode_body(body, "gb18030") == page
    russian = news("windows-1251")
    body = news_page(russian, '<meta charset="windows-1251">').encode("cp1251")
    assert detect_encoding(body, None) == "cp1251"
    # An ASCII page is valid UTF-8 too, but has nothing to say against its meta.
    ascii_page = b'<html><head><meta charset="windows-1251"></head><body>plain</body></html>'
    assert detect_encoding(ascii_page, None) == "cp1251"


def test_the_http_header_is_obeyed_even_on_utf8_bytes():
    # The server said so, and browsers obey it: the header is not second-guessed.
    chinese = news("GB2312")
    body = news_page(chinese, '<meta charset="gb2312">').encode("utf-8")
    assert detect_encoding(body, "text/html; charset=gb2312") == "gb18030"
    assert detect_encoding(body, "text/html; charset=windows-1251") == "cp1251"


def test_utf8_validity_is_checked_over_the_whole_body():
    chinese = news("GB2312")
    page = news_page(chinese, '<meta charset="gb2312">')
    body = page.encode("utf-8")
    # Cut inside the last character, as at max_page_bytes: still UTF-8.
    last = page.rindex("。")
    cut = page[: last + 1].encode("utf-8")[:-1]
    assert cut.decode("utf-8", errors="ignore") == page[:last]
    assert detect_encoding(cut, "text/html") == "utf-8"
    # UTF-8 at first, but GB bytes further on (beyond any prefix a check
    # might stop at): the declaration stands.
    mixed = body + ("<p>" + chinese.paragraphs[0] * 50 + "</p>").encode("gb2312")
    assert detect_encoding(mixed, "text/html") == "gb18030"
    # A stray invalid byte in the middle, not at the end, is not a cut.
    broken = body[: len(body) // 2] + b"\xff" + body[len(body) // 2 :]
    assert detect_encoding(broken, "text/html") == "gb18030"


def test_byte_order_mark_wins_and_is_stripped():
    text = news("UTF-8")
    page = news_page(text)
    body = codecs.BOM_UTF8 + page.encode("utf-8")
    # The server's label is wrong; browsers follow the BOM.
    assert detect_encoding(body, "text/html; charset=windows-1252") == "utf-8"
    assert decode_body(body, "utf-8") == page
    utf16 = codecs.BOM_UTF16_LE + page.encode("utf-16-le")
    assert detect_encoding(utf16, "text/html") == "utf-16-le"
    assert decode_body(utf16, "utf-16-le") == page
    utf16be = codecs.BOM_UTF16_BE + page.encode("utf-16-be")
    assert decode_body(utf16be, detect_encoding(utf16be, None)) == page


def test_unknown_labels_fall_through_to_the_next_step():
    chinese = news("GBK")
    page = news_page(chinese, '<meta charset="gbk">')
    body = page.encode("gbk")
    assert detect_encoding(body, "text/html; charset=x-no-such-charset") == "gb18030"
    russian = news("KOI8-R")
    page = news_page(russian, '<meta charset="x-bogus-8">')
    body = page.encode("koi8-r")
    assert detect_encoding(body, "text/html; charset=utf-7") == "koi8-r"
    # A UTF-16 label on a body without a single NUL byte is a misconfiguration.
    assert detect_encoding(body, "text/html; charset=utf-16") == "koi8-r"


def test_meta_prescan_follows_the_standard():
    koi8 = "koi8-r"
    assert meta_charset_label(b'<!-- <meta charset="windows-1251"> --><meta charset="koi8-r">') == koi8
    assert meta_charset_label(b"<div title='<meta charset=windows-1251>'></div><meta charset=koi8-r>") == koi8
    # content=...charset without http-equiv=content-type is not a declaration
    assert meta_charset_label(b'<meta content="text/html; charset=windows-1251"><meta charset="koi8-r">') == koi8
    assert meta_charset_label(b'<meta name="x" content="charset=gbk">') is None
    # A UTF-16 label in a prescannable (ASCII-compatible) page means UTF-8.
    assert meta_charset_label(b'<meta charset="utf-16le">') == "utf-8"
    assert meta_charset_label(b'<meta http-equiv="content-type" content=\'text/html; charset="big5"\'>') == "big5"
    assert meta_charset_label(b"<meta\tcharset=EUC-JP >") == "euc-jp"
    # An unquoted value runs to whitespace or ">", so "/" is part of it.
    assert meta_charset_label(b"<meta charset=EUC-JP/>") == "euc-jp/"
    assert meta_charset_label(b"<metadata charset=gbk>") is None
    assert meta_charset_label(b"") is None
    assert meta_charset_label(b"<meta charset=") is None


def test_meta_beyond_the_prescan_window_is_ignored():
    russian = news("KOI8-R")
    filler = "<!-- " + "x" * 5000 + " -->"
    page = news_page(russian).replace("<body", filler + '<meta charset="windows-1251"><body', 1)
    body = page.encode("koi8-r")
    assert detect_encoding(body, "text/html") == "koi8-r"


def test_siblings_decode_what_browsers_decode():
    # NEC row 13 (circled digits) is in browsers' EUC-JP, not in Python's euc_jp.
    japanese = news("EUC-JP")
    page = news_page(japanese).replace("<p>", "<p>①②③ ", 1)
    body = page.encode("euc_jis_2004")
    encoding = detect_encoding(body, "text/html; charset=EUC-JP")
    assert decode_body(body, encoding) == page
    assert detect_encoding(body, "text/html") == encoding
    # The euro sign of Microsoft's Big5.
    chinese = news("Big5")
    page = news_page(chinese).replace("<p>", "<p>售價€100 ", 1)
    body = page.encode("cp950")
    assert decode_body(body, detect_encoding(body, "text/html; charset=big5")) == page


def test_cut_body_is_still_detected():
    for text in NEWS:
        body = news_page(text).encode(text.codec)
        middle = body.index(text.paragraphs[1].encode(text.codec)) + 7
        cut = body[:middle]
        encoding = detect_encoding(cut, "text/html")
        decoded = decode_body(cut, encoding)
        assert decoded.count("\ufffd") <= 1, text.label
        assert text.paragraphs[0] in decoded, text.label


def test_ascii_page_defaults_to_utf8():
    assert detect_encoding(b"<html><body><p>plain</p></body></html>", "text/html") == "utf-8"
    assert detect_encoding(b"", None) == "utf-8"


def test_decode_page_uses_the_recorded_encoding():
    text = news("EUC-KR")
    page = news_page(text)
    doc = new_doc("http://127.0.0.1/kr", 0)
    doc["body"] = encode_body(page.encode("euc-kr"))
    doc["content_type"] = "text/html"
    doc["encoding"] = "cp949"
    assert decode_page(doc) == page
    doc["encoding"] = None  # unknown: detected from the bytes
    assert decode_page(doc) == page
    doc["encoding"] = "EUC-KR"  # a WHATWG label is accepted too
    assert decode_page(doc) == page
    assert decode_body(b"caf\xc3\xa9", "x-no-such-codec") == "café"
    assert decode_body(b"caf\xff", "utf-8") == "caf\ufffd"


def test_undeclared_detection_is_fast():
    bodies = [news_page(text).encode(text.codec) for text in NEWS]
    started = time.perf_counter()
    for _ in range(5):
        for body in bodies:
            detect_encoding(body, "text/html")
    per_page = (time.perf_counter() - started) / (5 * len(bodies))
    assert per_page < 0.05, f"{per_page * 1000:.1f} ms per undeclared page"
