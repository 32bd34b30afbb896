"""Families that look facts up in reference sources: pubmed-question (fictional studies), sports-stats,
historical-date, book-lookup, movie-cast, paper-lookup and company-hq."""

from __future__ import annotations

import math
from datetime import date

from .common import WEEKDAYS, Deck, fmt, longdate, pick, qy, st, tr

# ----------------------------------------------------------------------------------------------------------------
# medical abstract question (PubMed) - all studies are fictional
# ----------------------------------------------------------------------------------------------------------------
TRIALS = [
    ("vitamin D3 supplementation", "fracture risk", "adults aged 70 or older", "fracture incidence"),
    ("time-restricted eating", "weight loss", "adults with obesity", "change in body weight at 12 months"),
    ("mindfulness-based stress reduction", "generalised anxiety disorder", "adults with GAD",
     "change in anxiety score (GAD-7) at 8 weeks"),
    ("low-dose aspirin", "preterm preeclampsia", "high-risk pregnancies", "preterm preeclampsia incidence"),
    ("high-intensity interval training", "glycaemic control", "adults with type 2 diabetes",
     "change in HbA1c at 16 weeks"),
    ("probiotic supplementation", "antibiotic-associated diarrhoea", "children receiving antibiotics",
     "incidence of diarrhoea"),
    ("tranexamic acid", "blood loss", "patients undergoing total knee arthroplasty", "total blood loss"),
    ("digital cognitive behavioural therapy", "insomnia", "adults with chronic insomnia",
     "Insomnia Severity Index at 10 weeks"),
    ("omega-3 fatty acids", "atrial fibrillation", "older adults", "incident atrial fibrillation"),
    ("early mobilisation", "delirium", "mechanically ventilated ICU patients", "days with delirium"),
    ("oral iron every other day", "iron-deficiency anaemia", "women of reproductive age",
     "haemoglobin change at 12 weeks"),
]
TRIAL_MEASURES = [("RR", "", 0), ("MD", "kg", 3), ("MD", "points", 3), ("RR", "", 0), ("MD", "percentage points", 0.5),
                  ("RR", "", 0), ("MD", "mL", 300), ("MD", "points", 5), ("HR", "", 0), ("MD", "days", 2),
                  ("MD+", "g/dL", 1)]
JOURNALS = ["BMJ Open", "JAMA Network Open", "BMC Public Health", "Annals of Internal Medicine",
            "PLOS Medicine", "Trials", "BMC Medicine"]


