"""The main-text benchmark corpus: news article pages with known main text.

Each page imitates a real news site in one of five languages (Chinese,
Japanese, Arabic, Russian, English) and one of nine site layouts:

- `semantic`: HTML5 landmarks (header, nav, article, aside, footer).
- `wordpress`: a blog theme's named divs (entry-content, jp-relatedposts,
  comment-list), some of whose names no keyword list would catch.
- `hashed`: CSS-modules class names ("sc-k3x9qa") and no landmark elements,
  as single-page-app news sites render: only the structure tells.
- `table`: a table layout of the portal era, paragraphs split by <br><br>
  rather than <p>, font tags, comments in table rows.
- `portal`: a Chinese or Japanese style portal: many ranked link lists,
  abbreviated names (cmt, crumbs, foot), an editor line under the article.
- `components`: every paragraph in its own two wrappers, a teaser with a
  prose excerpt between them, as component-based news sites render.
- `flat`: a small site's flat page: headline, article, tags and reader
  comments all paragraphs of one container.
- `embeds`: an article with a photo caption and credit, an inline "read
  also" box with a teaser, and a subscription line at its end.
- `amp`: an AMP page: custom elements (amp-sidebar, amp-consent, amp-ad
  with a fallback label, amp-accordion holding the comments).

Around the article every page has what real ones have: menus, breadcrumbs,
share buttons, a cookie banner, inline scripts and styles, JSON-LD, ads
(some between paragraphs), "read also" links inside the body, related
articles (some with prose excerpts), reader comments written as prose,
newsletter boxes and footers with legal prose.  The ground truth is the
article's paragraphs and subheadings, in order: not the headline (the XML
carries it apart), byline, captions, tags, comments or anything else.

Everything is generated from fixed seeds: the same corpus every run.
"""
from __future__ import annotations

import html
import json
import random
from dataclasses import dataclass, field

from mrcrawl.testweb import texts


@dataclass(frozen=True)
class Article:
    language: str
    title: str
    paragraphs: tuple[str, ...]
    # Subheadings, by the index of the paragraph they stand before.
    subheadings: dict[int, str] = field(default_factory=dict)

    @property
    def main_text(self) -> tuple[str, ...]:
        """The ground truth: subheadings and paragraphs in reading order."""
        blocks = []
        for number, paragraph in enumerate(self.paragraphs):
            if number in self.subheadings:
                blocks.append(self.subheadings[number])
            blocks.append(paragraph)
        return tuple(blocks)


@dataclass(frozen=True)
class Chrome:
    """A site's recurring text around the article, in one language."""

    site: str
    navigation: tuple[str, ...]
    home: str
    section: str
    byline: str  # format with author and date
    authors: tuple[str, ...]
    share: tuple[str, ...]  # the first is the box's label
    cookie: tuple[str, str]  # banner text, button
    newsletter: tuple[str, str]  # prompt, button
    advert: str
    read_also: str
    related: str
    most_read: str
    headlines: tuple[str, ...]  # other stories, for related and most-read lists
    comments_heading: str
    comments: tuple[tuple[str, str], ...]  # reader name, comment
    reply: str
    tags: tuple[str, ...]  # the first is the label
    footer_links: tuple[str, ...]
    copyright: str
    disclaimer: str
    editor: str  # format with a name; the editor line under Chinese/Japanese articles
    date: str
    iso_date: str


def _article(language: str, text: texts.Text) -> Article:
    return Article(language, text.title, text.paragraphs)


