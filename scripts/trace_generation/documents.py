"""Families that read photographed text: menu-translation, receipt-total, nutrition-label and sign-ocr
(signs and licence plates)."""

from __future__ import annotations

from .common import Deck, fmt, money, pick, qy, st, tr

# ----------------------------------------------------------------------------------------------------------------
# menu translation from a photo
# ----------------------------------------------------------------------------------------------------------------
MENUS = [
    # language, OCR language code, currency, dishes (original, English, vegetarian?)
    ("Japanese", "ja", "¥", [("親子丼", "oyakodon - chicken and egg simmered over rice", False),
                            ("天ぷらそば", "tempura soba - buckwheat noodles with shrimp tempura", False),
                            ("きつねうどん", "kitsune udon - udon with sweet fried tofu (dashi is usually fish-based)",
                             False),
                            ("野菜カレー", "vegetable curry with rice", True)]),
    ("Italian", "it", "€", [("Cacio e pepe", "spaghetti with pecorino cheese and black pepper", True),
                           ("Saltimbocca alla romana", "veal escalopes with prosciutto and sage", False),
                           ("Carciofi alla giudia", "deep-fried whole artichokes", True),
                           ("Tiramisù", "coffee-soaked ladyfingers with mascarpone cream", True)]),
    ("French", "fr", "€", [("Blanquette de veau", "veal stew in a creamy white sauce", False),
                          ("Œufs en meurette", "eggs poached in red wine sauce, usually with lardons", False),
                          ("Gratin dauphinois", "sliced potatoes baked in cream", True),
                          ("Île flottante", "poached meringue floating on custard", True)]),
    ("Thai", "th", "฿", [("ผัดกะเพราหมู", "pad kra pao moo - stir-fried pork with holy basil", False),
                        ("ต้มยำกุ้ง", "tom yum goong - hot and sour shrimp soup", False),
                        ("ส้มตำ", "som tam - green papaya salad (usually with fish sauce and dried shrimp)", False),
                        ("ข้าวเหนียวมะม่วง", "mango sticky rice", True)]),
    ("Chinese", "zh", "¥", [("鱼香肉丝", "yu xiang shredded pork - 'fish-fragrant' sauce, contains no fish", False),
                           ("地三鲜", "stir-fried potato, aubergine and green pepper", True),
                           ("麻婆豆腐", "mapo tofu - tofu in chilli bean sauce, usually with minced meat", False),
                           ("夫妻肺片", "sliced beef and offal in chilli oil", False)]),
    ("Spanish", "es", "€", [("Pulpo a la gallega", "Galician-style octopus with paprika and potatoes", False),
                           ("Pimientos de Padrón", "blistered small green peppers with sea salt", True),
                           ("Rabo de toro", "braised oxtail stew", False),
                           ("Crema catalana", "custard with a caramelised sugar crust", True)]),
    ("German", "de", "€", [("Schweinshaxe", "roast pork knuckle", False),
                          ("Käsespätzle", "egg noodles with melted cheese and fried onions", True),
                          ("Maultaschen", "Swabian pasta pockets, usually filled with meat and spinach", False),
                          ("Rote Grütze", "red berry pudding with vanilla sauce", True)]),
    ("Korean", "ko", "₩", [("비빔밥", "bibimbap - rice with vegetables, egg and chilli paste (often beef)", False),
                          ("순두부찌개", "sundubu jjigae - soft tofu stew (usually with seafood or pork)", False),
                          ("김치볶음밥", "kimchi fried rice", False),
                          ("잡채", "japchae - stir-fried glass noodles with vegetables (often beef)", False)]),
    ("Vietnamese", "vi", "₫", [("Phở bò", "beef noodle soup", False),
                              ("Bánh xèo", "crispy rice-flour pancake with shrimp and pork", False),
                              ("Bún chả", "grilled pork with rice noodles and dipping sauce", False),
                              ("Đậu hũ sốt cà chua", "tofu in tomato sauce", True)]),
    ("Turkish", "tr", "₺", [("İskender kebap", "sliced döner over bread with tomato sauce and yoghurt", False),
                           ("Mercimek çorbası", "red lentil soup", True),
                           ("İmam bayıldı", "aubergine stuffed with onion, garlic and tomato in olive oil", True),
                           ("Künefe", "shredded pastry with melted cheese in syrup", True)]),
]


