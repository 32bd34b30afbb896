"""Families that convert units and rates: recipe-conversion, currency-conversion (invented rates),
molar-mass and physics-units."""

from __future__ import annotations

from datetime import date, timedelta

from .common import WEEKDAYS, fmt, longdate, pick, qy, st, tr

# ----------------------------------------------------------------------------------------------------------------
# recipe unit conversion / scaling
# ----------------------------------------------------------------------------------------------------------------
CUP = {"all-purpose flour": (120, "g"), "granulated sugar": (198, "g"), "brown sugar (packed)": (213, "g"),
       "butter": (227, "g"), "rolled oats": (89, "g"), "honey": (336, "g"), "cocoa powder": (84, "g"),
       "whole milk": (240, "ml"), "water": (240, "ml"), "vegetable oil": (240, "ml"), "chocolate chips": (170, "g"),
       "powdered sugar": (113, "g")}
RECIPES = [("banana bread", ["all-purpose flour", "granulated sugar", "butter"], 8, 350),
           ("chocolate chip cookies", ["all-purpose flour", "brown sugar (packed)", "chocolate chips"], 24, 375),
           ("brownies", ["cocoa powder", "granulated sugar", "butter"], 16, 350),
           ("pancakes", ["all-purpose flour", "whole milk", "granulated sugar"], 4, None),
           ("oatmeal cookies", ["rolled oats", "all-purpose flour", "brown sugar (packed)"], 18, 350),
           ("cornbread", ["all-purpose flour", "whole milk", "vegetable oil"], 9, 400),
           ("honey cake", ["honey", "all-purpose flour", "vegetable oil"], 12, 325),
           ("scones", ["all-purpose flour", "butter", "whole milk"], 8, 425),
           ("crêpes", ["all-purpose flour", "whole milk", "water"], 6, None),
           ("lemon drizzle cake", ["all-purpose flour", "granulated sugar", "powdered sugar"], 10, 350)]


def frac(x: float) -> str:
    """1.25 -> '1 1/4', 0.333 -> '1/3', 2.0 -> '2'."""
    whole = int(x + 1e-9)
    rest = x - whole
    parts = {0: "", 1 / 4: "1/4", 1 / 3: "1/3", 1 / 2: "1/2", 2 / 3: "2/3", 3 / 4: "3/4"}
    best = min(parts, key=lambda p: abs(p - rest))
    if abs(best - rest) > 0.02:
        return fmt(x)
    if not parts[best]:
        return str(whole)
    return f"{whole} {parts[best]}" if whole else parts[best]


def f_to_c(f: float) -> float:
    return (f - 32) * 5 / 9