ARTICLES: dict[str, tuple[Article, ...]] = {
    "en": (
        Article("en", "Harbour town votes to restore its Victorian pier", (
            "Councillors in Eastholme voted on Tuesday night to spend £4.2 million restoring the town's "
            "Victorian pier, which has been closed to the public since a storm tore away part of its deck in 2019.",
            "The decision, passed by 31 votes to 9, ends a five-year argument over whether the 140-year-old "
            "structure should be repaired or demolished. Engineers will begin replacing the rusted iron supports "
            "in the spring, and the council hopes to reopen the first section by the summer of 2026.",
            "Local residents have campaigned for the restoration since the pier closed. A petition organised by "
            "the Friends of Eastholme Pier gathered more than 12,000 signatures, and volunteers have raised "
            "£350,000 through concerts, raffles and a sponsored swim across the bay.",
            "\u201cThis is the happiest day I have had in years,\u201d said Helen Marsh, who chairs the group. "
            "\u201cThe pier is where people in this town learned to fish, had their first date and scattered their "
            "parents' ashes. It is part of who we are.\u201d",
            "Not everyone was convinced. Councillor David Rowe, who voted against the plan, said the money would "
            "be better spent on flood defences along the seafront. The council says the pier work will be paid "
            "for largely by a national heritage grant and will not affect other budgets.",
        ), {2: "A long campaign"}),
        Article("en", "Rail strike called off after overnight talks", (
            "A rail strike that would have halted most trains across the region this weekend has been called off "
            "after union leaders and the operator reached an agreement in the early hours of Thursday.",
            "The deal gives drivers and conductors a pay rise of 5.5 per cent this year and a guarantee that no "
            "ticket offices will close before the end of 2025. Union members will vote on the offer over the "
            "next three weeks.",
            "Passengers had been warned to expect almost no services on Saturday and Sunday, when thousands of "
            "fans were due to travel to the cup final. The operator said all trains would now run to the normal "
            "timetable, although engineering works near the central station will still cause some delays.",
            "\u201cNobody wanted a strike, least of all our members,\u201d a union spokesperson said. \u201cWe are "
            "pleased that the company finally listened.\u201d The company said it was grateful for the "
            "constructive talks and apologised to customers for the uncertainty.",
        )),
        Article("en", "Scientists map the seabed of a remote Arctic fjord", (
            "A team of marine scientists has produced the most detailed map yet of the seabed of Kongsfjorden, a "
            "remote Arctic fjord where glaciers are retreating faster than almost anywhere else on Earth.",
            "Working from a small research vessel over six weeks last summer, the team used sonar to measure the "
            "depth of the water every few metres, revealing underwater ridges, channels carved by meltwater and "
            "the scars left by icebergs dragging along the bottom.",
            "The map shows that one of the glaciers feeding the fjord has pulled back by almost two kilometres "
            "since the last survey in 2005. Where the ice once stood, the researchers found fresh mud and the "
            "first signs of animals settling on the newly exposed seabed.",
            "The data will be made freely available to other researchers, who hope to use it to predict how the "
            "fjord's currents and wildlife will change as the ice continues to melt.",
            "\u201cA good map is the starting point for everything else,\u201d said the expedition's leader, "
            "Dr Ingrid Solberg. \u201cYou cannot understand how a place is changing if you do not know what it "
            "looks like in the first place.\u201d",
        ), {3: "What comes next"}),
        Article("en", "Storm closes mountain pass for second day", (
            "The main road over the Hallow Pass will remain closed for a second day on Friday after heavy snow "
            "and winds of up to 80 miles an hour brought down trees and power lines.",
            "Highway officials said snow ploughs would not be sent up until the wind had dropped. Drivers heading "
            "north are being diverted through the valley road, which adds about an hour to the journey.",
        )),
    ),
    "zh": (
        _article("zh", texts.SIMPLIFIED_CHINESE),
        _article("zh", texts.GBK_CHINESE),
        _article("zh", texts.GB18030_CHINESE),
        _article("zh", texts.TRADITIONAL_CHINESE),
        Article("zh", "地铁三号线延长线年底前通车", (
            "记者从市轨道交通集团获悉，地铁三号线延长线目前已经完成全部土建工程，正在进行设备安装和系统调试，"
            "预计今年年底前正式通车运营。",
            "延长线全长十二公里，共设八座车站，建成后将把城市北部的几个大型居住区与市中心连接起来。据测算，"
            "沿线居民前往市中心的通勤时间将缩短二十分钟左右。",
        )),
    ),
    "ja": (
        _article("ja", texts.JAPANESE_SHIFT_JIS),
        _article("ja", texts.JAPANESE_EUC_JP),
        Article("ja", "商店街の空き店舗に子ども食堂", (
            "市の中心部にある古い商店街で、空き店舗を改装した子ども食堂が今月オープンしました。毎週水曜日と"
            "土曜日の夕方に、地域の子どもたちに温かい食事を無料で提供しています。",
            "食堂を運営するのは、商店街の店主や近所に住む主婦など二十人ほどのボランティアです。初日には"
            "六十人以上の子どもと保護者が訪れ、カレーライスやサラダを味わいました。",
            "食材の多くは、商店街の八百屋や精肉店、近くの農家から寄付されています。代表の田中さんは、"
            "子どもたちが安心して過ごせる場所をつくることで、商店街にもう一度にぎわいを取り戻したいと"
            "話しています。",
            "市によりますと、市内の子ども食堂はこの五年間で三倍に増えましたが、ボランティアの高齢化や"
            "運営資金の確保が課題になっているということです。",
        ), {2: "地域の支えで運営"}),
        Article("ja", "高速道路で大規模な渋滞、帰省ラッシュ始まる", (
            "お盆休みを前に帰省ラッシュが始まり、各地の高速道路では朝から大規模な渋滞が発生しています。",
            "日本道路交通情報センターによりますと、午前十時の時点で下り線の渋滞は最大で四十キロに達しました。"
            "渋滞は明日の午前中まで続く見込みで、時間に余裕を持って出かけるよう呼びかけています。",
        )),
    ),
    "ru": (
        _article("ru", texts.RUSSIAN_NEWS),
        _article("ru", texts.RUSSIAN_WEATHER),
        Article("ru", "В городе запустят электробусы на пяти маршрутах", (
            "С первого сентября на пяти городских маршрутах вместо старых автобусов начнут работать электробусы. "
            "Об этом сообщили в департаменте транспорта на пресс-конференции в понедельник.",
            "Всего город получит сорок новых машин. Каждая из них вмещает до девяноста пассажиров, оборудована "
            "кондиционером, разъёмами для зарядки телефонов и низким полом, удобным для пассажиров с колясками.",
            "Для зарядки электробусов на конечных остановках построят двенадцать специальных станций. Полная "
            "зарядка займёт около пятнадцати минут, а запаса хода хватит, чтобы проехать весь маршрут несколько раз.",
            "По словам руководителя департамента, переход на электрический транспорт позволит сократить выбросы "
            "вредных веществ в центре города почти на треть. Кроме того, новые машины работают значительно тише "
            "дизельных автобусов.",
            "Стоимость проезда в электробусах не изменится. Оплатить поездку можно будет транспортной картой, "
            "банковской картой или с помощью смартфона.",
        ), {2: "Где будут заряжать"}),
        Article("ru", "На трассе М-10 ограничат движение из-за ремонта", (
            "С понедельника на участке трассы М-10 между двумя съездами начнётся ремонт дорожного покрытия. "
            "Движение будет ограничено по одной полосе в каждом направлении.",
            "Работы планируется завершить до конца месяца. Водителей просят заранее планировать поездки и по "
            "возможности пользоваться объездными дорогами.",
        )),
    ),
    "ar": (
        _article("ar", texts.ARABIC),
        Article("ar", "افتتاح محطة جديدة لتحلية مياه البحر على الساحل الشمالي", (
            "افتتحت وزارة المياه يوم الأحد محطة جديدة لتحلية مياه البحر على الساحل الشمالي، بطاقة إنتاجية تصل "
            "إلى مئتي ألف متر مكعب يوميا، وهو ما يكفي لتلبية احتياجات نحو نصف مليون نسمة.",
            "وقال وزير المياه خلال حفل الافتتاح إن المحطة تعمل جزئيا بالطاقة الشمسية، مما يخفض تكاليف التشغيل "
            "ويقلل الانبعاثات الضارة بالبيئة. وأضاف أن الوزارة تخطط لبناء محطتين مماثلتين خلال السنوات الخمس المقبلة.",
            "ويعاني عدد من المدن الساحلية من نقص متكرر في المياه خلال أشهر الصيف، بسبب ارتفاع درجات الحرارة "
            "وزيادة الاستهلاك. ويأمل السكان أن تنهي المحطة الجديدة الانقطاعات التي كانت تستمر أحيانا لعدة أيام.",
            "وأشار خبراء إلى أن تحلية المياه أصبحت خيارا ضروريا في المنطقة، لكنهم دعوا في الوقت نفسه إلى ترشيد "
            "الاستهلاك وإصلاح شبكات التوزيع القديمة التي يضيع فيها جزء كبير من المياه.",
        )),
        Article("ar", "فريق المدينة يتأهل إلى نهائي كأس البطولة", (
            "تأهل فريق المدينة إلى المباراة النهائية لكأس البطولة بعد فوزه مساء أمس على منافسه بهدفين مقابل هدف "
            "واحد، في مباراة مثيرة شهدها أكثر من ثلاثين ألف متفرج.",
            "وسجل مهاجم الفريق الهدف الأول في الدقيقة العشرين من ركلة جزاء، قبل أن يتعادل الفريق المنافس في "
            "بداية الشوط الثاني. وفي الدقائق الأخيرة أحرز لاعب الوسط الشاب هدف الفوز بتسديدة قوية من خارج منطقة الجزاء.",
            "وقال مدرب الفريق بعد المباراة إن لاعبيه قدموا أداء رائعا رغم الإصابات، مؤكدا أن الفريق سيبدأ "
            "التحضير للمباراة النهائية منذ صباح الغد. ومن المقرر أن تقام المباراة النهائية في العاصمة بعد أسبوعين.",
        ), {2: "استعدادات للمباراة النهائية"}),
        Article("ar", "إغلاق الطريق الساحلي مؤقتا بسبب الأمطار", (
            "أعلنت إدارة المرور إغلاق الطريق الساحلي مؤقتا أمام حركة السيارات بسبب الأمطار الغزيرة وتجمع المياه "
            "في عدة مواقع.",
            "ودعت الإدارة السائقين إلى استخدام الطرق البديلة وتجنب الخروج إلا للضرورة، مشيرة إلى أن فرق الصيانة "
            "تعمل على فتح الطريق في أقرب وقت ممكن.",
        )),
    ),
}

