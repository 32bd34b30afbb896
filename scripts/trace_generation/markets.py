"""Families that look up prices: price-comparison and stock-price (fictional companies, synthetic prices)."""

from __future__ import annotations

from datetime import date, timedelta

from .common import Deck, fmt, longdate, money, pick, qy, st, tr

# ----------------------------------------------------------------------------------------------------------------
# product price comparison
# ----------------------------------------------------------------------------------------------------------------
PRODUCTS = [("Sony WH-1000XM5 headphones", 399), ("Kindle Paperwhite (16 GB)", 150), ("Nintendo Switch OLED", 350),
            ("Logitech MX Master 3S mouse", 100), ("Samsung T7 1TB portable SSD", 110),
            ("Instant Pot Duo 6-quart", 100), ("LEGO Titanic set 10294", 680), ("Garmin Forerunner 265", 450),
            ("Anker 737 power bank", 110), ("De'Longhi Dedica EC685 espresso machine", 250),
            ("Philips Hue White and Color starter kit", 200)]
REGIONS = {"US": ("$", ["Amazon", "Best Buy", "Walmart", "Target", "B&H Photo", "Newegg"], "Chicago"),
           "UK": ("£", ["Amazon UK", "Currys", "Argos", "John Lewis", "Very"], "Manchester"),
           "DE": ("€", ["Amazon.de", "MediaMarkt", "Saturn", "Otto", "Cyberport"], "Köln")}
CATCHES = ["a renewed (refurbished) listing", "a member-only price", "a marketplace seller shipping from abroad in "
           "3-4 weeks", "a bundle without the charger", "an out-of-stock listing"]