def fam_pubmed(rng):
    good, bad, queries = [], [], []
    for i, (interv, cond, pop, outcome) in enumerate(TRIALS):
        year = rng.randint(2019, 2023)
        n = rng.randrange(120, 2400, 2)
        analyzed = n - rng.randint(4, n // 10)
        j = pick(rng, JOURNALS)
        pmid, dist1, dist2 = (rng.randint(30000000, 37999999) for _ in range(3))
        measure, unit, scale = TRIAL_MEASURES[i]
        up = measure == "MD+"
        effect = pick(rng, ["increased" if up else "reduced", "did not significantly change",
                            "modestly increased" if up else "modestly reduced"])
        null = "not" in effect
        if measure in ("RR", "HR"):
            lo_, hi_ = ((rng.uniform(0.55, 0.85), rng.uniform(1.02, 1.2)) if null else
                        (rng.uniform(0.45, 0.7), rng.uniform(0.75, 0.95)))
            est = math.sqrt(lo_ * hi_)
            stat = (f"{'risk' if measure == 'RR' else 'hazard'} ratio {fmt(est, 2)}, 95% CI {fmt(lo_, 2)} to "
                    f"{fmt(hi_, 2)}")
        else:
            sign = 1 if up else -1
            lo_, hi_ = ((-rng.uniform(0.1, 0.4) * scale, rng.uniform(0.1, 0.4) * scale) if null else
                        sorted([sign * rng.uniform(0.6, 1.2) * scale, sign * rng.uniform(0.1, 0.5) * scale]))
            est = (lo_ + hi_) / 2
            stat = f"mean difference {fmt(est, 2)} {unit}, 95% CI {fmt(lo_, 2)} to {fmt(hi_, 2)}"
        result = (f"{outcome}: {stat} versus control - " +
                  ("no significant difference" if null else f"in favour of {interv}"))
        kind = ["n", "outcome", "effect"][i % 3]
        title = f"{interv[0].upper()}{interv[1:]} for {cond} in {pop}: a randomised controlled trial"
        if kind == "n":
            q = pick(rng, [f"How many participants were randomised in the {year} RCT of {interv} for {cond} in {pop} "
                           f"published in {j}?",
                           f"In the randomised trial on {interv} and {cond} ({j}, {year}), what was the sample size?"])
            ans = f"{n} randomised ({analyzed} included in the primary analysis); PMID {pmid}"
        elif kind == "outcome":
            q = f"What was the primary outcome of the {year} trial of {interv} in {pop}, and what did it find?"
            ans = f"Primary outcome: {outcome}. Result: {result.split(': ', 1)[1]} (PMID {pmid})"
        else:
            q = pick(rng, [f"Did {interv} help with {cond} in the randomised trial published in {j} in {year}?",
                           f"According to PubMed, does {interv} work for {cond} in {pop}? Use the {year} RCT."])
            ans = f"{'No clear benefit' if 'not' in effect else 'Yes'}: {result} (PMID {pmid}, {j} {year})"
        steps = [st("Search PubMed with intervention, condition and design terms.", "pubmed_search",
                    f"({interv}) AND ({cond}) AND randomized controlled trial[pt] AND {year}[dp]",
                    f"PMID {pmid}: '{title}' ({j}, {year}); PMID {dist1}: '{title.split(':')[0]}: protocol' "
                    f"({year - 2}); PMID {dist2}: 'Secondary analysis of ...' ({year + 1})"),
                 st("Open the main results paper, not the protocol or secondary analysis.", "browse_webpage",
                    f"pubmed.ncbi.nlm.nih.gov/{pmid}",
                    f"Abstract: {n} participants were randomised; {analyzed} were analysed. Primary outcome: "
                    f"{outcome}. Results: {result}.")]
        if kind == "n":
            steps.append(st("Separate 'randomised' from 'analysed' numbers.", "calculator", f"{n} - {analyzed}",
                            f"{n - analyzed} lost to follow-up or excluded"))
        reas = ("The search returned the protocol and a secondary analysis alongside the main trial report; only "
                "the main results abstract was used. Numbers were quoted precisely (randomised vs analysed) and the "
                "answer keeps the trial's own hedging: a confidence interval that includes no effect (ratio 1, "
                "difference 0) means no clear benefit.")
        good.append(tr(q, "answer a question from a PubMed abstract", steps, reas, ans))
    bad.append(tr("How many patients were enrolled in the 2020 trial of tranexamic acid for blood loss in knee "
                  "arthroplasty?", "answer a question from a PubMed abstract",
                  [st("Search.", "pubmed_search", "tranexamic acid knee arthroplasty trial",
                      "PMID 31234567: '... : protocol' (2018)"),
                   st("Read.", "browse_webpage", "pubmed 31234567", "We plan to enrol 600 patients.")],
                  "Used the first PubMed hit.", "600 patients"))
    queries.append(qy("Is there RCT evidence that acupuncture relieves chronic low back pain in older adults? Find "
                      "the main trial and summarise its primary result.", "summarise a clinical trial from PubMed"))
    queries.append(qy("how many ppl were in that tai chi falls prevention trial from 2019? randomized not "
                      "analyzed", "find a trial's sample size"))
    queries.append(qy("请在PubMed上查一下：锌含片能缩短普通感冒病程吗？主要结局指标和结果是什么？",
                      "根据PubMed摘要回答医学问题", lang="zh"))
    queries.append(qy("What does this study conclude?", "read a medical abstract", images=1, caption_only=True,
                      caption="Screenshot of a PubMed search result titled 'Music therapy for preoperative anxiety: "
                              "a randomised controlled trial'; the user asks for the primary outcome and result."))
    queries.append(qy("Find the randomised trial on virtual-reality distraction during paediatric blood draws and "
                      "tell me whether it reduced pain scores.", "look up a trial result on PubMed"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# sports statistics lookup
# ----------------------------------------------------------------------------------------------------------------
SPORTS = [
    ("Who scored the winning goal in the 2014 FIFA World Cup final, and in which minute?",
     "2014 FIFA World Cup final", "Germany 1-0 Argentina after extra time; goal: Mario Götze, 113th minute",
     "Mario Götze, in the 113th minute (extra time), Germany 1-0 Argentina", "extra time vs regular time"),
    ("Who got the winner in the 2010 World Cup final?", "2010 FIFA World Cup final",
     "Netherlands 0-1 Spain (a.e.t.); goal: Andrés Iniesta 116'", "Andrés Iniesta, 116th minute, Spain 1-0 Netherlands",
     "extra time vs regular time"),
    ("Who won the Golden Boot at the 2018 World Cup, and with how many goals?", "2018 FIFA World Cup top scorers",
     "Golden Boot: Harry Kane (England), 6 goals; Antoine Griezmann, Romelu Lukaku 4", "Harry Kane, 6 goals",
     "award winner vs joint top scorers"),
    ("What is Usain Bolt's 100 m world record time, and where was it set?", "men's 100 metres world record",
     "9.58 s, Usain Bolt, 16 August 2009, World Championships, Berlin", "9.58 s, Berlin (2009 World Championships)",
     "Olympic record (9.63) vs world record"),
    ("How many Olympic medals did Michael Phelps win in total?", "Michael Phelps Olympic medals",
     "28 medals: 23 gold, 3 silver, 2 bronze (2004-2016)", "28 (23 gold, 3 silver, 2 bronze)",
     "total medals vs gold medals"),
    ("Against which team did Wilt Chamberlain score 100 points, and when?", "Wilt Chamberlain 100-point game",
     "2 March 1962, Philadelphia Warriors 169-147 New York Knicks, Hershey, Pennsylvania",
     "The New York Knicks, on 2 March 1962", "venue (Hershey) vs opponent"),
    ("How many French Open singles titles has Rafael Nadal won?", "Rafael Nadal French Open titles",
     "14 titles: 2005-2008, 2010-2014, 2017-2020, 2022", "14", "singles vs all events"),
    ("How many Grand Slam singles titles did Serena Williams win?", "Serena Williams Grand Slam singles titles",
     "23 Grand Slam singles titles (Open Era record)", "23", "singles vs doubles titles"),
    ("How many times did Roger Federer win Wimbledon in singles?", "Roger Federer Wimbledon titles",
     "8 singles titles: 2003-2007, 2009, 2012, 2017", "8", "singles vs total finals"),
    ("How many regular-season goals did Wayne Gretzky score in the NHL?", "Wayne Gretzky career goals",
     "894 regular-season goals, 122 playoff goals", "894 (plus 122 in the playoffs)", "regular season vs playoffs"),
    ("How far did Bob Beamon jump at the 1968 Olympics?", "Bob Beamon 1968 long jump",
     "8.90 m, Mexico City, 18 October 1968 (world record until 1991)", "8.90 m", "metric vs imperial (29 ft 2.5 in)"),
]


def fam_sports(rng):
    good, bad, queries = [], [], []
    for i, (q, topic, fact, ans, trap) in enumerate(SPORTS):
        src = pick(rng, ["Wikipedia", "the official federation site", "a statistics database (e.g. Olympedia, "
                         "Basketball-Reference)"])
        q2 = q if i % 2 == 0 else pick(rng, [f"Sports trivia: {q[0].lower()}{q[1:]}", f"Quick stats check - {q}"])
        steps = [st("Search for the record / match report.", "web_search", topic, f"Top results: {topic} - "
                    f"{src}, news reports"),
                 st("Read the fact from a primary or reference page, not a snippet.", "browse_webpage",
                    f"{topic} page on {src}", fact),
                 st(f"Cross-check with a second source; mind {trap}.", "web_search", f"{topic} {trap.split(' vs ')[0]}",
                    f"Second source agrees: {ans}")]
        reas = (f"Found the reference page for the {topic} and read the figure there, then confirmed it with an "
                f"independent source. The usual confusion here is {trap}, so the answer states exactly which figure "
                "it is.")
        good.append(tr(q2, "look up a sports statistic", steps, reas, ans))
    bad.append(tr("How many Olympic medals did Michael Phelps win?", "look up a sports statistic",
                  [st("Search.", "web_search", "Michael Phelps Olympic golds", "23 Olympic gold medals"),
                   st("Answer.", "browse_webpage", "news article", "Phelps, winner of 23 golds, ...")],
                  "Took the headline number.", "23"))
    queries.append(qy("What was Kobe Bryant's career-high points in a single NBA game, and who was the opponent?",
                      "single-game scoring record"))
    queries.append(qy("who won the golden boot in qatar 2022 and how many goals did he get", "top scorer of a "
                      "tournament"))
    queries.append(qy("2018年世界杯决赛的比分是多少？谁赢了？", "查询体育比赛结果", lang="zh"))
    queries.append(qy("Answer the trivia card.", "sports trivia", images=1, caption_only=True,
                      caption="A trivia card: 'How many gold medals did Jesse Owens win at the 1936 Berlin "
                              "Olympics?'"))
    queries.append(qy("In which Olympics did Nadia Comăneci score the first perfect 10 in gymnastics?",
                      "look up a historic sports record"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# historical dates
# ----------------------------------------------------------------------------------------------------------------
EVENTS = [
    ("storming of the Bastille", date(1789, 7, 14)), ("Battle of Waterloo", date(1815, 6, 18)),
    ("signing of the Treaty of Versailles", date(1919, 6, 28)), ("launch of Sputnik 1", date(1957, 10, 4)),
    ("fall of the Berlin Wall", date(1989, 11, 9)), ("Chernobyl disaster", date(1986, 4, 26)),
    ("Wuchang Uprising", date(1911, 10, 10)), ("independence of India", date(1947, 8, 15)),
]
SPANS = [("the sealing of Magna Carta", 1215, "the Peace of Westphalia", 1648),
         ("the fall of Constantinople", 1453, "Columbus's first voyage to the Americas", 1492),
         ("the Meiji Restoration", 1868, "the start of the Russo-Japanese War", 1904)]


def fam_history(rng):
    good, bad, queries = [], [], []
    for i, (ev, d) in enumerate(EVENTS):
        wd = WEEKDAYS[d.weekday()]
        if i % 3 == 2:
            q = pick(rng, [f"On what date did the {ev} happen?", f"When exactly was the {ev}?"])
            ans = f"{longdate(d)} (a {wd})"
            sub = "look up the date of a historical event"
        else:
            q = pick(rng, [f"What day of the week was the {ev}?", f"The {ev} - which weekday did it fall on?",
                           f"Find the date of the {ev} and tell me the day of the week."])
            ans = f"{wd}, {longdate(d)}"
            sub = "find the weekday of a historical date"
        steps = [st("Get the exact date from a reference source.", "wikipedia", ev, f"The {ev} took place on "
                    f"{longdate(d)}."),
                 st("Compute the weekday in code instead of from memory (proleptic Gregorian is fine after 1582; "
                    "check the calendar in use for Russia/Greece).", "python",
                    f"datetime.date({d.year}, {d.month}, {d.day}).strftime('%A')", wd)]
        if i % 2 == 0 and ev != "Wuchang Uprising":
            steps.append(st("Cross-check the weekday with a calendar page.", "web_search",
                            f"calendar {d.strftime('%B')} {d.year}",
                            f"{d.strftime('%B')} {d.year}: the {d.day}th is a {wd}."))
        if ev == "Wuchang Uprising":
            steps.append(st("Confirm the date is Gregorian (China used the lunar calendar officially in 1911).",
                            "web_search", "Wuchang Uprising date Gregorian lunar",
                            "10 October 1911 (Gregorian) = 19th day of the 8th lunar month; celebrated as Double "
                            "Ten Day."))
        reas = ("Took the date from a reference page and computed the weekday with datetime rather than recalling "
                "it. For dates with competing calendars or several candidate events (signing vs entry into force) "
                "the answer states which date was used.")
        good.append(tr(q, sub, steps, reas, ans))
    for a, ya, b, yb in SPANS:
        q = pick(rng, [f"How many years passed between {a} and {b}?", f"How long after {a} did {b} happen?"])
        steps = [st("Look up both years.", "wikipedia", f"{a}; {b}", f"{a}: {ya}; {b}: {yb}"),
                 st("Subtract (both AD, so no year-zero issue).", "calculator", f"{yb} - {ya}", str(yb - ya))]
        good.append(tr(q, "compute the time between historical events", steps,
                       "Looked up both dates separately and subtracted; when one date is BC there is no year 0, "
                       "so an extra year must be removed - not needed here.", f"{yb - ya} years ({ya} to {yb})"))
    bad.append(tr("What day of the week was the Battle of Waterloo?", "find the weekday of a historical date",
                  [st("Look up the date.", "wikipedia", "Battle of Waterloo", "18 June 1815"),
                   st("Recall the weekday.", "web_search", "18 June 1815 day", "snippet: 'on a rainy Saturday "
                      "night before the battle...'")],
                  "Used the weekday mentioned in a search snippet.", "Saturday, 18 June 1815"))
    queries.append(qy("Apollo 11 landed on the Moon on which day of the week?", "weekday of a historic event"))
    queries.append(qy("how many yrs between the battle of hastings and magna carta", "years between two events"))
    queries.append(qy("《联合国宪章》是哪一天生效的？那天是星期几？", "查询历史日期及星期", lang="zh"))
    queries.append(qy("What weekday was it?", "date question from a photo", images=1, caption_only=True,
                      caption="Photo of a memorial plaque reading 'D-Day - 6 June 1944 - Normandy landings'; the "
                              "visitor asks which day of the week that was."))
    queries.append(qy("Count the years from the start of the French Revolution to the Russian October Revolution.",
                      "elapsed time between historical events"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# book author / year lookup
# ----------------------------------------------------------------------------------------------------------------
BOOKS = [
    ("One Hundred Years of Solitude", "Gabriel García Márquez", "1967", "Cien años de soledad", "Spanish"),
    ("Things Fall Apart", "Chinua Achebe", "1958", None, "English"),
    ("The Remains of the Day", "Kazuo Ishiguro", "1989", None, "English"),
    ("Beloved", "Toni Morrison", "1987", None, "English"),
    ("The Master and Margarita", "Mikhail Bulgakov", "1966-1967 (serialised in the magazine Moskva; written "
     "1928-1940, published posthumously)",
     "Мастер и Маргарита", "Russian"),
    ("Norwegian Wood", "Haruki Murakami", "1987", "ノルウェイの森", "Japanese"),
    ("Frankenstein", "Mary Shelley", "1818", None, "English"),
    ("The Name of the Rose", "Umberto Eco", "1980", "Il nome della rosa", "Italian"),
    ("Brave New World", "Aldous Huxley", "1932", None, "English"),
    ("The Three-Body Problem", "Liu Cixin", "2008 in book form (serialised 2006)", "三体", "Chinese"),
    ("Pedro Páramo", "Juan Rulfo", "1955", None, "Spanish"),
    ("The Left Hand of Darkness", "Ursula K. Le Guin", "1969", None, "English"),
]


def fam_book(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (title, author, year, orig, lang) in enumerate(BOOKS):
        with_img = i % 3 == 1
        if with_img:
            q = deck("img", ["Who wrote the book in this photo and when was it first published?",
                             "What's this book, who is the author, and what year did it come out?",
                             "Found this paperback on a train - author and original publication year?",
                             "For my book club list: who wrote the novel on this cover, and when was it first out?"])
        else:
            q = pick(rng, [f"Who wrote '{title}' and in what year was it first published?",
                           f"When was {title} first published, and by whom?",
                           f"I need the author and original publication year of {title} for a bibliography."])
        steps = []
        if with_img:
            steps.append(st("Read title and author from the cover.", "ocr", "image_1 (book cover)",
                            f"'{orig or title}' ... {author.upper()}" + (" (translated edition)" if orig else "")))
        steps.append(st("Look up the first publication (original language), not this edition's date.", "wikipedia",
                        title, f"{title}{f' ({orig})' if orig else ''}: novel by {author}, first published {year}"
                        + (f" in {lang}." if orig else ".")))
        steps.append(st("Cross-check with a library catalogue.", "web_search", f"{title} {author} first edition",
                        f"WorldCat/Open Library: first edition {year.split(' ')[0]}."))
        reas = ("Took the first publication date of the original work (not the date printed in a translation or "
                "reprint) from a reference page and confirmed it in a library catalogue. For translated books the "
                "original title and language are given too, since the cover may show only the translation.")
        ans = f"{author}; first published {year}" + (f" (original title: {orig})" if orig else "")
        good.append(tr(q, "look up a book's author and publication year", steps, reas, ans,
                       images=1 if with_img else 0,
                       caption=f"Photo of a paperback cover of '{title}' by {author}." if with_img else None))
    bad.append(tr("When was 'The Master and Margarita' first published?", "look up a book's author and publication "
                  "year", [st("Search.", "web_search", "The Master and Margarita published", "Penguin Classics "
                              "edition, 2016"),
                           st("Check author.", "wikipedia", "Mikhail Bulgakov", "Bulgakov (1891-1940)")],
                  "Took the publication date from the bookshop listing.", "2016, by Mikhail Bulgakov"))
    queries.append(qy("Who is the author of Dune and when did it first come out?", "book author and year"))
    queries.append(qy("who wrote the bell jar?? and what year", "find a novel's author"))
    queries.append(qy("小说《蝴蝶梦》（Rebecca）的作者是谁？哪一年首次出版？", "查询书籍作者和出版年份",
                      lang="zh"))
    queries.append(qy("Tell me about this book.", "identify a book from its cover", images=1, caption_only=True,
                      caption="Photo of a worn paperback cover showing 'NEUROMANCER' and a neon cityscape; the user "
                              "asks who wrote it and its first publication year."))
    queries.append(qy("For my reading list I need the original publication year and author of 'Invisible Man' "
                      "(the novel, not the H.G. Wells one).", "disambiguate and look up a book"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# movie cast lookup
# ----------------------------------------------------------------------------------------------------------------
MOVIES = [
    ("Inception", "2010", "Christopher Nolan", "Dom Cobb", "Leonardo DiCaprio"),
    ("Parasite", "2019", "Bong Joon-ho", "Kim Ki-taek", "Song Kang-ho"),
    ("The Godfather", "1972", "Francis Ford Coppola", "Vito Corleone", "Marlon Brando"),
    ("Amélie", "2001", "Jean-Pierre Jeunet", "Amélie Poulain", "Audrey Tautou"),
    ("Pan's Labyrinth", "2006", "Guillermo del Toro", "Ofelia", "Ivana Baquero"),
    ("Arrival", "2016", "Denis Villeneuve", "Louise Banks", "Amy Adams"),
    ("Mad Max: Fury Road", "2015", "George Miller", "Imperator Furiosa", "Charlize Theron"),
    ("Casablanca", "1942", "Michael Curtiz", "Rick Blaine", "Humphrey Bogart"),
    ("Crouching Tiger, Hidden Dragon", "2000", "Ang Lee", "Li Mu Bai", "Chow Yun-fat"),
    ("Everything Everywhere All at Once", "2022", "Daniel Kwan and Daniel Scheinert", "Evelyn Quan Wang",
     "Michelle Yeoh"),
    ("The Grand Budapest Hotel", "2014", "Wes Anderson", "M. Gustave", "Ralph Fiennes"),
    ("Get Out", "2017", "Jordan Peele", "Chris Washington", "Daniel Kaluuya"),
]


def fam_movie(rng):
    good, bad, queries = [], [], []
    for i, (film, year, director, role, actor) in enumerate(MOVIES):
        kind = ["role", "director", "role"][i % 3]
        with_img = i % 4 == 2
        if kind == "role":
            q = pick(rng, [f"Who played {role} in {film}?", f"Which actor portrays {role} in the {year} film {film}?"])
            if with_img:
                q = f"Who plays {role} in the film on this poster?"
            ans = f"{actor} ({film}, {year}, dir. {director})"
        else:
            q = pick(rng, [f"Who directed {film} and who is the lead actor?",
                           f"{film}: director and star?"])
            if with_img:
                q = "Which film is this poster for, who directed it and who stars in it?"
            ans = f"Directed by {director}; lead: {actor} as {role} ({year})"
        steps = []
        if with_img:
            steps.append(st("Identify the film from the poster text/art.", "image_search", "image_1 (movie poster)",
                            f"Poster matches '{film}' ({year})"))
        steps.append(st("Disambiguate remakes/same-title films by year, then open the cast list.", "web_search",
                        f"{film} {year} cast", f"{film} ({year}) - full cast & crew (IMDb, Wikipedia)"))
        steps.append(st("Read the credited cast and director.", "browse_webpage", f"{film} ({year}) full credits",
                        f"Director: {director}. Cast: {actor} ... {role}; ..."))
        reas = ("Pinned down the exact film by title and year first (remakes and same-title films are common), then "
                "read the role from the credited cast list rather than from a plot summary, which often names "
                "characters without actors.")
        good.append(tr(q, "look up a film's cast or director", steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A movie poster for '{film}' ({year})." if with_img else None))
    bad.append(tr("Who played Vito Corleone in The Godfather?", "look up a film's cast or director",
                  [st("Search.", "web_search", "Vito Corleone actor", "Robert De Niro won an Oscar for playing young "
                      "Vito Corleone in The Godfather Part II"),
                   st("Answer.", "browse_webpage", "news snippet", "De Niro as Vito Corleone")],
                  "Took the actor from the search snippet.", "Robert De Niro"))
    queries.append(qy("Which actress was Clarice Starling in The Silence of the Lambs?", "actor for a character"))
    queries.append(qy("who directed oldboy (the korean one) and who's the main guy", "director and lead actor"))
    queries.append(qy("电影《黑天鹅》里妮娜·塞耶斯是谁演的？导演是谁？", "查询电影演员和导演", lang="zh"))
    queries.append(qy("Who's in this?", "identify a film and its cast", images=1, caption_only=True,
                      caption="A poster showing a young woman in a white Mexican-style dress with the title 'ROMA' "
                              "and '2018'; the user asks for the director and lead actress."))
    queries.append(qy("In the 1994 film Léon: The Professional, which actress played Mathilda?",
                      "find the actor for a role"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# research paper lookup
# ----------------------------------------------------------------------------------------------------------------
PAPERS = [
    ("Attention Is All You Need", "Ashish Vaswani", "NeurIPS (NIPS) 2017", "2017 (arXiv June 2017)", 8),
    ("BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", "Jacob Devlin",
     "NAACL 2019", "arXiv October 2018", 4),
    ("Deep Residual Learning for Image Recognition", "Kaiming He", "CVPR 2016", "arXiv December 2015", 4),
    ("ImageNet Classification with Deep Convolutional Neural Networks", "Alex Krizhevsky", "NIPS 2012",
     "no arXiv version; NIPS proceedings 2012", 3),
    ("Adam: A Method for Stochastic Optimization", "Diederik P. Kingma", "ICLR 2015", "arXiv December 2014", 2),
    ("Generative Adversarial Nets", "Ian Goodfellow", "NIPS 2014", "arXiv June 2014", 8),
    ("Batch Normalization: Accelerating Deep Network Training by Reducing Internal Covariate Shift", "Sergey Ioffe",
     "ICML 2015", "arXiv February 2015", 2),
    ("U-Net: Convolutional Networks for Biomedical Image Segmentation", "Olaf Ronneberger", "MICCAI 2015",
     "arXiv May 2015", 3),
    ("Mastering the game of Go with deep neural networks and tree search", "David Silver", "Nature, 2016",
     "Nature, January 2016", 20),
    ("Long Short-Term Memory", "Sepp Hochreiter", "Neural Computation, 1997", "Neural Computation 9(8), 1997", 2),
    ("Highly accurate protein structure prediction with AlphaFold", "John Jumper", "Nature, 2021",
     "Nature, July 2021 (online)", 34),
]


def fam_paper(rng):
    good, bad, queries = [], [], []
    for i, (title, first, venue, pre, n_auth) in enumerate(PAPERS):
        kind = ["venue", "first", "count"][i % 3]
        short = title.split(":")[0]
        if kind == "venue":
            q = pick(rng, [f"Where and when was the paper '{title}' published?",
                           f"Which conference or journal published '{short}', and in what year?"])
            ans = f"{venue} (first author {first}; preprint: {pre})"
        elif kind == "first":
            q = pick(rng, [f"Who is the first author of '{short}'?", f"First author and year of the '{short}' paper?"])
            ans = f"{first}; published at {venue}"
        else:
            q = f"How many authors does '{short}' have, and who is listed first?"
            ans = f"{n_auth} authors, first author {first} ({venue})"
        steps = [st("Find the paper's bibliographic record.", "web_search", f"\"{title}\"",
                    f"dblp / Semantic Scholar / publisher page for '{title}'; also an arXiv preprint ({pre})"),
                 st("Read venue, year and author list from dblp or the publisher, not from the preprint.",
                    "browse_webpage", f"dblp record: {short}",
                    f"Authors ({n_auth}): {first}, ...; Venue: {venue}")]
        if kind == "venue":
            steps.append(st("Confirm on the proceedings/DOI page that the peer-reviewed version carries this year.",
                            "browse_webpage", f"publisher or proceedings page for '{short}'",
                            f"Published in {venue}."))
        elif kind == "count":
            steps.append(st("Count the authors from the record rather than the 'et al.' citation.", "python",
                            "len(record['authors'])", str(n_auth)))
        reas = ("Used the bibliographic record (dblp/publisher) for venue, year and author order, because the "
                "arXiv preprint often has a different year than the peer-reviewed version and citation aggregators "
                "sometimes reorder or truncate author lists.")
        good.append(tr(q, "look up a paper's venue, year or authors", steps, reas, ans))
    bad.append(tr("In which year was the BERT paper published, and at which venue?", "look up a paper's venue, year "
                  "or authors", [st("Search.", "web_search", "BERT paper", "arXiv:1810.04805 (Oct 2018)"),
                                 st("Open.", "browse_webpage", "arxiv.org/abs/1810.04805", "Submitted 11 Oct 2018")],
                  "Used the arXiv listing.", "2018, arXiv"))
    queries.append(qy("Which venue published 'Denoising Diffusion Probabilistic Models' and when?",
                      "find a paper's venue and year"))
    queries.append(qy("the vision transformer paper (16x16 words) - first author + where was it published?",
                      "first author and venue of a paper"))
    queries.append(qy("论文《Sequence to Sequence Learning with Neural Networks》发表在哪个会议？"
                      "哪一年？第一作者是谁？",
                      "查询论文的发表信息", lang="zh"))
    queries.append(qy("Reference details please.", "paper citation details", images=1, caption_only=True,
                      caption="Screenshot of a slide citing 'You Only Look Once: Unified, Real-Time Object "
                              "Detection'; the user needs the venue, year and number of authors for the bibliography."))
    queries.append(qy("I want to cite the dropout paper by Srivastava et al. properly - which journal and year?",
                      "bibliographic lookup for a paper"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# company headquarters lookup
# ----------------------------------------------------------------------------------------------------------------
COMPANIES = [
    ("Nestlé", "Vevey, Switzerland", "food and beverages", "a bird's nest logo"),
    ("Samsung Electronics", "Suwon, South Korea", "electronics", "a blue oval wordmark"),
    ("Toyota Motor Corporation", "Toyota City, Aichi, Japan", "automobiles", "three overlapping ellipses"),
    ("Siemens", "Munich, Germany", "industrial technology", "a teal wordmark"),
    ("Philips", "Amsterdam, the Netherlands", "health technology", "a shield with stars and waves"),
    ("Novo Nordisk", "Bagsværd, Denmark", "pharmaceuticals", "a blue Apis bull"),
    ("The LEGO Group", "Billund, Denmark", "toys", "white letters in a red square"),
    ("Nokia", "Espoo, Finland", "telecommunications equipment", "a blue wordmark"),
    ("Adidas", "Herzogenaurach, Germany", "sportswear", "three stripes forming a mountain"),
    ("Ferrari", "Maranello, Italy", "sports cars", "a prancing horse on yellow"),
    ("Michelin", "Clermont-Ferrand, France", "tyres", "the Michelin Man (Bibendum)"),
    ("Nintendo", "Kyoto, Japan", "video games", "a red rounded wordmark"),
]


def fam_company(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (co, hq, ind, logo) in enumerate(COMPANIES):
        with_img = i % 3 == 2
        if with_img:
            q = deck("img", ["Whose logo is this, and where is the company headquartered?",
                             "Which company uses this logo and in which city is its head office?",
                             "I keep seeing this logo - which company is it and where is it based?",
                             "Identify the brand in the image and give its headquarters city."])
        else:
            q = pick(rng, [f"Where is {co} headquartered?", f"In which city is the head office of {co}?",
                           f"What city and country is {co}'s global headquarters in?"])
        steps = []
        if with_img:
            steps.append(st("Identify the brand from the logo.", "image_search", "image_1 (logo)",
                            f"Logo matches {co} ({logo})"))
        steps.append(st("Get the registered/global headquarters, not the largest office or a regional HQ.",
                        "wikipedia", co, f"{co} - {ind}; headquarters: {hq}"))
        steps.append(st("Confirm on the company's own site (about / contact / annual report).", "browse_webpage",
                        f"{co} investor relations - company address", f"Head office: {hq}"))
        reas = ("Took the headquarters from the infobox and confirmed it with the company's own annual report or "
                "contact page, to avoid confusing the global HQ with big regional offices or subsidiaries (and "
                "with similarly named companies). The answer gives city and country.")
        good.append(tr(q, "look up a company's headquarters", steps, reas, f"{co}: {hq}",
                       images=1 if with_img else 0, caption=f"A company logo: {logo}." if with_img else None))
    bad.append(tr("Where is Samsung Electronics headquartered?", "look up a company's headquarters",
                  [st("Search.", "web_search", "Samsung headquarters", "Samsung Town, Seoul (Samsung Group "
                      "offices)"),
                   st("Answer.", "browse_webpage", "news snippet", "Samsung's Seoul headquarters...")],
                  "Used the news snippet.", "Seoul, South Korea"))
    queries.append(qy("Where's the head office of Volvo Cars?", "company head office location"))
    queries.append(qy("infosys hq is in which city?", "find where a company is based"))
    queries.append(qy("华为的总部在哪个城市？", "查询公司总部所在地", lang="zh"))
    queries.append(qy("Which company is this?", "identify a company from its logo", images=1, caption_only=True,
                      caption="A green bottle label with a red star and the wordmark of a Dutch brewery; the user "
                              "asks which company it is and where its headquarters are."))
    queries.append(qy("Aircraft maker Embraer - what city is it headquartered in?", "company headquarters lookup"))
    return good, bad, queries