CHROME: dict[str, Chrome] = {
    "en": Chrome(
        site="The Northern Courier",
        navigation=("Home", "News", "Politics", "Business", "Science", "Sport", "Culture", "Opinion", "Travel", "Weather"),
        home="Home", section="News",
        byline="By {author} | Published {date}",
        authors=("Sarah Collins", "Tom Akers", "Priya Nair"),
        share=("Share this article", "Facebook", "X", "WhatsApp", "LinkedIn", "Email", "Copy link"),
        cookie=("We use cookies to personalise content and ads, to provide social media features and to analyse "
                "our traffic. You can change your choices at any time in your privacy settings.", "Accept all"),
        newsletter=("Get the morning briefing: the day's most important stories, delivered to your inbox every "
                    "weekday at 7am.", "Sign up"),
        advert="Advertisement", read_also="Read more:", related="Related stories", most_read="Most read",
        headlines=("Council approves budget for new library wing", "Ferry timetable changes from Monday",
                   "Local bakery wins national bread award", "Police appeal for witnesses after bridge collision",
                   "University opens new marine research centre", "Five walks to try this autumn",
                   "House prices rise for third month in a row", "Schools to get new air filters before winter"),
        comments_heading="Comments",
        comments=(
            ("harbourwatcher", "About time something was done. I have been reading about this for years and "
                               "nothing ever seemed to change."),
            ("J. Patel", "I hope they have actually budgeted for the long term this time, otherwise we will be "
                         "having the same conversation again in a decade."),
            ("seasider77", "Good news, but who is paying for it? Council tax went up again this year and the "
                           "roads are still full of potholes."),
            ("Margaret O.", "Does anyone know where the public meeting will be held? The article does not say."),
            ("northern_light", "Excellent reporting as always. Thank you for following this story so closely."),
            ("Rob", "Another week, another announcement. I will believe it when I see it."),
        ),
        reply="Reply",
        tags=("Topics:", "Local news", "Transport", "Environment"),
        footer_links=("About us", "Contact", "Careers", "Advertise", "Privacy policy", "Cookie settings", "Terms of use"),
        copyright="© 2024 The Northern Courier Ltd. All rights reserved.",
        disclaimer="The Northern Courier is regulated by the Independent Press Standards Organisation. "
                   "Reproduction of any material without written permission is prohibited.",
        editor="Edited by {name}",
        date="12 March 2024, 08:30", iso_date="2024-03-12T08:30:00+00:00",
    ),
    "zh": Chrome(
        site="东方晨报",
        navigation=("首页", "新闻", "国内", "国际", "财经", "科技", "体育", "娱乐", "汽车", "房产", "教育", "健康"),
        home="首页", section="新闻中心",
        byline="来源：东方晨报　作者：{author}　{date}",
        authors=("王磊", "陈静", "刘洋"),
        share=("分享到：", "微信", "微博", "QQ空间", "复制链接"),
        cookie=("本网站使用cookie以提升您的浏览体验。继续浏览即表示您同意我们使用cookie。", "同意"),
        newsletter=("订阅东方晨报早间新闻，每天七点准时送达您的邮箱。", "订阅"),
        advert="广告", read_also="延伸阅读：", related="相关新闻", most_read="热点排行",
        headlines=("本市新增三条公交线路 方便郊区居民出行", "气象台发布大风蓝色预警 市民出行注意安全",
                   "多所中小学启动课后服务试点", "老旧小区改造工程全面开工", "全市首个智慧停车场投入使用",
                   "春季招聘会提供岗位超过两万个", "博物馆推出夜间开放活动", "新能源汽车销量同比增长三成"),
        comments_heading="网友评论",
        comments=(
            ("北京网友", "这是好事啊，希望能真正落到实处，别只是说说而已。"),
            ("上海市民小李", "支持！我们小区附近也需要这样的设施，每次都要跑很远。希望有关部门能够听听老百姓的意见，"
                           "多做一些实实在在的事情。"),
            ("匿名用户", "说得容易，做起来难。去年也说过类似的话，结果到现在还没有动静。"),
            ("江南老张", "点赞！记者辛苦了，报道很详细。"),
            ("网友8823", "请问具体什么时候开始实施？文章里好像没有写清楚。"),
        ),
        reply="回复",
        tags=("关键词：", "民生", "城市", "服务"),
        footer_links=("关于我们", "联系我们", "广告服务", "招聘信息", "网站地图", "隐私政策"),
        copyright="Copyright © 2024 东方晨报社 版权所有",
        disclaimer="未经授权禁止转载、摘编、复制或建立镜像。违法和不良信息举报电话：010-12345678",
        editor="责任编辑：{name}",
        date="2024年03月12日 08:30", iso_date="2024-03-12T08:30:00+08:00",
    ),
    "ja": Chrome(
        site="みなと新聞",
        navigation=("トップ", "国内", "国際", "経済", "政治", "社会", "スポーツ", "文化", "科学", "天気"),
        home="トップ", section="社会",
        byline="{date}　{author}記者",
        authors=("山田太郎", "佐藤花子", "鈴木一郎"),
        share=("この記事をシェア", "X", "Facebook", "LINE", "はてなブックマーク"),
        cookie=("当サイトでは、利便性の向上とアクセス解析のためにクッキーを使用しています。サイトを閲覧し続ける"
                "ことで、クッキーの使用に同意したものとみなします。", "同意する"),
        newsletter=("ニュースレターに登録すると、毎朝七時に主要ニュースをメールでお届けします。", "登録する"),
        advert="広告", read_also="あわせて読みたい：", related="関連記事", most_read="アクセスランキング",
        headlines=("駅前再開発、来年春に着工へ", "市内の小中学校で給食費を無償化", "台風接近、週末は大雨に警戒",
                   "老舗旅館が百周年の記念行事", "新しい市民病院が開院", "高校野球、地元校が初の決勝進出",
                   "図書館で夜間の読書会を開催", "商店街に若者向けの新店舗が続々"),
        comments_heading="コメント",
        comments=(
            ("匿名", "とても良い取り組みだと思います。ほかの地域でもぜひ参考にしてほしいです。"),
            ("たかし", "子どもの頃によく行っていた場所なので、懐かしく読みました。今度家族で行ってみようと思います。"),
            ("地元民", "観光客が増えるのはうれしいですが、駐車場やごみの問題もしっかり考えてほしいところです。"),
            ("ゆき", "記事を読んで初めて知りました。もっと宣伝したほうがいいと思います。"),
            ("通りすがり", "税金の使い道としてどうなのか、もう少し詳しい説明がほしいですね。"),
        ),
        reply="返信",
        tags=("キーワード：", "地域", "暮らし", "交通"),
        footer_links=("会社案内", "お問い合わせ", "広告掲載", "採用情報", "プライバシーポリシー", "利用規約"),
        copyright="Copyright © 2024 みなと新聞社 All rights reserved.",
        disclaimer="掲載の記事・写真・図表などの無断転載を禁止します。著作権はみなと新聞社またはその情報提供者に属します。",
        editor="（編集：{name}）",
        date="2024年3月12日 8時30分", iso_date="2024-03-12T08:30:00+09:00",
    ),
    "ru": Chrome(
        site="Городские вести",
        navigation=("Главная", "Новости", "Политика", "Экономика", "Общество", "Происшествия", "Спорт",
                    "Культура", "Наука", "Погода"),
        home="Главная", section="Общество",
        byline="{author}, {date}",
        authors=("Анна Смирнова", "Игорь Волков", "Елена Кузнецова"),
        share=("Поделиться:", "ВКонтакте", "Одноклассники", "Telegram", "WhatsApp", "Скопировать ссылку"),
        cookie=("Мы используем файлы cookie, чтобы сайт работал лучше. Продолжая пользоваться сайтом, вы "
                "соглашаетесь с нашей политикой обработки персональных данных.", "Принять"),
        newsletter=("Подпишитесь на нашу рассылку и получайте главные новости дня каждое утро.", "Подписаться"),
        advert="Реклама", read_also="Читайте также:", related="Другие новости по теме", most_read="Самое читаемое",
        headlines=("В центре города отремонтируют три моста", "Школьники заняли первое место на олимпиаде по физике",
                   "Новый автобусный маршрут свяжет вокзал и аэропорт", "В парке Победы высадят тысячу деревьев",
                   "Цены на проезд в метро останутся прежними", "Городская больница получила новое оборудование",
                   "На набережной откроется летний кинотеатр", "Студенты запустили проект помощи пожилым людям"),
        comments_heading="Комментарии",
        comments=(
            ("Ольга", "Наконец-то! Сколько лет об этом говорили, хорошо, что дело сдвинулось с места."),
            ("Сергей П.", "Интересно, во сколько это обошлось бюджету? Лучше бы дороги во дворах отремонтировали, "
                          "там ям больше, чем асфальта."),
            ("гость", "Отличная новость, спасибо за статью."),
            ("Марина_78", "А где можно узнать подробности? На сайте администрации пока ничего нет."),
            ("Дмитрий", "Посмотрим, что будет через год. Обычно всё начинается красиво, а потом никто ничего "
                        "не поддерживает."),
        ),
        reply="Ответить",
        tags=("Теги:", "город", "транспорт", "общество"),
        footer_links=("О редакции", "Контакты", "Реклама", "Вакансии", "Политика конфиденциальности",
                      "Пользовательское соглашение"),
        copyright="© 2024 «Городские вести». Все права защищены.",
        disclaimer="Сетевое издание зарегистрировано Роскомнадзором. При полном или частичном использовании "
                   "материалов ссылка на «Городские вести» обязательна. 18+",
        editor="Редактор: {name}",
        date="12 марта 2024, 08:30", iso_date="2024-03-12T08:30:00+03:00",
    ),
    "ar": Chrome(
        site="صحيفة الأفق",
        navigation=("الرئيسية", "أخبار محلية", "عربي ودولي", "اقتصاد", "رياضة", "ثقافة", "علوم وتكنولوجيا",
                    "صحة", "رأي"),
        home="الرئيسية", section="محليات",
        byline="{author} - {date}",
        authors=("محمد الحسن", "ليلى عبد الله", "أحمد يوسف"),
        share=("شارك:", "فيسبوك", "تويتر", "واتساب", "تيليجرام", "نسخ الرابط"),
        cookie=("يستخدم هذا الموقع ملفات تعريف الارتباط لتحسين تجربتك. باستمرارك في تصفح الموقع فإنك توافق على "
                "سياسة الخصوصية الخاصة بنا.", "موافق"),
        newsletter=("اشترك في النشرة البريدية لتصلك أهم الأخبار كل صباح.", "اشترك"),
        advert="إعلان", read_also="اقرأ أيضا:", related="أخبار ذات صلة", most_read="الأكثر قراءة",
        headlines=("افتتاح جسر جديد يربط شرق المدينة بغربها", "وزارة التعليم تعلن موعد بدء العام الدراسي",
                   "ارتفاع أسعار الخضروات في الأسواق المحلية", "انطلاق مهرجان المسرح العربي بمشاركة واسعة",
                   "المنتخب الوطني يستعد لمباراة ودية", "تحذيرات من موجة حر خلال الأسبوع المقبل",
                   "إطلاق تطبيق إلكتروني لخدمات البلدية", "افتتاح مستشفى جديد للأطفال في العاصمة"),
        comments_heading="التعليقات",
        comments=(
            ("أبو محمد", "خطوة ممتازة نتمنى أن تستمر وأن تشمل باقي المحافظات."),
            ("سارة", "شكرا على هذا التقرير المفصل، لكن كنت أتمنى معرفة المزيد عن التكاليف ومن سيتحملها."),
            ("زائر", "كلام جميل ولكن العبرة بالتنفيذ على أرض الواقع."),
            ("خالد العلي", "هل هناك موعد محدد للافتتاح؟ لم أجد ذلك في الخبر."),
            ("مواطن", "نحتاج إلى مثل هذه المشاريع في الأحياء الشعبية أيضا وليس في وسط المدينة فقط."),
        ),
        reply="رد",
        tags=("الوسوم:", "محليات", "خدمات", "مجتمع"),
        footer_links=("من نحن", "اتصل بنا", "أعلن معنا", "سياسة الخصوصية", "شروط الاستخدام"),
        copyright="جميع الحقوق محفوظة © 2024 صحيفة الأفق",
        disclaimer="لا يجوز نسخ أو نقل أي من محتويات الموقع دون إذن خطي مسبق من إدارة التحرير.",
        editor="تحرير: {name}",
        date="12 مارس 2024 - 08:30", iso_date="2024-03-12T08:30:00+03:00",
    ),
}