def fam_recipe(rng):
    good, bad, queries = [], [], []
    for i, (name, ingr, serves, oven) in enumerate(RECIPES):
        amounts = [pick(rng, [0.25, 0.5, 0.75, 1, 1.5, 2, 2.25, 2.5, 3]) for _ in ingr]
        factor = pick(rng, [0.5, 1.5, 2, 2.5, 3])
        new_serves = serves * factor
        scaled = [a * factor for a in amounts]
        lines = "; ".join(f"{frac(a)} cup{'s' if a > 1 else ''} {n}" for a, n in zip(amounts, ingr, strict=True))
        conv = []
        for a, n in zip(scaled, ingr, strict=True):
            per, unit = CUP[n]
            conv.append((n, a, round(a * per / 5) * 5 if unit == "g" else round(a * per), unit))
        with_img = i % 3 == 0
        if with_img:
            q = (f"Here's a photo of a handwritten {name} recipe card (serves {serves}). Please scale it to "
                 f"{fmt(new_serves)} servings and give me the amounts in grams/ml"
                 + (" and the oven temperature in Celsius." if oven else "."))
        else:
            q = pick(rng, [f"My {name} recipe serves {serves} and uses {lines}. I need {fmt(new_serves)} servings - "
                           "what are the metric amounts?",
                           f"Convert this US {name} recipe to metric and multiply it by {fmt(factor)}: {lines}."
                           + (f" Oven at {oven}°F." if oven else ""),
                           f"Scale {lines} (a {name} recipe for {serves}) to feed {fmt(new_serves)}, in grams or "
                           "millilitres."])
        steps = []
        if with_img:
            steps.append(st("Read the ingredient list from the card.", "ocr", "image_1 (handwritten recipe card)",
                            f"{name.title()} - serves {serves}: {lines}" + (f"; bake at {oven}F" if oven else "")))
        steps.append(st(f"Scale every amount by {fmt(new_serves)}/{serves} = {fmt(factor)} before converting.",
                        "calculator", "; ".join(f"{fmt(a, 3)} * {fmt(factor)}" for a in amounts),
                        "; ".join(f"{fmt(a, 3)} cups" for a in scaled)))
        steps.append(st("Convert cups by ingredient density (a cup of flour is not a cup of sugar).",
                        "unit_converter", "; ".join(f"{fmt(a, 3)} US cup {n} -> {u}" for n, a, _, u in conv),
                        "; ".join(f"{n}: {fmt(a * CUP[n][0], 1)} {u}" for n, a, _, u in conv)))
        if oven:
            c = f_to_c(oven)
            steps.append(st("Convert the oven temperature.", "unit_converter", f"{oven} °F -> °C", f"{fmt(c, 1)} °C"))
        ans = "; ".join(f"{n}: {g} {u}" for n, _, g, u in conv)
        if with_img or factor > 2:
            steps.append(st("Round to amounts a kitchen scale / jug can measure.", "python",
                            "round(g / 5) * 5 for grams; round(ml) for liquids",
                            "; ".join(f"{n}: {g} {u}" for n, _, g, u in conv)))
        if oven:
            ans += f"; oven {round(f_to_c(oven) / 5) * 5} °C (fan oven about 20 °C lower)"
        reas = ("Scaled in cups first, then converted each ingredient with its own grams-per-cup figure "
                "(flour 120 g, sugar 198 g, butter 227 g per US cup) instead of a single volume factor; liquids were "
                "converted to millilitres (1 US cup = 240 ml). Results were rounded to practical kitchen amounts"
                + (" and the Fahrenheit oven setting was converted with (F - 32) x 5/9, rounded to the nearest 5 °C."
                   if oven else "."))
        good.append(tr(q, "convert and scale recipe quantities", steps, reas, ans, images=1 if with_img else 0,
                       caption=(f"A handwritten recipe card titled '{name.title()}' listing ingredients in cups"
                                + (f" and '{oven}F'." if oven else ".")) if with_img else None))
    bad.append(tr("How many grams is 2 1/2 cups of granulated sugar?", "convert recipe quantities",
                  [st("Convert cups to millilitres.", "unit_converter", "2.5 US cup -> ml", "591.5 ml"),
                   st("Assume 1 ml = 1 g.", "calculator", "591.5 * 1", "591.5")],
                  "Converted volume to millilitres and treated it as grams.", "About 590 g"))
    queries.append(qy("Need my mum's muffin recipe (makes 12) for 30 people. It says 2 cups flour, 3/4 cup sugar, "
                      "1 cup milk. Metric please!", "scale a recipe and convert to metric"))
    queries.append(qy("how many grams is 1 1/3 cups of cocoa?? and 3/4 cup honey", "cups to grams for baking"))
    queries.append(qy("这张食谱照片是美制单位，帮我把用量换算成克和毫升，并把烤箱温度换成摄氏度。", "换算食谱单位",
                      images=1, lang="zh", caption="食谱卡片：燕麦饼干，2杯燕麦、1杯红糖、1/2杯黄油，烤箱350F。"))
    queries.append(qy("Please convert this.", "recipe conversion", images=1, caption_only=True,
                      caption="Photo of a cookbook page: 'Pizza dough - 3 1/2 cups flour, 1 1/4 cups warm water, "
                              "2 tbsp olive oil; bake at 475F'. A note says 'metric, half batch'."))
    queries.append(qy("What is 425 degrees Fahrenheit in Celsius for my oven, and how much is 1.5 cups of "
                      "powdered sugar in grams?", "convert baking units"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# currency conversion on a date
# ----------------------------------------------------------------------------------------------------------------
USD_PER = {"EUR": 1.09, "GBP": 1.26, "JPY": 0.0071, "CHF": 1.11, "CNY": 0.14, "SEK": 0.095, "CAD": 0.74,
           "AUD": 0.67, "INR": 0.0121, "KRW": 0.00076, "BRL": 0.2, "MXN": 0.056, "THB": 0.0285, "PLN": 0.245,
           "NOK": 0.094, "SGD": 0.74, "HKD": 0.128, "CZK": 0.044, "ZAR": 0.054, "DKK": 0.146, "USD": 1.0}


def _rate_per_eur(rng, cur):
    if cur == "EUR":
        return 1.0
    r = USD_PER["EUR"] / USD_PER[cur] * rng.uniform(0.96, 1.04)
    return round(r, 4 if r < 10 else 2)


def fam_currency(rng):
    good, bad, queries = [], [], []
    pairs = [("EUR", "JPY"), ("GBP", "USD"), ("SEK", "GBP"), ("USD", "CHF"), ("CNY", "EUR"), ("AUD", "CAD"),
             ("EUR", "PLN"), ("INR", "USD"), ("KRW", "EUR"), ("BRL", "USD"), ("THB", "EUR")]
    for i, (a, b) in enumerate(pairs):
        d = date(2019, 1, 1) + timedelta(days=rng.randint(0, 5 * 365))
        if i % 4 == 2:
            while d.weekday() < 5:
                d += timedelta(days=1)
        fix = d
        while fix.weekday() >= 5:
            fix -= timedelta(days=1)
        amt = pick(rng, [45, 120, 250, 1890, 3500, 72.5, 640, 15000, 980])
        if a in ("KRW", "INR", "JPY"):
            amt *= 100
        ra, rb = _rate_per_eur(rng, a), _rate_per_eur(rng, b)
        res = amt / ra * rb
        cross = rb / ra
        with_img = i % 4 == 1
        if with_img:
            q = (f"This invoice is in {a}. What is the total in {b} at the reference rate on the invoice date?")
        else:
            q = pick(rng, [f"How much was {fmt(amt)} {a} worth in {b} on {d.isoformat()}?",
                           f"I was charged {fmt(amt)} {a} on {longdate(d)}. What was that in {b} at that day's "
                           "ECB reference rate?",
                           f"Convert {fmt(amt)} {a} to {b} using the exchange rate of {longdate(d)}."])
        steps = []
        if with_img:
            steps.append(st("Read amount, currency and date from the invoice.", "ocr", "image_1 (invoice)",
                            f"Invoice date {d.strftime('%d.%m.%Y')}; Total {fmt(amt)} {a} (incl. VAT)"))
        if fix != d:
            steps.append(st(f"{longdate(d)} is a {WEEKDAYS[d.weekday()]}; there is no fixing on weekends.",
                            "web_search", f"ECB reference rate {a} {b} {d.isoformat()}",
                            f"No reference rates published on {d.isoformat()} (weekend). Last fixing: "
                            f"{fix.isoformat()} ({WEEKDAYS[fix.weekday()]})."))
        legs = [c for c in (a, b) if c != "EUR"]
        steps.append(st("The ECB publishes rates against the euro; get both legs for the same fixing date."
                        if len(legs) == 2 else "Get the ECB euro reference rate for the fixing date.",
                        "browse_webpage", f"ECB euro foreign exchange reference rates, {fix.isoformat()}",
                        "; ".join(f"1 EUR = {fmt(ra if c == a else rb, 4)} {c}" for c in legs)))
        expr = (f"{fmt(amt)} / {fmt(ra, 4)} * {fmt(rb, 4)}" if len(legs) == 2 else
                f"{fmt(amt)} * {fmt(rb, 4)}" if a == "EUR" else f"{fmt(amt)} / {fmt(ra, 4)}")
        steps.append(st("Convert via the euro cross rate; keep the direction straight (divide by the rate of the "
                        "source currency).", "calculator", expr, fmt(res, 2)))
        ans = (f"About {fmt(res, 2)} {b} (1 {a} = {fmt(cross, 6 if cross < 0.01 else 4)} {b}, ECB reference rate "
               f"of {fix.isoformat()})")
        reas = ("Used the historical reference rate for the stated date rather than today's rate" +
                (", falling back to the previous business day's fixing because the date was a weekend" if fix != d
                 else "") + (". Because the ECB quotes everything per euro, the cross rate was built from two legs "
                             "of the same fixing" if len(legs) == 2 else ". The ECB quotes rates per euro") +
                ", and the direction was checked (divide by the per-euro rate of the source currency, multiply by "
                "that of the target). The answer states the rate and date used so it can be audited.")
        good.append(tr(q, "convert currency at a historical exchange rate", steps, reas, ans,
                       images=1 if with_img else 0,
                       caption=f"A scanned invoice with a total in {a} and an invoice date." if with_img else None))
    ra = _rate_per_eur(rng, "GBP")
    bad.append(tr("What was 500 EUR in GBP on 2021-06-15?", "convert currency at a historical exchange rate",
                  [st("Get the rate.", "web_search", "EUR GBP rate", f"1 EUR = {fmt(ra * 0.97, 4)} GBP (live)"),
                   st("Convert.", "calculator", f"500 / {fmt(ra * 0.97, 4)}", fmt(500 / (ra * 0.97), 2))],
                  "Looked up the rate and converted.", f"{fmt(500 / (ra * 0.97), 2)} GBP"))
    queries.append(qy("Back on 3 March 2022 I paid 2,400 Norwegian kroner for a cabin. Roughly how many US "
                      "dollars was that at the time?", "historical FX conversion"))
    queries.append(qy("quick one: 15k yen -> euros on sat 14 oct 2023?", "convert money using a past rate"))
    queries.append(qy("2021年8月20日的汇率下，3000港币相当于多少人民币？", "按历史汇率换算货币", lang="zh"))
    queries.append(qy("What does this come to in my currency?", "currency conversion", images=1, caption_only=True,
                      caption="Photo of a hotel bill from Prague dated 11.09.2020, total 8 450 CZK; a sticky note "
                              "says 'in Danish kroner please'."))
    queries.append(qy("My Singapore client paid an invoice of SGD 6,300 on 30 November 2023; how much is that "
                      "in Swiss francs at that day's reference rate?", "convert an invoice amount at the rate on "
                      "its date"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# chemistry: molar mass and solutions
# ----------------------------------------------------------------------------------------------------------------
ATOMIC = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "Na": 22.990, "Mg": 24.305, "P": 30.974, "S": 32.06,
          "Cl": 35.45, "K": 39.098, "Ca": 40.078, "Mn": 54.938, "Fe": 55.845, "Cu": 63.546}
COMPOUNDS = [
    ("glucose", "C6H12O6", {"C": 6, "H": 12, "O": 6}), ("caffeine", "C8H10N4O2", {"C": 8, "H": 10, "N": 4, "O": 2}),
    ("aspirin (acetylsalicylic acid)", "C9H8O4", {"C": 9, "H": 8, "O": 4}),
    ("sodium bicarbonate", "NaHCO3", {"Na": 1, "H": 1, "C": 1, "O": 3}),
    ("calcium carbonate", "CaCO3", {"Ca": 1, "C": 1, "O": 3}), ("sulfuric acid", "H2SO4", {"H": 2, "S": 1, "O": 4}),
    ("potassium permanganate", "KMnO4", {"K": 1, "Mn": 1, "O": 4}),
    ("copper(II) sulfate pentahydrate", "CuSO4·5H2O", {"Cu": 1, "S": 1, "O": 9, "H": 10}),
    ("ammonium nitrate", "NH4NO3", {"N": 2, "H": 4, "O": 3}),
    ("magnesium sulfate heptahydrate (Epsom salt)", "MgSO4·7H2O", {"Mg": 1, "S": 1, "O": 11, "H": 14}),
    ("iron(III) oxide", "Fe2O3", {"Fe": 2, "O": 3}), ("sucrose", "C12H22O11", {"C": 12, "H": 22, "O": 11}),
]


def molar_mass(comp: dict) -> float:
    return sum(ATOMIC[e] * n for e, n in comp.items())


def fam_chem(rng):
    good, bad, queries = [], [], []
    for i, (name, formula, comp) in enumerate(COMPOUNDS):
        mm = molar_mass(comp)
        expr = " + ".join(f"{n}*{ATOMIC[e]}" for e, n in comp.items())
        kind = ["mm", "solution", "moles", "mm"][i % 4]
        with_img = i % 5 == 4
        steps = [st("Get the correct formula (watch for hydrates and charges).", "web_search",
                    f"{name} chemical formula PubChem", f"{name}: {formula}")]
        if with_img:
            steps.insert(0, st("Read the label on the reagent bottle.", "ocr", "image_1 (bottle label)",
                               f"{name.upper()} {formula}  ACS reagent  500 g"))
        steps.append(st("Sum standard atomic weights in code.", "python", expr, f"{fmt(mm, 3)} g/mol"))
        if kind == "mm":
            q = pick(rng, [f"What is the molar mass of {name}?", f"Calculate the molecular weight of {formula}.",
                           f"Molar mass of {name} ({formula}) in g/mol?"])
            ans = f"{fmt(mm, 2)} g/mol"
            sub = "compute a molar mass"
        elif kind == "solution":
            vol, conc = pick(rng, [100, 250, 500, 1000]), pick(rng, [0.05, 0.1, 0.2, 0.5, 1.0])
            grams = mm * conc * vol / 1000
            q = f"How many grams of {name} do I need to make {vol} mL of a {fmt(conc)} M solution?"
            steps.append(st("mass = M x c x V, with V in litres.", "calculator", f"{fmt(mm, 3)} * {fmt(conc)} * "
                            f"{vol}/1000", fmt(grams, 3)))
            ans = f"{fmt(grams, 2)} g (molar mass {fmt(mm, 2)} g/mol)"
            sub = "compute mass needed for a molar solution"
        else:
            g = pick(rng, [2.5, 5, 10, 25, 50])
            q = f"How many moles are in {fmt(g)} g of {name}?"
            steps.append(st("n = m / M.", "calculator", f"{fmt(g)} / {fmt(mm, 3)}", fmt(g / mm, 5)))
            ans = f"{fmt(g / mm, 4)} mol (M = {fmt(mm, 2)} g/mol)"
            sub = "convert mass to moles"
        if with_img:
            q = "Using the compound on this bottle: " + q[0].lower() + q[1:]
        reas = ("Confirmed the exact formula first - hydrates such as ·5H2O add a lot of mass and are easy to miss - "
                "then summed IUPAC standard atomic weights in code instead of by hand. Volumes were converted from "
                "mL to L before multiplying, and the result was rounded to sensible significant figures.")
        good.append(tr(q, sub, steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A brown reagent bottle labelled '{name}, {formula}'." if with_img else None))
    bad_mm = molar_mass({"Cu": 1, "S": 1, "O": 4})
    bad.append(tr("How many grams of copper(II) sulfate pentahydrate for 250 mL of 0.1 M solution?",
                  "compute mass needed for a molar solution",
                  [st("Molar mass of CuSO4.", "python", "63.546 + 32.06 + 4*15.999", fmt(bad_mm, 3)),
                   st("Mass.", "calculator", f"{fmt(bad_mm, 3)} * 0.1 * 0.25", fmt(bad_mm * 0.025, 3))],
                  "Computed the molar mass of copper sulfate and multiplied by c and V.",
                  f"{fmt(bad_mm * 0.025, 2)} g"))
    queries.append(qy("What's the molecular weight of ibuprofen (C13H18O2)?", "molecular weight calculation"))
    queries.append(qy("need to make 500ml of 0.25M NaCl, how many grams do i weigh out", "mass for a solution"))
    queries.append(qy("10克柠檬酸（C6H8O7）是多少摩尔？", "质量换算为物质的量", lang="zh"))
    queries.append(qy("Work this out please.", "chemistry calculation", images=1, caption_only=True,
                      caption="Photo of a lab notebook: 'Urea CH4N2O - need 2 L of 0.3 M - mass?'"))
    queries.append(qy("Calculate the formula mass of the hydrated salt sodium carbonate decahydrate, "
                      "Na2CO3·10H2O.", "molar mass of a hydrate"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# physics problems with unit conversion
# ----------------------------------------------------------------------------------------------------------------
def _phys(rng, kind):
    if kind == "speed":
        v = pick(rng, [90, 144, 216, 288, 320])
        return (pick(rng, [f"A high-speed train runs at {v} km/h. What is that in metres per second?",
                           f"Convert {v} km/h to m/s for my physics homework."]),
                f"{v} km/h -> m/s", f"{fmt(v / 3.6, 3)} m/s", f"{v} / 3.6", f"{fmt(v / 3.6, 2)} m/s",
                "1 km/h = 1/3.6 m/s")
    if kind == "ke":
        m_g, v = pick(rng, [(145, 150), (58, 200), (430, 110), (160, 140)])
        ke = 0.5 * m_g / 1000 * (v / 3.6) ** 2
        return (f"A {m_g} g ball travels at {v} km/h. What is its kinetic energy in joules?",
                f"{m_g} g -> kg; {v} km/h -> m/s", f"{m_g / 1000} kg; {fmt(v / 3.6, 4)} m/s",
                f"0.5 * {m_g / 1000} * ({fmt(v / 3.6, 4)})**2", f"{fmt(ke, 1)} J",
                "SI units first: grams to kg and km/h to m/s, and the speed is squared")
    if kind == "kettle":
        p, vol, t0 = pick(rng, [1.5, 2.0, 2.2, 3.0]), pick(rng, [0.5, 1.0, 1.5, 1.7]), pick(rng, [10, 15, 20])
        q = vol * 4186 * (100 - t0)
        return (f"How long does a {fmt(p)} kW kettle take to heat {fmt(vol)} L of water from {t0} °C to boiling, "
                "ignoring losses?", f"{fmt(vol)} L water -> kg; {fmt(p)} kW -> W", f"{fmt(vol)} kg; {fmt(p * 1000)} W",
                f"{fmt(vol)} * 4186 * (100 - {t0}) / {fmt(p * 1000)}",
                f"{fmt(q / (p * 1000), 0)} s (about {fmt(q / (p * 1000) / 60, 1)} min)",
                "Q = m c dT with c = 4186 J/(kg K), and kW must become W")
    if kind == "pressure":
        psi = pick(rng, [30, 32, 35, 42, 100])
        return (f"My tyre gauge says {psi} psi. What is that in kPa and in bar?", f"{psi} psi -> kPa",
                f"{fmt(psi * 6.894757, 2)} kPa", f"{fmt(psi * 6.894757, 2)} / 100", f"{fmt(psi * 6.894757, 1)} kPa = "
                f"{fmt(psi * 0.06894757, 2)} bar", "1 psi = 6.894757 kPa and 1 bar = 100 kPa")
    if kind == "torque":
        t = pick(rng, [25, 40, 80, 100, 150])
        return (f"The manual says to tighten the wheel nuts to {t} ft-lb. What is that in newton-metres?",
                f"{t} lbf*ft -> N*m", f"{fmt(t * 1.355818, 2)} N*m", f"{t} * 1.355818", f"{fmt(t * 1.355818, 1)} N*m",
                "ft-lb here means pound-force feet")
    if kind == "energy":
        kwh, price = pick(rng, [2.5, 7.2, 12, 30]), pick(rng, [0.28, 0.32, 0.4])
        return (f"An appliance used {fmt(kwh)} kWh. How many megajoules is that, and what does it cost at "
                f"€{price}/kWh?", f"{fmt(kwh)} kWh -> MJ", f"{fmt(kwh * 3.6, 2)} MJ", f"{fmt(kwh)} * {price}",
                f"{fmt(kwh * 3.6, 2)} MJ; €{fmt(kwh * price, 2)}", "1 kWh = 3.6 MJ")
    if kind == "weight":
        lb = pick(rng, [120, 150, 180, 220])
        n = lb * 0.45359237 * 9.80665
        return (f"What is the weight in newtons of a person whose mass is {lb} lb?", f"{lb} lb -> kg",
                f"{fmt(lb * 0.45359237, 3)} kg", f"{fmt(lb * 0.45359237, 4)} * 9.80665", f"{fmt(n, 0)} N",
                "lb is a mass unit here; weight = m g in SI")
    ly = pick(rng, [4.24, 8.6, 25, 640])
    return (f"A star is {fmt(ly)} light-years away. How far is that in kilometres?", f"{fmt(ly)} ly -> km",
            f"{ly * 9.4607e12:.4e} km", f"{fmt(ly)} * 9.4607e12", f"{ly * 9.4607e12:.3e} km",
            "1 light-year = 9.4607e12 km (a distance, not a time)")


def fam_physics(rng):
    good, bad, queries = [], [], []
    kinds = ["speed", "ke", "kettle", "pressure", "torque", "energy", "weight", "lightyear", "ke", "kettle", "speed"]
    seen = set()
    for kind in kinds:
        while True:
            q, conv_in, conv_out, expr, ans, key = _phys(rng, kind)
            if q not in seen:
                seen.add(q)
                break
        steps = [st(f"Convert to SI first: {key}.", "unit_converter", conv_in, conv_out),
                 st("Compute with consistent units.", "calculator", expr, ans),
                 st("Dimensional/order-of-magnitude check.", "python", "check units and magnitude", "consistent")]
        reas = (f"Converted every quantity to SI before using any formula ({key}), then computed and checked the "
                "result's units and order of magnitude. Mixing non-SI units inside a formula is the usual source of "
                "errors in these problems.")
        good.append(tr(q, "solve a physics problem with unit conversion", steps, reas, ans))
    bad.append(tr("A 145 g baseball moves at 150 km/h. Kinetic energy?", "solve a physics problem with unit "
                  "conversion", [st("Plug in.", "calculator", "0.5 * 145 * 150**2", "1631250"),
                                 st("Done.", "python", "print(1631250)", "1631250")],
                  "Applied KE = 1/2 m v^2.", "1,631,250 J"))
    queries.append(qy("A sprinter hits 37 km/h. How many m/s is that?", "speed unit conversion"))
    queries.append(qy("bike pump says 6.5 bar, whats that in psi", "pressure conversion"))
    queries.append(qy("功率为800瓦的微波炉把0.3升水从20°C加热到80°C至少需要多少秒？", "物理计算与单位换算",
                      lang="zh"))
    queries.append(qy("Solve the exercise shown.", "physics homework", images=1, caption_only=True,
                      caption="Photo of a physics exercise: 'A car engine delivers 150 hp. Express the power in "
                              "kilowatts.'"))
    queries.append(qy("If I lift a 20 kg box up 10 feet, how much work do I do in joules?", "work/energy with "
                      "imperial units"))
    return good, bad, queries