def fam_menu(rng):
    good, bad, queries = [], [], []
    for i, (lang, code, cur, dishes) in enumerate(MENUS):
        prices = [rng.randint(6, 19) * (100 if cur in "¥₩₫" else 1) * (10 if cur == "₫" else 1) for _ in dishes]
        if cur == "¥" and lang == "Chinese":
            prices = [rng.randint(18, 68) for _ in dishes]
        if cur == "฿":
            prices = [rng.randint(60, 180) for _ in dishes]
        if cur == "₺":
            prices = [rng.randint(12, 42) * 10 for _ in dishes]
        kind = ["veg", "price", "all"][i % 3]
        menu_txt = "; ".join(f"{o} {cur}{p:,}" for (o, _, _), p in zip(dishes, prices, strict=True))
        tr_txt = "; ".join(f"{o} = {e}" for o, e, _ in dishes)
        target = pick(rng, range(len(dishes)))
        if kind == "veg":
            q = pick(rng, [f"I'm vegetarian. Which dishes on this {lang} menu can I eat?",
                           f"Translate this {lang} menu for me and tell me which dishes have no meat or fish."])
            veg = [f"{o} ({e.split(' - ')[-1] if ' - ' in e else e})" for o, e, v in dishes if v]
            ans = ("Vegetarian: " + "; ".join(veg)) if veg else "None of the dishes is reliably vegetarian"
            sub = "translate a menu photo and find vegetarian dishes"
        elif kind == "price":
            o, e, _ = dishes[target]
            q = pick(rng, [f"What is '{o}' on this menu, and how much does it cost?",
                           f"Can you tell me what the dish {o} is and its price from the photo?"])
            ans = f"{o}: {e}; {cur}{prices[target]:,}"
            sub = "translate a dish name from a menu photo"
        else:
            q = pick(rng, [f"Please translate this {lang} menu into English.",
                           f"I can't read {lang}. What's on this menu?"])
            ans = "; ".join(f"{o} - {e} ({cur}{p:,})" for (o, e, _), p in zip(dishes, prices, strict=True))
            sub = "translate a restaurant menu from a photo"
        steps = [st(f"OCR the menu in {lang}.", "ocr", f"image_1 (lang={code})", menu_txt),
                 st("Translate dish names; literal machine translation of dish names is often misleading.",
                    "translate", f"{code} -> en: " + " | ".join(o for o, _, _ in dishes), tr_txt)]
        if kind != "price":
            tricky = next((d for d in dishes if "usually" in d[1] or "no fish" in d[1] or "often" in d[1]), dishes[0])
            steps.append(st(f"Check what '{tricky[0]}' really contains before calling it (non-)vegetarian.",
                            "web_search", f"{tricky[0]} ingredients", f"{tricky[0]}: {tricky[1]}."))
        reas = ("OCR with the right language setting, then dish-level translation. Literal translations mislead "
                "(names can mention fish that isn't there, or hide meat, fish sauce or broth), so ambiguous dishes "
                "were checked against a description of the dish before answering" +
                (" the vegetarian question; anything usually made with meat or fish stock was excluded."
                 if kind == "veg" else "; prices were copied from the OCR line of the same dish."))
        good.append(tr(q, sub, steps, reas, ans, images=1,
                       caption=f"A photo of a printed {lang} restaurant menu with {len(dishes)} dishes and prices."))
    bad.append(tr("I'm vegetarian - which of these dishes on the Chinese menu can I order?",
                  "translate a menu photo and find vegetarian dishes",
                  [st("OCR.", "ocr", "image_1 (lang=zh)", "鱼香肉丝 ¥32; 麻婆豆腐 ¥26; 地三鲜 ¥24"),
                   st("Translate.", "translate", "zh -> en", "fish-flavoured shredded pork; mapo tofu; three "
                      "fresh vegetables")],
                  "Translated literally and kept the tofu and vegetable dishes.", "麻婆豆腐 (mapo tofu) and 地三鲜",
                  images=1))
    queries.append(qy("Can you tell me what these dishes are? The menu in the photo is in Greek.",
                      "translate a Greek menu", images=1,
                      caption="Greek taverna menu: Μουσακάς, Χωριάτικη σαλάτα, Σουβλάκι χοιρινό, Γαλακτομπούρεκο, "
                              "with prices in euros."))
    queries.append(qy("at a tasca in porto, whats on this menu and is anything veggie??", "menu translation and "
                      "dietary check", images=1))
    queries.append(qy("帮我翻译一下这张日本拉面店的菜单，哪些是素食？", "翻译菜单并找出素食", images=1, lang="zh",
                      caption="日文菜单照片：豚骨ラーメン、味噌ラーメン、餃子、枝豆、野菜ラーメン，带价格。"))
    queries.append(qy("What does this say?", "read a menu in a foreign language", images=1, caption_only=True,
                      caption="Chalkboard outside an Italian trattoria: 'Ossobuco alla milanese 22, Risotto allo "
                              "zafferano 14, Panna cotta 6'; the tourist wants to know what the dishes are."))
    queries.append(qy("I have a shellfish allergy - looking at this Korean menu photo, which items should I avoid "
                      "and what are they?", "translate a menu and flag allergens", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# receipt totals
# ----------------------------------------------------------------------------------------------------------------
SHOPS = [
    ("FreshMart", "US", [("Bananas 1.2 lb", 0.82), ("Greek yogurt", 5.49), ("Sourdough loaf", 6.25),
                         ("Eggs 12ct", 4.19), ("Olive oil 500ml", 9.99), ("Spinach", 3.49), ("Cheddar 8oz", 4.79)]),
    ("Trattoria Da Sergio", "US-rest", [("Margherita pizza", 16.0), ("Lasagna", 21.0), ("Caesar salad", 12.5),
                                        ("Tiramisu", 9.0), ("House red (glass)", 11.0), ("Sparkling water", 4.5)]),
    ("Café Lumen", "EU", [("Cappuccino", 3.6), ("Croissant", 2.4), ("Avocado toast", 8.9), ("Orange juice", 4.2),
                          ("Cheesecake", 5.5)]),
    ("Hardware Haus", "EU", [("Screws 4x40 (100)", 6.99), ("Drill bit set", 19.95), ("Wood glue", 5.49),
                             ("Sandpaper P120", 3.29), ("Tape measure 5m", 8.99)]),
    ("City Pharmacy", "US", [("Ibuprofen 200mg", 7.99), ("Band-aids", 4.49), ("Sunscreen SPF50", 12.99),
                             ("Toothpaste", 3.79), ("Vitamin C", 9.49)]),
    ("Sakura Sushi Bar", "US-rest", [("Salmon nigiri (2)", 7.5), ("Dragon roll", 15.0), ("Miso soup", 4.0),
                                     ("Edamame", 5.5), ("Green tea", 3.0), ("Tempura udon", 14.0)]),
]


def fam_receipt(rng):
    good, bad, queries = [], [], []
    kinds = ["total", "pretax", "split", "vat", "total", "split", "vat", "discount", "pretax", "total", "split"]
    for i, kind in enumerate(kinds):
        shop, reg, items = SHOPS[i % len(SHOPS)]
        if kind == "vat" and reg != "EU":
            shop, reg, items = SHOPS[2 + (i % 2)]
        if kind == "split" and reg != "US-rest":
            shop, reg, items = pick(rng, [SHOPS[1], SHOPS[5]])
        if kind in ("total", "pretax", "discount") and reg == "EU":
            shop, reg, items = pick(rng, [SHOPS[0], SHOPS[4]])
        lines = [(n, p, rng.randint(1, 3)) for n, p in pick(rng, items, rng.randint(3, min(5, len(items))))]
        sub = round(sum(p * q for _, p, q in lines), 2)
        lines_txt = "; ".join(f"{q} x {n} {p * q:.2f}" for n, p, q in lines)
        cur = "€" if reg == "EU" else "$"
        steps = [st("OCR the receipt, one line per item, keeping quantities.", "ocr", "image_1 (receipt)",
                    f"{shop} | {lines_txt} | SUBTOTAL {sub:.2f}")]
        steps.append(st("Re-add the item lines and compare with the printed subtotal to catch OCR digit errors.",
                        "python", "sum(qty * price for each line)", f"{sub:.2f} (matches printed subtotal)"))
        if kind in ("total", "pretax", "discount"):
            rate = pick(rng, [0.0625, 0.07, 0.08, 0.08875, 0.095])
            disc = round(sub * 0.1, 2) if kind == "discount" else 0.0
            tax = round((sub - disc) * rate, 2)
            total = round(sub - disc + tax, 2)
            steps.append(st("Apply the discount line (negative) before tax, then the sales tax.", "calculator",
                            f"({sub:.2f} - {disc:.2f}) * {rate} = tax; + tax", f"tax {tax:.2f}; total {total:.2f}"))
            if kind == "total":
                q = pick(rng, [f"What's the total on this {shop} receipt?", "How much did I pay in total "
                               f"at {shop}, according to this receipt?"])
                ans = f"{money(total, cur)} (subtotal {money(sub, cur)} + tax {money(tax, cur)})"
            elif kind == "pretax":
                q = pick(rng, [f"How much did I spend at {shop} before tax?",
                               f"What's the pre-tax amount on the {shop} receipt in the photo?"])
                ans = f"{money(sub, cur)} before tax (tax {money(tax, cur)}, total {money(total, cur)})"
            else:
                q = "The receipt shows a 10% member discount. What did I pay in the end?"
                ans = f"{money(total, cur)} (subtotal {money(sub, cur)} - discount {money(disc, cur)} + tax " \
                      f"{money(tax, cur)})"
        elif kind == "split":
            tip_pct, people = pick(rng, [15, 18, 20]), pick(rng, [2, 3, 4, 5])
            tax = round(sub * 0.08875, 2)
            tip = round(sub * tip_pct / 100, 2)
            each = round((sub + tax + tip) / people, 2)
            steps.append(st("Check the footer: some restaurants already add a service charge.", "ocr",
                            "image_1: bottom of the receipt", "'Gratuity not included' - no service charge line"))
            steps.append(st(f"Tip {tip_pct}% on the pre-tax subtotal, add tax, divide by {people}.", "calculator",
                            f"({sub:.2f} + {tax:.2f} + {sub:.2f} * {tip_pct / 100}) / {people}", f"{each:.2f}"))
            q = pick(rng, [f"We're {people} people. Split this restaurant bill evenly with a {tip_pct}% tip.",
                           f"How much does each of us ({people}) owe if we add {tip_pct}% tip to this bill?"])
            ans = f"{money(each, cur)} each (subtotal {money(sub, cur)}, tax {money(tax, cur)}, tip {money(tip, cur)})"
        else:
            rate = pick(rng, [0.19, 0.2, 0.21])
            vat = round(sub * rate / (1 + rate), 2)
            steps.append(st(f"Prices already include {int(rate * 100)}% VAT: the VAT share is total x r/(1+r), not "
                            "total x r.", "calculator", f"{sub:.2f} * {rate} / {1 + rate}", f"{vat:.2f}"))
            q = pick(rng, [f"How much VAT did I pay on this {shop} receipt?",
                           f"For my expense report: what's the VAT amount included in this {shop} receipt?"])
            ans = f"{money(vat, cur)} VAT included in the {money(sub, cur)} total ({int(rate * 100)}%)"
        reas = ("Every item line was OCR'd and re-added, and the sum was checked against the printed subtotal "
                "before anything else, which catches misread digits (3/8, 1/7) and missed quantity multipliers. "
                + {"total": "Tax was applied to the subtotal after any discount.",
                   "pretax": "The pre-tax amount is the subtotal; tax and total were reported for context.",
                   "discount": "The discount line is negative and comes before tax.",
                   "split": "Tip was computed on the pre-tax subtotal as is customary, then everything was divided "
                            "evenly.",
                   "vat": "European receipts show VAT-inclusive prices, so the VAT share is extracted with "
                          "r/(1+r)."}[kind])
        good.append(tr(q, "compute amounts from a receipt photo", steps, reas, ans, images=1,
                       caption=f"A photographed till receipt from {shop} with {len(lines)} item lines."))
    bad.append(tr("How much VAT is included in this café receipt (total €24.30, 19% VAT)?",
                  "compute amounts from a receipt photo",
                  [st("OCR.", "ocr", "image_1", "TOTAL 24.30 incl. 19% MwSt"),
                   st("VAT.", "calculator", "24.30 * 0.19", "4.62")],
                  "Multiplied the total by the VAT rate.", "€4.62", images=1))
    queries.append(qy("What did this grocery run cost me all in, tax included?", "add up a shopping receipt",
                      images=1, caption="Supermarket receipt: milk 3.29, coffee beans 11.99, apples 4.12, bread "
                                        "3.50; NY sales tax shown at the bottom."))
    queries.append(qy("4 of us had dinner, pls split this evenly w/ 20% tip", "split a restaurant check", images=1))
    queries.append(qy("这张德国超市小票里包含了多少增值税？", "计算小票中包含的增值税", images=1, lang="zh",
                      caption="德国超市收据，合计 € 37,85，注明含7%和19%增值税。"))
    queries.append(qy("Check this for me.", "receipt arithmetic", images=1, caption_only=True,
                      caption="Crumpled pharmacy receipt; the customer wrote 'did they charge me right? what should "
                              "the total be before tax?' next to five item lines."))
    queries.append(qy("Can you read the hardware store receipt and tell me the amount I was charged after the "
                      "coupon?", "compute a total after a coupon from a receipt", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# nutrition label reading
# ----------------------------------------------------------------------------------------------------------------
FOODS = [  # food, serving size (g), servings per container options
    ("granola", 45, [8, 10, 12]), ("peanut butter", 32, [14, 15]), ("tortilla chips", 28, [8, 10, 11]),
    ("oat milk", 240, [4, 4.5]), ("greek yogurt", 170, [1, 4, 5]), ("dark chocolate bar", 40, [2, 2.5]),
    ("frozen pizza", 125, [3, 3.5]), ("protein bar", 60, [1]), ("breakfast cereal", 40, [9, 12, 14]),
    ("hummus", 30, [6, 8, 10]), ("instant noodles", 85, [1, 2])]


def fam_nutrition(rng):
    good, bad, queries = [], [], []
    for i, (food, serving, options) in enumerate(FOODS):
        servings = pick(rng, options)
        kcal = rng.randint(90, 290)
        sugar = round(rng.uniform(0.5, 18), 1)
        protein = round(rng.uniform(1, 20), 1)
        sodium = rng.randint(40, 820)
        label = (f"Serving size {serving} g; servings per container about {fmt(servings)}; per serving: {kcal} kcal, "
                 f"sugars {sugar} g, protein {protein} g, sodium {sodium} mg")
        kind = ["package", "portion", "per100", "dv", "package", "portion"][i % 6]
        if kind == "package":
            q = pick(rng, [f"How many calories are in the whole package of this {food}?",
                           f"If I eat the entire container of {food}, how many calories is that?"])
            calc, res = f"{kcal} * {fmt(servings)}", kcal * servings
            ans = f"About {fmt(res, 0)} kcal ({kcal} kcal x {fmt(servings)} servings)"
        elif kind == "portion":
            g = pick(rng, [50, 60, 75, 100, 200])
            res = sugar * g / serving
            q = f"How much sugar is in {g} g of this {food}, according to the label?"
            calc = f"{sugar} * {g} / {serving}"
            ans = f"{fmt(res, 1)} g of sugar in {g} g ({sugar} g per {serving} g serving)"
        elif kind == "per100":
            res = protein * 100 / serving
            q = f"What's the protein content per 100 g of this {food}?"
            calc = f"{protein} * 100 / {serving}"
            ans = f"{fmt(res, 1)} g protein per 100 g"
        else:
            res = sodium / 2300 * 100
            q = f"What percentage of the daily sodium limit is one serving of this {food}?"
            calc = f"{sodium} / 2300 * 100"
            ans = f"{fmt(res, 0)}% of the 2,300 mg daily value ({sodium} mg per serving)"
        steps = [st("Read the nutrition facts panel, including serving size and servings per container.", "ocr",
                    "image_1 (nutrition label)", label),
                 st("Scale from the per-serving values; the label is not per package.", "calculator", calc,
                    fmt(res, 2))]
        if kind == "dv":
            steps.insert(1, st("Check the reference daily value for sodium.", "web_search", "FDA daily value sodium",
                               "Daily Value for sodium: 2,300 mg"))
        reas = ("Read serving size and servings per container before any number: label values are per serving, "
                "and 'about N servings' means the package total is approximate. Quantities were scaled "
                "proportionally by grams, and daily-value percentages used the FDA reference amount.")
        good.append(tr(q, "read and scale values from a nutrition label", steps, reas, ans, images=1,
                       caption=f"Photo of the nutrition facts panel on a {food} package."))
    bad.append(tr("How many calories are in this whole bag of chips?", "read and scale values from a nutrition label",
                  [st("Read label.", "ocr", "image_1", "Serving size 28 g; servings per container 8; 150 kcal per "
                      "serving"),
                   st("Answer.", "calculator", "150", "150")],
                  "Read the calories from the label.", "150 kcal", images=1))
    queries.append(qy("How many grams of protein per 100 g does this yogurt cup have?", "protein per 100 g from a "
                      "label", images=1, caption="Nutrition panel: serving 170 g, 15 g protein, 6 g sugars."))
    queries.append(qy("if i eat the whole box of crackers how many cals is that lol", "total calories in a "
                      "package", images=1))
    queries.append(qy("根据这张营养成分表，吃80克这个麦片会摄入多少糖？", "根据营养标签换算", images=1, lang="zh",
                      caption="营养成分表：每份40克，糖9克，热量150千卡。"))
    queries.append(qy("Is this a lot?", "nutrition label question", images=1, caption_only=True,
                      caption="Close-up of a soup can label: sodium 890 mg per serving, 2 servings per can; the user "
                              "wants the share of the daily sodium limit for the whole can."))
    queries.append(qy("From the label in my photo, how many calories would 3 of these cookies be?",
                      "calories for a number of servings", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# sign / licence plate OCR
# ----------------------------------------------------------------------------------------------------------------
L_UK = "ABCDEFGHJKLMNOPRSTUVWXY"


def _plate(rng, fmt_: str) -> str:
    if fmt_ == "UK":
        return (f"{pick(rng, L_UK)}{pick(rng, L_UK)}{rng.randint(10, 74)} "
                + "".join(pick(rng, "ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(3)))
    if fmt_ == "FR":
        return (f"{pick(rng, L_UK)}{pick(rng, L_UK)}-{rng.randint(100, 999)}-{pick(rng, L_UK)}{pick(rng, L_UK)}")
    if fmt_ == "CA":
        return f"{rng.randint(4, 9)}{''.join(pick(rng, L_UK) for _ in range(3))}{rng.randint(100, 999)}"
    return f"{pick(rng, ['M', 'B', 'HH', 'K'])} {pick(rng, L_UK)}{pick(rng, L_UK)} {rng.randint(100, 9999)}"


PLATE_RULES = {"UK": "two letters, two digits, space, three letters", "FR": "AA-123-AA",
               "CA": "one digit, three letters, three digits (California)",
               "DE": "district code, letters, up to four digits"}
SIGNS = [
    ("parking", "Parken Mo-Fr 8-18 h nur mit Parkschein, max. 2 Std.; Sa, So frei", "de",
     "Parking Mon-Fri 8:00-18:00 only with a ticket, max. 2 hours; free on Saturday and Sunday",
     "Can I park here for free on Sunday?", "Yes - parking is free on Saturdays and Sundays; on weekdays 8-18 you "
     "need a ticket (max 2 h)"),
    ("shop", "営業時間 10:00～20:00 定休日 水曜日", "ja", "Opening hours 10:00-20:00, closed on Wednesdays",
     "What are the opening hours on this shop sign, and which day is it closed?", "10:00-20:00; closed on "
     "Wednesdays"),
    ("street", "Rue du Faubourg Saint-Honoré - 8e Arrondissement", "fr",
     "Rue du Faubourg Saint-Honoré, 8th arrondissement", "Which street is this, and which district?",
     "Rue du Faubourg Saint-Honoré, in Paris's 8th arrondissement"),
    ("warning", "ATENCIÓN: Zona de desprendimientos. Prohibido el paso", "es",
     "CAUTION: rockfall zone. No entry", "What does this warning sign say?", "Caution - rockfall zone, no entry"),
    ("van", "Blue Lake Plumbing - 24/7 emergency - 0161 496 0732", "en", "",
     "What's the phone number written on the side of the van?", "0161 496 0732"),
]


def fam_sign(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for fmt_ in ["UK", "FR", "CA", "DE", "UK", "CA"]:
        plate = _plate(rng, fmt_)
        amb = plate.replace("O", "0", 1) if "O" in plate else plate.replace("1", "I", 1) if "1" in plate else \
            plate.replace("B", "8", 1) if "B" in plate else plate.replace("5", "S", 1)
        q = deck("plate", ["What is the licence plate number of the car in this photo?",
                           "Can you read the number plate of the parked car?",
                           "I need the registration number from this dashcam still.",
                           "A car blocked my driveway - what's its plate? (photo attached)",
                           "Transcribe the registration plate visible in this picture.",
                           "Which plate number is on the vehicle in the image?"])
        steps = [st("Crop and deskew the plate region.", "image_crop", "image_1: plate, perspective-corrected",
                    "plate region 412x96 px, sharpened"),
                 st("OCR the plate.", "ocr", "crop_1 (single line, uppercase)", f"'{amb}' (confidence 0.71)"),
                 st(f"Resolve look-alike characters with the {fmt_} plate format ({PLATE_RULES[fmt_]}).", "python",
                    f"validate_plate('{amb}', fmt='{fmt_}')",
                    f"'{plate}' - position-based fix of 0/O, 1/I, 8/B, 5/S" if amb != plate else f"'{plate}' valid")]
        reas = ("Cropped and deskewed the plate before OCR, then validated the string against the country's plate "
                "format, which decides between look-alike characters (0/O, 1/I, 8/B, 5/S) by position instead of "
                "guessing.")
        good.append(tr(q, "read a licence plate from a photo", steps, reas, plate, images=1,
                       caption=f"A photo of a car with a {fmt_} registration plate, taken at an angle."))
    for kind, text, lang, eng, q, ans in SIGNS:
        steps = [st("Crop the sign to reduce background clutter.", "image_crop", "image_1: sign", "sign cropped"),
                 st("OCR with the right language.", "ocr", f"crop_1 (lang={lang})", text)]
        if lang != "en":
            steps.append(st("Translate, keeping abbreviations (days, hours) exact.", "translate", f"{lang} -> en",
                            eng))
        else:
            steps.append(st("Check the number format (UK landline: 0 + area code + number).", "python",
                            "re.fullmatch(r'0\\d{3} \\d{3} \\d{4}', number)", "valid UK format"))
        reas = ("Cropped to the sign, OCR'd with the sign's language, then translated. Names, time ranges, "
                "weekday abbreviations and numbers were carried over exactly rather than paraphrased, since they "
                "are the point of the question.")
        good.append(tr(q, f"read and interpret a {kind} sign from a photo", steps, reas, ans, images=1,
                       caption=f"A photo of a {kind} sign" + (f" in {lang}." if lang != "en" else ".")))
    bad.append(tr("What's the number plate of the white car?", "read a licence plate from a photo",
                  [st("OCR the full image.", "ocr", "image_1", "'AB51 0KE' ... 'STOP'"),
                   st("Report.", "python", "print(text[0])", "AB51 0KE")],
                  "Read the plate with OCR.", "AB51 0KE", images=1,
                  caption="A white car with a UK plate photographed from the side."))
    queries.append(qy("Read the plate on the motorbike please.", "read a registration plate", images=1,
                      caption="A motorbike with a French plate photographed at night under a streetlight."))
    queries.append(qy("whats the phone number on that food truck sign?", "read a number from a sign", images=1))
    queries.append(qy("这块意大利语的牌子上写的是什么？周日可以停车吗？", "识别并翻译路牌", images=1, lang="zh",
                      caption="意大利路边停车标志：'Divieto di sosta 8-20 feriali'。"))
    queries.append(qy("Help me read this.", "sign OCR", images=1, caption_only=True,
                      caption="A blurry photo of a Dutch street sign 'Prinsengracht' with a house-number range "
                              "below; the user wants the street name and which numbers it covers."))
    queries.append(qy("My dashcam caught a car that hit mine; the plate is at an angle. Can you make out the "
                      "registration?", "read a number plate from an angled photo", images=1))
    return good, bad, queries