LANGUAGES = tuple(ARTICLES)
PAGES_PER_LANGUAGE = 18


@dataclass(frozen=True)
class BenchPage:
    name: str  # e.g. "zh-03-table"
    language: str
    layout: str
    html: str
    truth: tuple[str, ...]  # the main text's paragraphs


e = html.escape


class PageWriter:
    """Writes one page: the shared head and chrome pieces, varied by a seeded RNG."""

    def __init__(self, article: Article, others: list[Article], rng: random.Random):
        self.article = article
        self.chrome = CHROME[article.language]
        self.rng = rng
        self.others = others
        self.cjk = article.language in ("zh", "ja")

    # -- small pieces ----------------------------------------------------------

    def hashed(self) -> str:
        """A CSS-modules class name: tells nothing about the element."""
        alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        prefix = self.rng.choice(("sc", "css", "jsx", "_"))
        return f"{prefix}-{''.join(self.rng.choice(alphabet) for _ in range(6))}"

    def link(self, text: str, css: str = "") -> str:
        slug = self.rng.randrange(10_000, 99_999)
        cls = f' class="{css}"' if css else ""
        return f'<a href="/{self.rng.choice(("news", "a", "story"))}/{slug}.html"{cls}>{e(text)}</a>'

    def other_headlines(self, count: int) -> list[str]:
        pool = list(self.chrome.headlines) + [other.title for other in self.others]
        return self.rng.sample(pool, min(count, len(pool)))

    def picked_comments(self) -> list[tuple[str, str]]:
        return self.rng.sample(self.chrome.comments, self.rng.randint(3, len(self.chrome.comments)))

    def excerpt(self, article: Article) -> str:
        """A related story's teaser: the start of its first paragraph."""
        first = article.paragraphs[0]
        cut = 60 if self.cjk else 140
        return first if len(first) <= cut else first[:cut].rstrip() + "…"

    def byline(self) -> str:
        return self.chrome.byline.format(author=self.rng.choice(self.chrome.authors), date=self.chrome.date)

    def advert_slot(self, css: str) -> str:
        return (f'<div class="{css}"><span>{e(self.chrome.advert)}</span>'
                f'<div style="min-height:250px" data-slot="{self.rng.randrange(1000, 9999)}"></div>'
                f'<script>(window.adq=window.adq||[]).push({{slot:"mid"}});</script></div>')

    def read_also(self) -> str:
        return f"<strong>{e(self.chrome.read_also)}</strong> {self.link(self.other_headlines(1)[0])}"

    def head(self, extra_style: str = "") -> str:
        c, a = self.chrome, self.article
        ld = {"@context": "https://schema.org", "@type": "NewsArticle", "headline": a.title,
              "datePublished": c.iso_date, "author": {"@type": "Person", "name": c.authors[0]},
              "publisher": {"@type": "Organization", "name": c.site}}
        direction = ' dir="rtl"' if a.language == "ar" else ""
        return (
            f'<!DOCTYPE html>\n<html lang="{a.language}"{direction}>\n<head>\n<meta charset="utf-8">\n'
            f"<title>{e(a.title)} - {e(c.site)}</title>\n"
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="description" content="{e(self.excerpt(a))}">\n'
            f'<meta property="og:title" content="{e(a.title)}">\n'
            f'<meta property="article:published_time" content="{c.iso_date}">\n'
            f'<link rel="stylesheet" href="/static/css/site.{self.rng.randrange(10**6):06d}.css">\n'
            f"<style>body{{margin:0;font-family:sans-serif}}.x{{display:flex}}{extra_style}</style>\n"
            f'<script type="application/ld+json">{json.dumps(ld, ensure_ascii=False)}</script>\n'
            "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}"
            "gtag('js',new Date());gtag('config','G-12345');var s='<p>not text</p>';</script>\n"
            "</head>\n"
        )

    def paragraphs_html(self, p_attrs: str = "", heading: str = "h2", advert_css: str = "ad",
                        read_also: bool = True) -> str:
        """The article body: paragraphs, subheadings, an ad and a "read also" line mid-way."""
        a = self.article
        blocks = []
        middle = max(1, len(a.paragraphs) // 2)
        for number, paragraph in enumerate(a.paragraphs):
            if number in a.subheadings:
                blocks.append(f"<{heading}>{e(a.subheadings[number])}</{heading}>")
            if number == middle:
                blocks.append(self.advert_slot(advert_css))
                if read_also:
                    blocks.append(f"<p{p_attrs}>{self.read_also()}</p>")
            blocks.append(f"<p{p_attrs}>{e(paragraph)}</p>")
        return "\n".join(blocks)

    # -- layouts ---------------------------------------------------------------

    def semantic(self) -> str:
        c, a = self.chrome, self.article
        nav = "".join(f"<li>{self.link(item)}</li>" for item in c.navigation)
        share = "".join(f'<li><a href="#share">{e(name)}</a></li>' for name in c.share[1:])
        related = "".join(f"<li>{self.link(title)}</li>" for title in self.other_headlines(4))
        comments = "".join(
            f'<article class="comment"><header><b>{e(name)}</b> <time>{e(c.date)}</time></header>'
            f"<p>{e(text)}</p><button>{e(c.reply)}</button></article>\n"
            for name, text in self.picked_comments()
        )
        most_read = "".join(f"<li>{self.link(title)}</li>" for title in self.other_headlines(5))
        footer = " ".join(self.link(item) for item in c.footer_links)
        return self.head() + (
            f'<body class="article-page">\n'
            f'<div class="cookie-notice" role="dialog"><p>{e(c.cookie[0])}</p><button>{e(c.cookie[1])}</button></div>\n'
            f'<header class="site-header"><a href="/" class="logo">{e(c.site)}</a>'
            f'<form role="search"><input name="q"></form><nav><ul>{nav}</ul></nav></header>\n'
            f'<main>\n<nav class="breadcrumb">{self.link(c.home)} › {self.link(c.section)}</nav>\n'
            f"<article>\n<h1>{e(a.title)}</h1>\n<p class=\"byline\">{e(self.byline())}</p>\n"
            f'<div class="share"><span>{e(c.share[0])}</span><ul>{share}</ul></div>\n'
            f'<figure><img src="/img/{self.rng.randrange(10**5)}.jpg" alt=""></figure>\n'
            f'<div class="article-body">\n{self.paragraphs_html()}\n</div>\n'
            f'<footer class="tags">{e(c.tags[0])} {" ".join(self.link(tag) for tag in c.tags[1:])}</footer>\n'
            f"</article>\n"
            f'<section class="related"><h2>{e(c.related)}</h2><ul>{related}</ul></section>\n'
            f'<section id="comments"><h2>{e(c.comments_heading)}</h2>\n{comments}</section>\n'
            f"</main>\n"
            f'<aside><h2>{e(c.most_read)}</h2><ol>{most_read}</ol>'
            f'<div class="newsletter"><p>{e(c.newsletter[0])}</p><button>{e(c.newsletter[1])}</button></div></aside>\n'
            f"<footer><p>{footer}</p><p>{e(c.copyright)}</p><p>{e(c.disclaimer)}</p></footer>\n"
            "</body>\n</html>\n"
        )

    def wordpress(self) -> str:
        c, a = self.chrome, self.article
        menu = "".join(f'<li class="menu-item">{self.link(item)}</li>' for item in c.navigation)
        share = "".join(f'<li class="share-{n}"><a href="#">{e(name)}</a></li>' for n, name in enumerate(c.share[1:]))
        related = "".join(
            f'<div class="jp-relatedposts-post"><h4 class="jp-relatedposts-post-title">{self.link(other.title)}</h4>'
            f'<p class="jp-relatedposts-post-excerpt">{e(self.excerpt(other))}</p></div>'
            for other in self.rng.sample(self.others, min(2, len(self.others)))
        )
        comments = "".join(
            f'<li class="comment even thread-even"><article class="comment-body">'
            f'<footer class="comment-meta"><b class="fn">{e(name)}</b> <time>{e(c.date)}</time></footer>'
            f'<div class="comment-content"><p>{e(text)}</p></div>'
            f'<div class="reply"><a class="comment-reply-link" href="#">{e(c.reply)}</a></div></article></li>\n'
            for name, text in self.picked_comments()
        )
        recent = "".join(f"<li>{self.link(title)}</li>" for title in self.other_headlines(5))
        return self.head() + (
            '<body class="post-template-default single single-post">\n<div id="page" class="site">\n'
            f'<div id="masthead" class="site-header"><div class="site-branding">'
            f'<p class="site-title">{self.link(c.site)}</p></div>\n'
            f'<div id="site-navigation" class="main-navigation"><ul id="primary-menu" class="menu">{menu}</ul></div></div>\n'
            f'<div class="breadcrumbs">{self.link(c.home)} » {self.link(c.section)} » <span>{e(a.title)}</span></div>\n'
            '<div id="content" class="site-content"><div id="primary" class="content-area"><div id="main" class="site-main">\n'
            f'<div class="post type-post status-publish hentry">\n<div class="entry-header"><h1 class="entry-title">{e(a.title)}</h1>'
            f'<div class="entry-meta"><span class="posted-on">{e(self.byline())}</span></div></div>\n'
            f'<div class="entry-content">\n{self.paragraphs_html(advert_css="code-block code-block-2")}\n</div>\n'
            f'<div class="entry-footer"><span class="tags-links">{e(c.tags[0])} '
            f'{", ".join(self.link(tag) for tag in c.tags[1:])}</span></div>\n'
            f'<div class="sharedaddy sd-sharing-enabled"><h3 class="sd-title">{e(c.share[0])}</h3><ul>{share}</ul></div>\n'
            f'<div id="jp-relatedposts" class="jp-relatedposts"><h3 class="jp-relatedposts-headline">{e(c.related)}</h3>'
            f"{related}</div>\n</div>\n"
            f'<div id="comments" class="comments-area"><h2 class="comments-title">{e(c.comments_heading)}</h2>'
            f'<ol class="comment-list">\n{comments}</ol>\n'
            f'<div id="respond" class="comment-respond"><form><textarea name="comment"></textarea></form></div></div>\n'
            "</div></div>\n"
            f'<div id="secondary" class="widget-area"><section class="widget widget_recent_entries">'
            f"<h2 class=\"widget-title\">{e(c.most_read)}</h2><ul>{recent}</ul></section>\n"
            f'<section class="widget widget_text"><div class="textwidget"><p>{e(c.newsletter[0])}</p>'
            f"<p>{self.link(c.newsletter[1])}</p></div></section></div>\n</div>\n"
            f'<div id="colophon" class="site-footer"><div class="site-info"><p>{" | ".join(self.link(item) for item in c.footer_links)}</p>'
            f"<p>{e(c.copyright)}</p><p>{e(c.disclaimer)}</p></div></div>\n</div>\n"
            f'<div id="cookie-law-info-bar"><span>{e(c.cookie[0])}</span> <a role="button" href="#">{e(c.cookie[1])}</a></div>\n'
            "</body>\n</html>\n"
        )

    def hashed_layout(self) -> str:
        c, a = self.chrome, self.article
        h = self.hashed
        nav = "".join(self.link(item, h()) for item in c.navigation)
        share = "".join(f'<a class="{h()}" href="#">{e(name)}</a>' for name in c.share[1:])
        related = "".join(
            f'<a class="{h()}" href="/r/{n}"><div class="{h()}">{e(title)}</div><div class="{h()}">{e(c.date)}</div></a>'
            for n, title in enumerate(self.other_headlines(4))
        )
        comments = "".join(
            f'<div class="{h()}"><div class="{h()}">{e(name)}</div><p class="{h()}">{e(text)}</p>'
            f'<div class="{h()}"><button>{e(c.reply)}</button><span>{self.rng.randint(0, 40)}</span></div></div>\n'
            for name, text in self.picked_comments()
        )
        most_read = "".join(f'<li class="{h()}">{self.link(title)}</li>' for title in self.other_headlines(5))
        p_attrs = f' class="{h()}"'
        return self.head(".sc-hidden{display:none}") + (
            f'<body>\n<div id="__next"><div class="{h()}">\n'
            f'<div class="{h()}"><div class="{h()}">{self.link(c.site)}</div><div class="{h()}">{nav}</div></div>\n'
            f'<div class="{h()}" style="display:none">{nav}</div>\n'
            f'<div class="{h()}"><div class="{h()}">{self.link(c.home)} › {self.link(c.section)}</div>\n'
            f'<div class="{h()}"><h1 class="{h()}">{e(a.title)}</h1>\n'
            f'<div class="{h()}"><span>{e(self.byline())}</span></div>\n'
            f'<div class="{h()}"><span>{e(c.share[0])}</span>{share}</div>\n'
            f'<div class="{h()}">\n{self.paragraphs_html(p_attrs, advert_css=h())}\n</div>\n'
            f'<div class="{h()}">{" ".join(self.link(tag, h()) for tag in c.tags[1:])}</div>\n'
            f'<div class="{h()}"><h2 class="{h()}">{e(c.related)}</h2>{related}</div>\n'
            f'<div class="{h()}"><h2 class="{h()}">{e(c.comments_heading)}</h2>\n{comments}</div>\n'
            f"</div></div>\n"
            f'<div class="{h()}"><h2>{e(c.most_read)}</h2><ol>{most_read}</ol></div>\n'
            f'<div class="{h()}"><div class="{h()}">{" ".join(self.link(item) for item in c.footer_links)}</div>'
            f'<p class="{h()}">{e(c.copyright)}</p><p class="{h()}">{e(c.disclaimer)}</p></div>\n'
            f'<div class="{h()}"><p>{e(c.cookie[0])}</p><button>{e(c.cookie[1])}</button></div>\n'
            f'</div></div>\n<script id="__NEXT_DATA__" type="application/json">{{"props":{{"page":"{e(a.title)}"}}}}</script>\n'
            "</body>\n</html>\n"
        )

    def table(self) -> str:
        c, a = self.chrome, self.article
        indent = "\u3000\u3000" if self.cjk else "&nbsp;&nbsp;"
        body_parts = []
        for number, paragraph in enumerate(a.paragraphs):
            if number in a.subheadings:
                body_parts.append(f"<b>{e(a.subheadings[number])}</b>")
            body_parts.append(indent + e(paragraph))
        body = "<br><br>\n".join(body_parts)
        nav = " | ".join(self.link(item) for item in c.navigation)
        related = "<br>\n".join("· " + self.link(title) for title in self.other_headlines(5))
        ranking = "<br>\n".join(f"{n}. {self.link(title)}" for n, title in enumerate(self.other_headlines(8), 1))
        comments = "\n".join(
            f'<tr><td width="120" valign="top"><font color="#336699">{e(name)}</font></td><td>{e(text)}</td></tr>'
            for name, text in self.picked_comments()
        )
        tools = "".join(f"【{self.link(tool)}】" for tool in c.share[1:4])
        return self.head() + (
            '<body bgcolor="#ffffff" topmargin="0">\n'
            f'<table width="960" align="center" cellpadding="0" cellspacing="0"><tr><td>{self.link(c.site)}</td>'
            f'<td align="right"><form action="/search"><input name="q"><input type="submit" value="?"></form></td></tr></table>\n'
            f'<table width="960" align="center" bgcolor="#c00"><tr><td><font color="#fff">{nav}</font></td></tr></table>\n'
            '<table width="960" align="center"><tr><td width="680" valign="top">\n'
            f'<table width="100%"><tr><td><font size="2">{self.link(c.home)} &gt; {self.link(c.section)} &gt; {e(c.site)}</font></td></tr>\n'
            f'<tr><td align="center"><font size="5"><b>{e(a.title)}</b></font></td></tr>\n'
            f'<tr><td align="center"><font size="2" color="#999999">{e(self.byline())}</font></td></tr>\n'
            f'<tr><td><font size="3">\n{body}\n</font></td></tr>\n'
            f'<tr><td align="center">{e(c.advert)} <a href="/ad/click"><img src="/ad/banner.gif" width="600" height="90"></a></td></tr>\n'
            f'<tr><td align="right">{tools}</td></tr>\n'
            f"<tr><td><b>{e(c.related)}</b><br>\n{related}</td></tr>\n"
            f'<tr><td><b>{e(c.comments_heading)}</b><table width="100%">\n{comments}\n</table></td></tr>\n'
            "</table></td>\n"
            f'<td width="270" valign="top"><table><tr><td><b>{e(c.most_read)}</b><br>\n{ranking}</td></tr>'
            f"<tr><td>{e(c.newsletter[0])}</td></tr></table></td></tr></table>\n"
            f'<table width="960" align="center"><tr><td align="center"><font size="2">'
            f'{" | ".join(self.link(item) for item in c.footer_links)}<br>{e(c.copyright)}<br>{e(c.disclaimer)}'
            "</font></td></tr></table>\n</body>\n</html>\n"
        )

    def portal(self) -> str:
        c, a = self.chrome, self.article
        top = " ".join(self.link(word) for word in c.footer_links[:3])
        channels = "".join(f"<li>{self.link(item)}</li>" for item in c.navigation)
        hot = "".join(f"<li>{self.link(title)}<span>{e(c.date)}</span></li>" for title in self.other_headlines(6))
        rank = "".join(f"<li><em>{n}</em>{self.link(title)}</li>" for n, title in enumerate(self.other_headlines(8), 1))
        comments = "".join(
            f'<div class="cmt-item"><span class="user">{e(name)}</span><p>{e(text)}</p>'
            f'<span class="op">{e(c.reply)}</span></div>'
            for name, text in self.picked_comments()
        )
        pictures = "".join(f'<li><a href="/pic/{n}"><img src="/p/{n}.jpg"><span>{e(title)}</span></a></li>'
                           for n, title in enumerate(self.other_headlines(4)))
        return self.head() + (
            f'<body>\n<div id="top-bar">{top}</div>\n'
            f'<div class="hd"><div class="logo">{self.link(c.site)}</div><div class="search-box"><form><input></form></div></div>\n'
            f'<div id="channel"><ul>{channels}</ul></div>\n'
            '<div class="wrap clearfix"><div class="main-left">\n'
            f'<div class="crumbs">{self.link(c.home)} &gt; {self.link(c.section)}</div>\n'
            f'<h1 id="artititle">{e(a.title)}</h1>\n'
            f'<div class="info"><span>{e(self.byline())}</span> <a href="#">A+</a> <a href="#">A-</a></div>\n'
            f'<div id="artibody" class="art-content">\n{self.paragraphs_html(advert_css="adbox")}\n</div>\n'
            f'<p class="editor">{e(c.editor.format(name=self.rng.choice(c.authors)))}</p>\n'
            f'<div class="kw">{e(c.tags[0])}{" ".join(self.link(tag) for tag in c.tags[1:])}</div>\n'
            f'<div class="bdshare">{" ".join(self.link(name) for name in c.share[1:])}</div>\n'
            f'<div class="hot-list"><h3>{e(c.related)}</h3><ul>{hot}</ul></div>\n'
            f'<div class="pic-list"><ul>{pictures}</ul></div>\n'
            f'<div class="cmt-wrap"><h3>{e(c.comments_heading)}</h3>{comments}</div>\n'
            "</div>\n"
            f'<div class="main-right"><div class="rank"><h3>{e(c.most_read)}</h3><ol>{rank}</ol></div>'
            f'<div class="box-300"><span>{e(c.advert)}</span><iframe src="/ad/300x250.html"></iframe></div>'
            f'<div class="qr"><p>{e(c.newsletter[0])}</p></div></div>\n</div>\n'
            f'<div class="foot"><p>{" | ".join(self.link(item) for item in c.footer_links)}</p>'
            f"<p>{e(c.copyright)}</p><p>{e(c.disclaimer)}</p></div>\n"
            '<script>var _hmt=_hmt||[];(function(){var hm=document.createElement("script");})();</script>\n'
            "</body>\n</html>\n"
        )

    def components(self) -> str:
        c, a = self.chrome, self.article
        cls = self.hashed
        blocks = []
        middle = max(1, len(a.paragraphs) // 2)
        for number, paragraph in enumerate(a.paragraphs):
            if number in a.subheadings:
                blocks.append(f'<div data-component="subheadline-block" class="{cls()}"><h2 class="{cls()}">'
                              f"{e(a.subheadings[number])}</h2></div>")
            if number == middle:
                other = self.rng.choice(self.others)
                blocks.append(
                    f'<div data-component="promo-block" class="{cls()}"><div class="{cls()}">{self.link(other.title)}'
                    f'<p class="{cls()}">{e(self.excerpt(other))}</p></div></div>')
            blocks.append(f'<div data-component="text-block" class="{cls()}"><div class="{cls()}">'
                          f'<p class="{cls()}">{e(paragraph)}</p></div></div>')
        teasers = "".join(
            f'<div class="{cls()}"><a href="/t/{n}"><h3 class="{cls()}">{e(other.title)}</h3></a>'
            f'<p class="{cls()}">{e(self.excerpt(other))}</p></div>'
            for n, other in enumerate(self.rng.sample(self.others, min(3, len(self.others))))
        )
        topics = "".join(f"<li>{self.link(tag)}</li>" for tag in c.tags[1:])
        return self.head() + (
            f'<body><div id="root">\n<div class="{cls()}"><a href="#main-content">Skip to content</a></div>\n'
            f'<div role="banner" class="{cls()}">{self.link(c.site)}<div role="navigation" class="{cls()}">'
            f'{"".join(self.link(item) for item in c.navigation)}</div></div>\n'
            f'<div id="main-content" class="{cls()}"><article class="{cls()}">\n'
            f'<div data-component="headline-block" class="{cls()}"><h1 id="main-heading">{e(a.title)}</h1></div>\n'
            f'<div data-component="byline-block" class="{cls()}"><time datetime="{c.iso_date}">{e(c.date)}</time>'
            f'<div>{e(self.byline())}</div></div>\n'
            f'<div data-component="image-block" class="{cls()}"><img src="/i/{self.rng.randrange(10**6)}.jpg" alt=""></div>\n'
            + "\n".join(blocks) +
            f'\n<div data-component="topic-list" class="{cls()}"><h2>{e(c.tags[0])}</h2><ul>{topics}</ul></div>\n'
            f'<div data-component="links-block" class="{cls()}"><h2>{e(c.related)}</h2><ul>'
            f'{"".join(f"<li>{self.link(t)}</li>" for t in self.other_headlines(3))}</ul></div>\n'
            f'</article>\n<div class="{cls()}"><h2>{e(c.most_read)}</h2>{teasers}</div></div>\n'
            f'<div role="contentinfo" class="{cls()}"><div>{" ".join(self.link(item) for item in c.footer_links)}</div>'
            f"<p>{e(c.copyright)} {e(c.disclaimer)}</p></div>\n"
            "</div></body>\n</html>\n"
        )

    def flat(self) -> str:
        c, a = self.chrome, self.article
        comments = "\n".join(f"<p><b>{e(name)}</b>: {e(text)}</p>" for name, text in self.picked_comments())
        archive = "<br>".join(self.link(title) for title in self.other_headlines(6))
        return self.head() + (
            f'<body>\n<div id="wrapper">\n<div id="top"><h2>{self.link(c.site)}</h2>'
            f'<p>{" :: ".join(self.link(item) for item in c.navigation[:6])}</p></div>\n'
            f'<div id="content">\n<h1>{e(a.title)}</h1>\n<p class="small">{e(self.byline())}</p>\n'
            f"{self.paragraphs_html(read_also=False, advert_css='banner-box')}\n"
            f'<p>{e(c.tags[0])} {", ".join(self.link(tag) for tag in c.tags[1:])}</p>\n'
            f"<h3>{e(c.comments_heading)}</h3>\n{comments}\n"
            f'<p>{self.link(c.reply)}</p>\n</div>\n'
            f'<div id="right"><h3>{e(c.most_read)}</h3><p>{archive}</p><p>{e(c.newsletter[0])}</p></div>\n'
            f'<div id="bottom"><p>{e(c.copyright)}</p></div>\n</div>\n</body>\n</html>\n'
        )


    def embeds(self) -> str:
        c, a = self.chrome, self.article
        blocks = []
        middle = max(1, len(a.paragraphs) // 2)
        for number, paragraph in enumerate(a.paragraphs):
            if number in a.subheadings:
                blocks.append(f"<h3>{e(a.subheadings[number])}</h3>")
            if number == 1:
                blocks.append(
                    f'<div class="picture"><img src="/p/{self.rng.randrange(10**6)}.jpg" alt="">'
                    f'<div class="picture__caption">{e(a.title)}</div><div class="picture__credit">© {e(c.site)}</div></div>')
            if number == middle:
                other = self.rng.choice(self.others)
                blocks.append(
                    f'<div class="box-inline-topic"><a href="/t/{self.rng.randrange(9999)}">'
                    f'<span class="box-inline-topic__title">{e(other.title)}</span>'
                    f'<span class="box-inline-topic__text">{e(self.excerpt(other))}</span></a></div>')
            blocks.append(f"<p>{e(paragraph)}</p>")
        blocks.append(f'<p class="topic-body__subscribe">{e(c.newsletter[0])} {self.link(c.newsletter[1])}</p>')
        return self.head() + (
            '<body class="layout-topic">\n'
            f'<div class="header-wrap"><div class="logo">{self.link(c.site)}</div>'
            f'<ul class="menu__list">{"".join(f"<li>{self.link(item)}</li>" for item in c.navigation)}</ul></div>\n'
            '<div class="layout__content"><div class="topic-page">\n'
            f'<div class="topic-header"><span class="topic-header__rubric">{self.link(c.section)}</span>'
            f'<time class="topic-header__time">{e(c.date)}</time>'
            f'<h1 class="topic-body__title">{e(a.title)}</h1></div>\n'
            f'<div class="topic-authors"><span>{e(self.byline())}</span></div>\n'
            f'<div class="topic-body__content">\n' + "\n".join(blocks) + "\n</div>\n"
            f'<div class="topic-footer"><div class="topic-footer__tags">{" ".join(self.link(tag) for tag in c.tags[1:])}</div></div>\n'
            f'<div class="topic-page__more"><h2>{e(c.most_read)}</h2>'
            + "".join(f'<div class="card-mini"><a href="/m/{n}"><span class="card-mini__title">{e(title)}</span></a>'
                      f'<time>{e(c.date)}</time></div>' for n, title in enumerate(self.other_headlines(6)))
            + "</div>\n</div></div>\n"
            f'<div class="layout__footer"><p>{" · ".join(self.link(item) for item in c.footer_links)}</p>'
            f"<p>{e(c.disclaimer)}</p><p>{e(c.copyright)}</p></div>\n"
            "</body>\n</html>\n"
        )

    def amp(self) -> str:
        c, a = self.chrome, self.article
        body = self.paragraphs_html(heading="h2", advert_css="amp-ad-wrapper", read_also=True)
        body = body.replace('<div style="min-height:250px"', '<amp-ad width="300" height="250" type="doubleclick"'
                            ).replace("></div><script>", "><div fallback>" + e(c.advert) + "</div></amp-ad><script>")
        comments = "".join(
            f'<section><h4 class="cmt-author">{e(name)}</h4><div class="cmt-text">{e(text)}</div></section>'
            for name, text in self.picked_comments())
        return self.head() + (
            '<body>\n'
            f'<amp-sidebar id="sidebar" layout="nodisplay" side="left"><ul>'
            f'{"".join(f"<li>{self.link(item)}</li>" for item in c.navigation)}</ul></amp-sidebar>\n'
            f'<div class="amp-header"><button on="tap:sidebar.toggle">☰</button>{self.link(c.site)}</div>\n'
            f'<amp-consent id="consent" layout="nodisplay"><div class="consent-ui"><p>{e(c.cookie[0])}</p>'
            f"<button>{e(c.cookie[1])}</button></div></amp-consent>\n"
            f'<div class="amp-wp-article"><div class="amp-wp-article-header"><h1 class="amp-wp-title">{e(a.title)}</h1>'
            f'<div class="amp-wp-meta">{e(self.byline())}</div></div>\n'
            f'<amp-img src="/i/{self.rng.randrange(10**6)}.jpg" width="1200" height="675" layout="responsive"></amp-img>\n'
            f'<div class="amp-wp-article-content">\n{body}\n</div>\n'
            f'<amp-social-share type="twitter"></amp-social-share><amp-social-share type="facebook"></amp-social-share>\n'
            f'<amp-accordion><section><h3>{e(c.comments_heading)}</h3><div>{comments}</div></section></amp-accordion>\n'
            f'</div>\n<div class="amp-wp-footer"><p>{e(c.copyright)}</p><a href="#top">↑</a></div>\n'
            "</body>\n</html>\n"
        )

# The rules of mrcrawl.page.maintext were tuned on the first five layouts.
# `components` and `flat` were then written as held-out layouts.  Their
# first figures (F1 0.52 and 0.75) showed that per-paragraph wrappers beat
# the rules, which led to one rule (a paragraph's container is above its
# wrappers), so `components` counts as tuned on since.  `flat`, and `embeds`
# and `amp` (written after that rule), were never tuned on: they show how the
# rules fare on structures they were not shaped by.
LAYOUTS = {
    "semantic": PageWriter.semantic,
    "wordpress": PageWriter.wordpress,
    "hashed": PageWriter.hashed_layout,
    "table": PageWriter.table,
    "portal": PageWriter.portal,
    "components": PageWriter.components,
    "flat": PageWriter.flat,
    "embeds": PageWriter.embeds,
    "amp": PageWriter.amp,
}
HELD_OUT_LAYOUTS = ("flat", "embeds", "amp")


def corpus(languages=LANGUAGES, per_language: int = PAGES_PER_LANGUAGE) -> list[BenchPage]:
    """The benchmark pages: `per_language` pages per language, every layout
    in turn, each article of the language in more than one layout."""
    pages = []
    layouts = list(LAYOUTS)
    for language in languages:
        articles = ARTICLES[language]
        for number in range(per_language):
            # Shifted each round of layouts, so an article meets different layouts.
            article = articles[(number + number // len(layouts)) % len(articles)]
            layout = layouts[number % len(layouts)]
            others = [other for other in articles if other is not article]
            writer = PageWriter(article, others, random.Random(f"{language}-{number}"))
            pages.append(BenchPage(
                name=f"{language}-{number:02d}-{layout}", language=language, layout=layout,
                html=LAYOUTS[layout](writer), truth=article.main_text,
            ))
    return pages