def fam_price(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (prod, base) in enumerate(PRODUCTS):
        reg = ["US", "UK", "DE"][i % 3]
        cur, stores, city = REGIONS[reg]
        sel = pick(rng, stores, 3)
        while True:
            offers = []
            for s in sel:
                p = round(base * rng.uniform(0.82, 1.04)) - 0.01
                ship = pick(rng, [0.0, 0.0, 4.99, 6.99, 9.99])
                offers.append((s, p, ship))
            if len({round(p + sh, 2) for _, p, sh in offers}) == len(offers):
                break
        catch = pick(rng, CATCHES)
        trap = (pick(rng, ["eBay", "a marketplace seller"]), round(min(o[1] for o in offers) * 0.9) - 0.01)
        tot = [(s, round(p + sh, 2)) for s, p, sh in offers]
        best = min(tot, key=lambda x: x[1])
        with_img = i % 3 == 1
        t = pick(rng, [f"Where is the {prod} cheapest right now among {sel[0]}, {sel[1]} and {sel[2]}, shipping "
                       "included?",
                       f"Compare the price of the {prod} at {', '.join(sel)} with delivery to {city}. Which is the "
                       "best deal?",
                       f"I want to buy a new {prod}. Which of {', '.join(sel)} gives the lowest total cost?"])
        q = deck("img", ["I'd like to buy the product in this photo. Which shop has it cheapest, delivery included?",
                         f"Where can I order the item in the picture for the lowest total price ({city} delivery)?",
                         "Saw this gadget at a friend's place (photo attached). Which online store sells it "
                         "cheapest?",
                         f"Find the best price for the product shown, comparing {', '.join(sel)}."]) if with_img else t
        steps = []
        if with_img:
            steps.append(st("Identify the exact model first - similar models differ a lot in price.", "image_search",
                            "image_1 (product photo)", f"Matches: {prod} (box and logo visible)"))
        steps.append(st("Get current listings for the exact model.", "web_search", f"{prod} price {reg}",
                        "; ".join(f"{s} {money(p, cur)}" for s, p, _ in offers)
                        + f"; {trap[0]} {money(trap[1], cur)} ({catch})"))
        steps.append(st(f"Open the store pages to get delivery cost to {city} and check condition/seller.",
                        "browse_webpage", " | ".join(f"{s} product page" for s in sel),
                        "; ".join(f"{s}: new, sold by {s}, delivery {money(sh, cur) if sh else 'free'}"
                                  for s, _, sh in offers)))
        steps.append(st("Add delivery to each new, first-party offer and compare.", "calculator",
                        "; ".join(f"{fmt(p)} + {fmt(sh)}" for _, p, sh in offers),
                        "; ".join(f"{s}: {money(v, cur)}" for s, v in tot)))
        if i % 2 == 0:
            steps.append(st(f"Before recommending {best[0]}, check for coupons or price-match offers that could "
                            "change the ranking.", "web_search", f"{prod} coupon code {' '.join(sel)}",
                            "No public coupon codes for this model; price-match only against the retailers' own "
                            "listings"))
        ans = (f"{best[0]} at {money(best[1], cur)} including delivery (" +
               ", ".join(f"{s} {money(v, cur)}" for s, v in tot if s != best[0]) + ")")
        reas = (f"Compared like for like: the exact model, new condition, sold by the retailer, with delivery to "
                f"{city} added. The cheapest headline price in the search results was {catch} and was excluded. "
                "Prices were taken from the product pages, not the search snippets, since snippets are often stale.")
        good.append(tr(q, "compare product prices across online stores", steps, reas, ans,
                       images=1 if with_img else 0,
                       caption=f"Product photo of the {prod} in its retail box." if with_img else None))
    cur, stores, city = REGIONS["US"]
    bad.append(tr("Which store has the Kindle Paperwhite (16 GB) cheapest right now?",
                  "compare product prices across online stores",
                  [st("Search prices.", "web_search", "Kindle Paperwhite 16GB price",
                      "Amazon $149.99; Best Buy $139.99; eBay $96.00 (renewed)"),
                   st("Pick the lowest.", "calculator", "min(149.99, 139.99, 96.00)", "96.00")],
                  "Chose the lowest listed price.", "eBay at $96.00"))
    queries.append(qy("Where can I get Bose QuietComfort Ultra Earbuds for the least money in the US, counting "
                      "shipping?", "find the cheapest retailer for a gadget"))
    queries.append(qy("is the kobo clara 2e cheaper at fnac or amazon.fr rn? incl delivery pls", "compare two shops"))
    queries.append(qy("我想买照片里这款吸尘器，哪家网店含运费最便宜？", "比较不同网店的价格", images=1, lang="zh",
                      caption="一台戴森V15 Detect无线吸尘器的产品照片，带激光吸头。"))
    queries.append(qy("Find me the best deal.", "price comparison", images=1, caption_only=True,
                      caption="Screenshot of a shopping list with 'AirPods Pro (2nd generation) - check Currys, "
                              "Argos, John Lewis, delivery to Leeds' circled."))
    queries.append(qy("Before I order an Instax Mini 12 camera, which of Target, Walmart or B&H works out "
                      "cheapest once delivery is added?", "compare total prices including delivery"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# stock price on a date - fictional companies, synthetic prices
# ----------------------------------------------------------------------------------------------------------------
STOCKS = [("Harborline Logistics", "HBLN"), ("Quillfeather Software", "QFS"), ("Mirador Mining", "MRDM"),
          ("Brightwell Energy", "BRWE"), ("Tessaly Pharma", "TSLP"), ("Oakhurst Retail", "OAKR"),
          ("Cobalt Peak Semiconductors", "CPKS"), ("Verdant Foods", "VRDF"), ("Northwind Robotics", "NWRB"),
          ("Silverline Telecom", "SLTC"), ("Aurelia Airlines", "AURA")]


def fam_stock(rng):
    good, bad, queries = [], [], []
    for i, (name, tick) in enumerate(STOCKS):
        d1 = date(2020, 1, 6) + timedelta(days=rng.randint(0, 1200))
        while d1.weekday() >= 5:
            d1 += timedelta(days=1)
        d2 = d1 + timedelta(days=rng.randint(30, 400))
        while d2.weekday() >= 5:
            d2 += timedelta(days=1)
        p1 = round(rng.uniform(12, 240), 2)
        p2 = round(p1 * rng.uniform(0.6, 1.7), 2)
        kind = ["close", "change", "split"][i % 3]
        steps = [st("Confirm the ticker and exchange.", "web_search", f"{name} stock ticker",
                    f"{name} trades as {tick} (NASDAQ)")]
        if kind == "close":
            q = pick(rng, [f"What was {name}'s closing share price on {d1.isoformat()}?",
                           f"How much did one {tick} share close at on {longdate(d1)}?"])
            adj = round(p1 * rng.uniform(0.93, 0.99), 2)
            steps.append(st("Open the historical prices table for that date.", "browse_webpage",
                            f"historical prices {tick}, {d1.isoformat()}",
                            f"{d1.isoformat()}: open {fmt(p1 * 0.99)} high {fmt(p1 * 1.01)} low {fmt(p1 * 0.98)} "
                            f"close {fmt(p1)} adj close {fmt(adj)}"))
            ans = f"${fmt(p1)} (raw close; dividend-adjusted close ${fmt(adj)})"
        elif kind == "change":
            pct = (p2 - p1) / p1 * 100
            q = f"By what percentage did {tick} stock change between {d1.isoformat()} and {d2.isoformat()}?"
            steps.append(st("Get closes for both dates from the same source.", "browse_webpage",
                            f"historical prices {tick} {d1.isoformat()}, {d2.isoformat()}",
                            f"{d1.isoformat()} close {fmt(p1)}; {d2.isoformat()} close {fmt(p2)} (adjusted)"))
            steps.append(st("Percent change with the earlier close as base.", "python",
                            f"({fmt(p2)} - {fmt(p1)}) / {fmt(p1)} * 100", fmt(pct, 2)))
            ans = f"{'+' if pct >= 0 else ''}{fmt(pct, 1)}% (${fmt(p1)} -> ${fmt(p2)}, adjusted closes)"
        else:
            ratio = pick(rng, [2, 3, 4])
            split_d = d1 + timedelta(days=(d2 - d1).days // 2)
            p2s = round(p2 / ratio, 2)
            pct = (p2s * ratio - p1) / p1 * 100
            q = (f"{name} ({tick}) closed at ${fmt(p1)} on {d1.isoformat()} and around ${fmt(p2s)} on "
                 f"{d2.isoformat()}. Did the stock really fall that much?")
            steps.append(st("A big drop may be a split; check corporate actions.", "web_search",
                            f"{tick} stock split", f"{ratio}-for-1 split effective {split_d.isoformat()}"))
            steps.append(st("Compare split-adjusted prices.", "python", f"({fmt(p2s)} * {ratio} - {fmt(p1)}) / "
                            f"{fmt(p1)} * 100", fmt(pct, 2)))
            ans = (f"No - there was a {ratio}-for-1 split on {split_d.isoformat()}. Split-adjusted, the change is "
                   f"{'+' if pct >= 0 else ''}{fmt(pct, 1)}%")
        reas = ("Confirmed the ticker, then took prices from a historical-data table for the exact dates (trading "
                "days only). Raw vs adjusted closes were kept apart, and any large jump was checked against "
                "corporate actions (splits, dividends) before interpreting it.")
        good.append(tr(q, "look up a stock price on a date", steps, reas, ans))
    bad.append(tr("What was Verdant Foods (VRDF) closing price on Saturday 2022-03-12?", "look up a stock price on "
                  "a date", [st("Open history.", "browse_webpage", "VRDF history", "2022-03-11 close 48.20; "
                                "2022-03-14 close 47.05"),
                             st("Pick nearest.", "python", "next trading day", "2022-03-14: 47.05")],
                  "Took the next available close.", "$47.05 on 2022-03-12"))
    queries.append(qy("What did Redfern Shipping shares close at on 2023-05-17? (ticker RDFS)", "closing price "
                      "lookup"))
    queries.append(qy("how much did pinecrest biotech stock go up from jan 3 2022 to jan 3 2023 in %?",
                      "stock percent change"))
    queries.append(qy("坦马林酒店集团（TMRH）2021年9月1日的收盘价是多少？", "查询某日股票收盘价", lang="zh"))
    queries.append(qy("Explain the drop.", "stock price question", images=1, caption_only=True,
                      caption="Screenshot of a price chart for Kestrel Analytics (KSTA) that halves overnight in "
                              "June 2022; the user asks whether the company lost half its value."))
    queries.append(qy("Find Lumen Ridge Capital's (LMRC) closing share price on the last trading day of 2021.",
                      "price on a specific trading day"))
    return good, bad, queries
